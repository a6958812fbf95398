// The CUDA driver runtime (see gpu_runtime.h).
#include "gpu_runtime.h"

#include <cstring>

namespace argus::gpu {

struct RuntimeState {
  std::shared_ptr<const CudaApi> api;
  cu::Device device = 0;
  cu::Context context = nullptr;

  ~RuntimeState() {
    if (context) api->primaryCtxRelease(device);
  }
  // Every entry point makes the context current first: the calling thread may
  // not be the one that opened the runtime.
  bool makeCurrent(std::string& error) const {
    return api->check(api->ctxSetCurrent(context), "cannot make the CUDA context current", error);
  }
};

std::string DeviceInfo::argusArch() const {
  // sm_90a's instructions (wgmma, TMA, mbarrier waits) run on compute capability 9.0 exactly;
  // later GPUs run sm_90 PTX through the JIT.
  if (major == 9 && minor == 0) return "sm_90a";
  if (major >= 9) return "sm_90";
  if (major == 8) return "sm_80";
  return "";
}

// ---------------------------------------------------------------- DeviceBuffer

DeviceBuffer::~DeviceBuffer() {
  std::string ignored;
  if (ptr_ && state_->makeCurrent(ignored)) state_->api->memFree(ptr_);
}

bool DeviceBuffer::upload(const void* data, size_t bytes, std::string& error) {
  if (bytes > bytes_) {
    error = "upload of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(bytes_);
    return false;
  }
  if (bytes == 0) return true;
  return state_->makeCurrent(error) &&
         state_->api->check(state_->api->memcpyHtoD(ptr_, data, bytes), "copy to the GPU failed", error);
}

bool DeviceBuffer::download(void* data, size_t bytes, std::string& error) const {
  if (bytes > bytes_) {
    error = "download of " + std::to_string(bytes) + " bytes from a buffer of " + std::to_string(bytes_);
    return false;
  }
  if (bytes == 0) return true;
  return state_->makeCurrent(error) &&
         state_->api->check(state_->api->memcpyDtoH(data, ptr_, bytes), "copy from the GPU failed", error);
}

bool DeviceBuffer::fill(uint8_t byte, std::string& error) {
  if (bytes_ == 0) return true;
  return state_->makeCurrent(error) &&
         state_->api->check(state_->api->memsetD8(ptr_, byte, bytes_), "filling GPU memory failed", error);
}

// ---------------------------------------------------------------- modules, kernels

GpuModule::~GpuModule() {
  std::string ignored;
  if (module_ && state_->makeCurrent(ignored)) state_->api->moduleUnload(module_);
}

std::unique_ptr<GpuKernel> GpuModule::kernel(const std::string& name, std::string& error) {
  if (!state_->makeCurrent(error)) return nullptr;
  cu::Function fn = nullptr;
  if (!state_->api->check(state_->api->moduleGetFunction(&fn, module_, name.c_str()),
                          "the module has no kernel '" + name + "'", error))
    return nullptr;
  return std::make_unique<GpuKernel>(state_, shared_from_this(), fn, name);
}

bool GpuKernel::setMaxDynamicSharedBytes(int bytes, std::string& error) {
  return state_->makeCurrent(error) &&
         state_->api->check(state_->api->funcSetAttribute(fn_, cu::kFuncAttrMaxDynamicSharedSizeBytes, bytes),
                            "kernel '" + name_ + "' cannot use " + std::to_string(bytes) +
                                " bytes of dynamic shared memory",
                            error);
}

bool GpuKernel::resources(KernelResources& out, std::string& error) const {
  if (!state_->makeCurrent(error)) return false;
  const CudaApi& api = *state_->api;
  return api.check(api.funcGetAttribute(&out.registers, cu::kFuncAttrNumRegs, fn_), "querying registers", error) &&
         api.check(api.funcGetAttribute(&out.localBytes, cu::kFuncAttrLocalSizeBytes, fn_), "querying local memory",
                   error) &&
         api.check(api.funcGetAttribute(&out.staticSharedBytes, cu::kFuncAttrSharedSizeBytes, fn_),
                   "querying shared memory", error);
}

// ---------------------------------------------------------------- events

EventTimer::~EventTimer() {
  std::string ignored;
  if (!state_->makeCurrent(ignored)) return;
  if (start_) state_->api->eventDestroy(start_);
  if (stop_) state_->api->eventDestroy(stop_);
}

bool EventTimer::start(std::string& error) {
  return state_->makeCurrent(error) &&
         state_->api->check(state_->api->eventRecord(start_, nullptr), "recording an event failed", error);
}

bool EventTimer::stop(std::string& error) {
  return state_->makeCurrent(error) &&
         state_->api->check(state_->api->eventRecord(stop_, nullptr), "recording an event failed", error);
}

bool EventTimer::elapsedMs(float& ms, std::string& error) {
  const CudaApi& api = *state_->api;
  // A fault of the timed kernel surfaces here, at the first synchronization.
  return state_->makeCurrent(error) &&
         api.check(api.eventSynchronize(stop_), "the timed GPU work failed", error) &&
         api.check(api.eventElapsedTime(&ms, start_, stop_), "reading the event timer failed", error);
}

// ---------------------------------------------------------------- GpuRuntime

std::unique_ptr<GpuRuntime> GpuRuntime::open(std::string& error, const OpenOptions& options) {
  std::shared_ptr<const CudaApi> api = CudaApi::load(options.driverLibrary, error);
  if (!api) return nullptr;
  cu::Result r = api->init(0);
  if (r == cu::kErrorNoDevice) {
    error = "no CUDA device (the NVIDIA driver is installed but reports no GPU)";
    return nullptr;
  }
  if (!api->check(r, "the NVIDIA driver failed to initialize", error)) return nullptr;
  int count = 0;
  if (!api->check(api->deviceGetCount(&count), "cannot count CUDA devices", error)) return nullptr;
  if (count == 0) {
    error = "no CUDA device (the NVIDIA driver is installed but reports no GPU)";
    return nullptr;
  }
  if (options.device < 0 || options.device >= count) {
    error = "no CUDA device " + std::to_string(options.device) + " (there are " + std::to_string(count) + ")";
    return nullptr;
  }
  auto state = std::make_shared<RuntimeState>();
  state->api = api;
  if (!api->check(api->deviceGet(&state->device, options.device), "cannot open CUDA device", error)) return nullptr;
  DeviceInfo info;
  info.ordinal = options.device;
  char name[256] = {};
  if (!api->check(api->deviceGetName(name, sizeof name - 1, state->device), "cannot read the device name", error) ||
      !api->check(api->deviceGetAttribute(&info.major, cu::kAttrComputeCapabilityMajor, state->device),
                  "cannot read the compute capability", error) ||
      !api->check(api->deviceGetAttribute(&info.minor, cu::kAttrComputeCapabilityMinor, state->device),
                  "cannot read the compute capability", error) ||
      !api->check(api->deviceGetAttribute(&info.multiprocessors, cu::kAttrMultiprocessorCount, state->device),
                  "cannot read the multiprocessor count", error) ||
      !api->check(api->deviceGetAttribute(&info.maxSharedPerBlockOptin, cu::kAttrMaxSharedPerBlockOptin,
                                          state->device),
                  "cannot read the shared memory limit", error))
    return nullptr;
  info.name = name;
  if (!api->check(api->primaryCtxRetain(&state->context, state->device), "cannot create a CUDA context", error)) {
    state->context = nullptr;
    return nullptr;
  }
  if (!state->makeCurrent(error)) return nullptr;
  return std::unique_ptr<GpuRuntime>(new GpuRuntime(std::move(state), std::move(info)));
}

std::shared_ptr<GpuModule> GpuRuntime::loadModule(const std::string& image, std::string& error) {
  if (image.empty()) {
    error = "the module image is empty";
    return nullptr;
  }
  if (!state_->makeCurrent(error)) return nullptr;
  bool isElf = image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
  // PTX must be NUL-terminated for the driver; std::string::c_str() is.
  const void* data = isElf ? static_cast<const void*>(image.data()) : static_cast<const void*>(image.c_str());
  std::vector<char> errorLog(16384, '\0');
  int options[] = {cu::kJitErrorLogBuffer, cu::kJitErrorLogBufferSizeBytes};
  void* values[] = {errorLog.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(errorLog.size() - 1))};
  cu::Module module = nullptr;
  cu::Result r = state_->api->moduleLoadDataEx(&module, data, 2, options, values);
  if (r != cu::kSuccess) {
    error = std::string(isElf ? "loading the cubin failed: " : "the driver could not compile the PTX: ") +
            state_->api->describe(r);
    std::string log(errorLog.data());
    while (!log.empty() && (log.back() == '\n' || log.back() == '\0')) log.pop_back();
    if (!log.empty()) error += "\n" + log;
    return nullptr;
  }
  return std::make_shared<GpuModule>(state_, module);
}

std::unique_ptr<DeviceBuffer> GpuRuntime::allocate(size_t bytes, std::string& error) {
  if (!state_->makeCurrent(error)) return nullptr;
  cu::DevicePtr ptr = 0;
  // cuMemAlloc refuses 0 bytes; a zero-sized tensor still gets a valid address.
  size_t request = bytes == 0 ? 1 : bytes;
  if (!state_->api->check(state_->api->memAlloc(&ptr, request),
                          "cannot allocate " + std::to_string(bytes) + " bytes on the GPU", error))
    return nullptr;
  return std::make_unique<DeviceBuffer>(state_, ptr, bytes);
}

std::unique_ptr<EventTimer> GpuRuntime::createTimer(std::string& error) {
  if (!state_->makeCurrent(error)) return nullptr;
  cu::Event start = nullptr, stop = nullptr;
  if (!state_->api->check(state_->api->eventCreate(&start, 0), "cannot create a CUDA event", error)) return nullptr;
  if (!state_->api->check(state_->api->eventCreate(&stop, 0), "cannot create a CUDA event", error)) {
    state_->api->eventDestroy(start);
    return nullptr;
  }
  return std::make_unique<EventTimer>(state_, start, stop);
}

bool GpuRuntime::launch(const GpuKernel& kernel, Dim3 grid, Dim3 block, unsigned dynamicSharedBytes,
                        KernelArgs& args, std::string& error) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) {
    error = "kernel '" + kernel.name() + "': the grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) +
            ", " + std::to_string(grid.z) + ") is empty";
    return false;
  }
  if (grid.y > 65535 || grid.z > 65535 || grid.x > 2147483647u) {
    error = "kernel '" + kernel.name() + "': the grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) +
            ", " + std::to_string(grid.z) + ") exceeds CUDA's limits (2^31-1, 65535, 65535)";
    return false;
  }
  if (!state_->makeCurrent(error)) return false;
  // Over 48 KiB the kernel must opt in; the attribute is per function and cheap to set.
  if (dynamicSharedBytes > 48 * 1024 &&
      !state_->api->check(state_->api->funcSetAttribute(kernel.handle(), cu::kFuncAttrMaxDynamicSharedSizeBytes,
                                                        static_cast<int>(dynamicSharedBytes)),
                          "kernel '" + kernel.name() + "' cannot get " + std::to_string(dynamicSharedBytes) +
                              " bytes of shared memory",
                          error))
    return false;
  return state_->api->check(state_->api->launchKernel(kernel.handle(), grid.x, grid.y, grid.z, block.x, block.y,
                                                      block.z, dynamicSharedBytes, nullptr, args.pointers(),
                                                      nullptr),
                            "launching kernel '" + kernel.name() + "' failed", error);
}

bool GpuRuntime::synchronize(std::string& error) {
  return state_->makeCurrent(error) &&
         state_->api->check(state_->api->ctxSynchronize(), "the GPU work failed", error);
}

TensorMapEncoder GpuRuntime::tensorMapEncoder() const {
  return [state = state_](const TensorMapEncoding& encoding, cu::TensorMap& map, std::string& error) {
    return state->makeCurrent(error) && encodeTensorMap(*state->api, encoding, map, error);
  };
}

}  // namespace argus::gpu
