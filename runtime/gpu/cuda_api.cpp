// Resolving the CUDA driver API with dlopen/dlsym (see cuda_api.h).
#include "cuda_api.h"

#include <dlfcn.h>

namespace argus::gpu {
namespace {

// dlsym returns void*; the cast to a function pointer is the documented POSIX idiom.
template <typename Fn>
bool resolve(void* library, const char* symbol, Fn& slot, std::string& missing) {
  void* address = dlsym(library, symbol);
  if (!address) {
    if (!missing.empty()) missing += ", ";
    missing += symbol;
    return false;
  }
  slot = reinterpret_cast<Fn>(address);
  return true;
}

// The first of `symbols` that the library exports (newer drivers renamed a few
// entry points with a _v2 suffix and keep the old name only for old binaries).
template <typename Fn>
bool resolveFirst(void* library, std::initializer_list<const char*> symbols, Fn& slot, std::string& missing) {
  for (const char* symbol : symbols) {
    if (void* address = dlsym(library, symbol)) {
      slot = reinterpret_cast<Fn>(address);
      return true;
    }
  }
  if (!missing.empty()) missing += ", ";
  missing += *symbols.begin();
  return false;
}

}  // namespace

CudaApi::~CudaApi() {
  // libcuda stays loaded: unloading the driver while the process may still hold
  // its contexts (or run its atexit handlers) is a known way to crash at exit.
}

std::shared_ptr<const CudaApi> CudaApi::load(const std::string& library, std::string& error) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    error = "no NVIDIA driver: " + library + " not found";
    // dlerror repeats the name for a missing file; other reasons (a broken or
    // wrong-architecture library) are worth showing.
    if (why && *why && !std::string(why).ends_with("No such file or directory")) error += std::string(" (") + why + ")";
    return nullptr;
  }
  auto api = std::make_shared<CudaApi>();
  api->library_ = handle;
  std::string missing;
  bool ok = true;
  ok &= resolve(handle, "cuInit", api->init, missing);
  ok &= resolve(handle, "cuDeviceGetCount", api->deviceGetCount, missing);
  ok &= resolve(handle, "cuDeviceGet", api->deviceGet, missing);
  ok &= resolve(handle, "cuDeviceGetAttribute", api->deviceGetAttribute, missing);
  ok &= resolve(handle, "cuDeviceGetName", api->deviceGetName, missing);
  ok &= resolve(handle, "cuDevicePrimaryCtxRetain", api->primaryCtxRetain, missing);
  ok &= resolveFirst(handle, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
                     api->primaryCtxRelease, missing);
  ok &= resolve(handle, "cuCtxSetCurrent", api->ctxSetCurrent, missing);
  ok &= resolve(handle, "cuCtxSynchronize", api->ctxSynchronize, missing);
  ok &= resolve(handle, "cuModuleLoadDataEx", api->moduleLoadDataEx, missing);
  ok &= resolve(handle, "cuModuleUnload", api->moduleUnload, missing);
  ok &= resolve(handle, "cuModuleGetFunction", api->moduleGetFunction, missing);
  ok &= resolve(handle, "cuFuncSetAttribute", api->funcSetAttribute, missing);
  ok &= resolve(handle, "cuFuncGetAttribute", api->funcGetAttribute, missing);
  ok &= resolve(handle, "cuLaunchKernel", api->launchKernel, missing);
  ok &= resolve(handle, "cuMemAlloc_v2", api->memAlloc, missing);
  ok &= resolve(handle, "cuMemFree_v2", api->memFree, missing);
  ok &= resolve(handle, "cuMemcpyHtoD_v2", api->memcpyHtoD, missing);
  ok &= resolve(handle, "cuMemcpyDtoH_v2", api->memcpyDtoH, missing);
  ok &= resolve(handle, "cuMemsetD8_v2", api->memsetD8, missing);
  ok &= resolve(handle, "cuEventCreate", api->eventCreate, missing);
  ok &= resolve(handle, "cuEventRecord", api->eventRecord, missing);
  ok &= resolve(handle, "cuEventSynchronize", api->eventSynchronize, missing);
  ok &= resolveFirst(handle, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, api->eventElapsedTime, missing);
  ok &= resolveFirst(handle, {"cuEventDestroy_v2", "cuEventDestroy"}, api->eventDestroy, missing);
  ok &= resolve(handle, "cuGetErrorName", api->getErrorName, missing);
  ok &= resolve(handle, "cuGetErrorString", api->getErrorString, missing);
  // Optional (see cuda_api.h): a missing symbol leaves the slot null.
  api->tensorMapEncodeTiled = reinterpret_cast<decltype(api->tensorMapEncodeTiled)>(
      dlsym(handle, "cuTensorMapEncodeTiled"));
  if (!ok) {
    error = "the NVIDIA driver " + library + " is too old or incomplete: it lacks " + missing;
    return nullptr;
  }
  return api;
}

std::string CudaApi::describe(cu::Result result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (getErrorName) getErrorName(result, &name);
  if (getErrorString) getErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text && *text) out += std::string(" (") + text + ")";
  return out;
}

bool CudaApi::check(cu::Result result, const std::string& what, std::string& error) const {
  if (result == cu::kSuccess) return true;
  error = what + ": " + describe(result);
  return false;
}

}  // namespace argus::gpu
