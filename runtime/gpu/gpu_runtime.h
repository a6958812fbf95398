// A small runtime over the CUDA driver API: open a device, load PTX or cubin,
// launch kernels with grid/block/dynamic shared memory and packed arguments,
// own device memory (RAII), time with events. Every CUDA call's result is
// checked and a failure becomes a message naming the CUDA error; nothing here
// throws or prints. Objects keep the runtime's state alive, so they may
// outlive the GpuRuntime they came from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// Includes inside runtime/gpu name their siblings relative to this folder, so
// that argus-replay builds with a bare g++ line (see tools/argus_replay.cpp).
#include "cuda_api.h"
#include "kernel_args.h"
#include "tensor_map.h"

namespace argus::gpu {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  int maxSharedPerBlockOptin = 0;  // bytes a block may opt in to
  // "sm_90" for 9.x, "sm_80" for 8.x (Argus's targets; PTX for sm_90 also runs,
  // through the driver's JIT, on newer GPUs); empty below 8.0.
  std::string argusArch() const;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct RuntimeState;  // the driver API and the device's primary context (gpu_runtime.cpp)

// Device memory, freed when the buffer goes away.
class DeviceBuffer {
 public:
  DeviceBuffer(std::shared_ptr<RuntimeState> state, cu::DevicePtr ptr, size_t bytes)
      : state_(std::move(state)), ptr_(ptr), bytes_(bytes) {}
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  cu::DevicePtr address() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  bool upload(const void* data, size_t bytes, std::string& error);
  bool download(void* data, size_t bytes, std::string& error) const;
  bool fill(uint8_t byte, std::string& error);  // every byte (asynchronous on the default stream)

 private:
  std::shared_ptr<RuntimeState> state_;
  cu::DevicePtr ptr_;
  size_t bytes_;
};

struct KernelResources {
  int registers = 0;          // per thread
  int localBytes = 0;         // per thread (spills and local arrays)
  int staticSharedBytes = 0;  // per block
};

class GpuModule;

// A kernel of a loaded module (keeps the module loaded).
class GpuKernel {
 public:
  GpuKernel(std::shared_ptr<RuntimeState> state, std::shared_ptr<GpuModule> module, cu::Function fn,
            std::string name)
      : state_(std::move(state)), module_(std::move(module)), fn_(fn), name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  cu::Function handle() const { return fn_; }
  // Lets launches ask for more than 48 KiB of dynamic shared memory.
  bool setMaxDynamicSharedBytes(int bytes, std::string& error);
  bool resources(KernelResources& out, std::string& error) const;

 private:
  std::shared_ptr<RuntimeState> state_;
  std::shared_ptr<GpuModule> module_;
  cu::Function fn_;
  std::string name_;
};

class GpuModule : public std::enable_shared_from_this<GpuModule> {
 public:
  GpuModule(std::shared_ptr<RuntimeState> state, cu::Module module) : state_(std::move(state)), module_(module) {}
  ~GpuModule();
  GpuModule(const GpuModule&) = delete;
  GpuModule& operator=(const GpuModule&) = delete;
  // Null with `error` set when the module has no kernel of that name.
  std::unique_ptr<GpuKernel> kernel(const std::string& name, std::string& error);

 private:
  std::shared_ptr<RuntimeState> state_;
  cu::Module module_;
};

// A pair of events around a region of work on the default stream.
class EventTimer {
 public:
  EventTimer(std::shared_ptr<RuntimeState> state, cu::Event start, cu::Event stop)
      : state_(std::move(state)), start_(start), stop_(stop) {}
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  bool start(std::string& error);
  bool stop(std::string& error);
  // Waits for the stop event; the milliseconds between the two events.
  bool elapsedMs(float& ms, std::string& error);

 private:
  std::shared_ptr<RuntimeState> state_;
  cu::Event start_, stop_;
};

struct OpenOptions {
  std::string driverLibrary = "libcuda.so.1";  // tests inject a missing name
  int device = 0;
};

class GpuRuntime {
 public:
  // The runtime on one device, or null with `error` saying why ("no NVIDIA
  // driver: libcuda.so.1 not found", "no CUDA device", ...).
  static std::unique_ptr<GpuRuntime> open(std::string& error, const OpenOptions& options = {});

  const DeviceInfo& device() const { return device_; }

  // PTX text (loaded through the driver's JIT, whose error log becomes part of
  // the message) or a cubin (an ELF image).
  std::shared_ptr<GpuModule> loadModule(const std::string& image, std::string& error);
  std::unique_ptr<DeviceBuffer> allocate(size_t bytes, std::string& error);
  std::unique_ptr<EventTimer> createTimer(std::string& error);

  // Launches on the default stream; checks the configuration first, then the
  // launch call's own result (execution faults surface at synchronize()).
  bool launch(const GpuKernel& kernel, Dim3 grid, Dim3 block, unsigned dynamicSharedBytes,
              KernelArgs& args, std::string& error);
  bool synchronize(std::string& error);
  // Encodes TMA tensor maps with this runtime's driver (keeps the runtime's
  // state alive, like the objects above).
  TensorMapEncoder tensorMapEncoder() const;

 private:
  explicit GpuRuntime(std::shared_ptr<RuntimeState> state, DeviceInfo device)
      : state_(std::move(state)), device_(std::move(device)) {}
  std::shared_ptr<RuntimeState> state_;
  DeviceInfo device_;
};

}  // namespace argus::gpu
