// The benchmark harness shared by `argusc run` and `argus-replay`: device
// buffers for a kernel's tensors, one checked run, the comparison of its
// outputs with a reference, and event-timed repeated runs with the outputs
// poisoned before each one (so an unwritten element can never pass).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu_runtime.h"
#include "launch_metadata.h"

namespace argus::gpu {

// How a kernel uses a tensor: read only, written only (poisoned before every
// run), or both (its input is uploaded again before every run).
enum class TensorRole : uint8_t { Input, Output, InOut };
const char* tensorRoleName(TensorRole role);
std::optional<TensorRole> tensorRoleFromName(const std::string& name);

struct BenchTensor {
  std::string name;
  HostDType dtype;
  std::vector<int64_t> shape;
  TensorRole role = TensorRole::InOut;
  std::vector<uint8_t> input;     // contents before the run (ignored for outputs)
  std::vector<uint8_t> expected;  // the reference result; empty when there is none
  size_t elements() const;
};

struct Comparison {
  std::string tensor;
  bool passed = true;
  double relativeError = 0;  // ||got - want|| / ||want|| (absolute when want is all zeros)
  double tolerance = 0;
  size_t elements = 0;
  size_t mismatches = 0;     // elements that differ at all
  size_t unwritten = 0;      // differing elements that still hold the poison pattern
  std::vector<int64_t> worstCoord;  // empty when every element matches exactly
  double worstGot = 0, worstWant = 0;
  // One line: "out: ok, relative error 1.2e-07 (tolerance 1e-05)" or the failure
  // with the worst element's coordinates.
  std::string describe() const;
};

// NaN matches NaN and an infinity itself; any other non-finite difference fails.
Comparison compareTensor(const std::string& name, const HostDType& dtype, const std::vector<int64_t>& shape,
                         const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, double tolerance);

// Elements whose bytes are all the poison byte (written by nobody, most likely).
size_t countPoisoned(const HostDType& dtype, const std::vector<uint8_t>& bytes);

struct TimingStats {
  size_t runs = 0;
  double medianMs = 0, minMs = 0, maxMs = 0, meanMs = 0;
};
TimingStats summarizeTimes(const std::vector<float>& ms);

// "median 0.0123 ms, min 0.0119 ms (50 runs)\nbandwidth ..." lines for a report;
// `flops` is the user's count of operations per run, when given.
std::string formatTiming(const TimingStats& stats, double bytesMoved, std::optional<double> flops);

class BenchRun {
 public:
  // Binds every tensor parameter of `kernel` to the BenchTensor of the same
  // name (which must have the planned shape), uploads the inputs. `tensors`
  // must outlive the BenchRun.
  static std::unique_ptr<BenchRun> create(GpuRuntime& runtime, std::shared_ptr<GpuKernel> gpuKernel,
                                          const KernelMeta& kernel, const std::map<std::string, int64_t>& sizes,
                                          const std::vector<BenchTensor>& tensors,
                                          const std::map<std::string, std::vector<uint8_t>>& scalars,
                                          std::string& error);

  const LaunchPlan& plan() const { return plan_; }
  // Bytes of all tensors read and written once (inputs + outputs, in/out twice).
  double bytesMoved() const;
  // Poisons the outputs, restores in/out tensors, launches, waits, and
  // downloads every tensor (in the order of `tensors` given to create()).
  bool runOnce(std::vector<std::vector<uint8_t>>& results, std::string& error);
  // `warmup` untimed runs, then `repeat` runs each timed with events; outputs
  // poisoned and in/out tensors restored before each (outside the timed region).
  bool time(int warmup, int repeat, std::vector<float>& ms, std::string& error);

 private:
  BenchRun(GpuRuntime& runtime, std::shared_ptr<GpuKernel> kernel) : runtime_(runtime), gpuKernel_(std::move(kernel)) {}
  bool prepare(std::string& error);
  bool launch(std::string& error);

  GpuRuntime& runtime_;
  std::shared_ptr<GpuKernel> gpuKernel_;
  LaunchPlan plan_;
  KernelArgs args_;
  std::vector<const BenchTensor*> tensors_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;  // parallel to tensors_
};

// Reads a whole file (binary); false with `error` when it cannot.
bool readFileBytes(const std::string& path, std::string& out, std::string& error);

}  // namespace argus::gpu
