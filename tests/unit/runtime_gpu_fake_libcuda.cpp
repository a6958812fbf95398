// A stand-in for libcuda.so.1 (built as a shared library, loaded by tests via
// OpenOptions::driverLibrary or ARGUS_CUDA_DRIVER) so that CI, which has no GPU,
// still drives every host-side path of the GPU runtime and of `argusc run`:
// device memory is host memory, events read a host clock, and launching runs a
// host version of the few kernels it knows ("vadd": out = x + y over f32, as
// examples/vadd.ag; "double_in_place": x *= 2 over f32). Any other kernel does nothing, so its outputs stay
// poisoned. A module image containing FAKE_JIT_ERROR fails to load. Its
// cuTensorMapEncodeTiled records the call and "tma_probe" records the tensor
// map it receives, for the tests (runtime_gpu_fake_libcuda.h).
#include "runtime_gpu_fake_libcuda.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

using Result = int;
constexpr Result kSuccess = 0, kInvalidValue = 1, kInvalidPtx = 218, kNotFound = 500, kLaunchOutOfResources = 701;

struct FakeModule {
  std::string image;
};
struct FakeFunction {
  std::string name;
};
struct FakeEvent {
  double ms = 0;
};

ArgusFakeTensorMapCall lastTensorMapCall;
int tensorMapCalls = 0;
uint64_t lastProbeMap[16] = {};
uintptr_t lastProbeParamAddress = 0;
int probeLaunches = 0;

double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

extern "C" {

Result cuInit(unsigned) { return kSuccess; }
Result cuDeviceGetCount(int* count) { *count = 1; return kSuccess; }
Result cuDeviceGet(int* device, int ordinal) { *device = ordinal; return ordinal == 0 ? kSuccess : kInvalidValue; }
Result cuDeviceGetAttribute(int* value, int attribute, int) {
  const char* cc = std::getenv("ARGUS_FAKE_CUDA_CC");  // "86" for 8.6
  int major = cc ? std::atoi(cc) / 10 : 9, minor = cc ? std::atoi(cc) % 10 : 0;
  switch (attribute) {
    case 75: *value = major; return kSuccess;
    case 76: *value = minor; return kSuccess;
    case 16: *value = 4; return kSuccess;
    case 97: *value = 232448; return kSuccess;
    default: *value = 0; return kSuccess;
  }
}
Result cuDeviceGetName(char* name, int length, int) {
  std::strncpy(name, "Argus Fake GPU", static_cast<size_t>(length));
  return kSuccess;
}
Result cuDevicePrimaryCtxRetain(void** context, int) { static int token; *context = &token; return kSuccess; }
Result cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
Result cuCtxSetCurrent(void*) { return kSuccess; }
Result cuCtxSynchronize() { return kSuccess; }

Result cuModuleLoadDataEx(void** module, const void* image, unsigned numOptions, int* options, void** values) {
  std::string text(static_cast<const char*>(image));
  if (text.find("FAKE_JIT_ERROR") != std::string::npos) {
    for (unsigned i = 0; i < numOptions; ++i)
      if (options[i] == 5) std::strcpy(static_cast<char*>(values[i]), "ptxas fake, line 1; error: FAKE_JIT_ERROR");
    return kInvalidPtx;
  }
  *module = new FakeModule{text};
  return kSuccess;
}
Result cuModuleUnload(void* module) { delete static_cast<FakeModule*>(module); return kSuccess; }
Result cuModuleGetFunction(void** function, void* module, const char* name) {
  const std::string& image = static_cast<FakeModule*>(module)->image;
  if (image.find(std::string(".entry ") + name + "(") == std::string::npos) return kNotFound;
  static std::map<std::string, FakeFunction> functions;  // stable addresses, like the driver's handles
  FakeFunction& f = functions[name];
  f.name = name;
  *function = &f;
  return kSuccess;
}
Result cuFuncSetAttribute(void*, int, int) { return kSuccess; }
Result cuFuncGetAttribute(int* value, int attribute, void*) { *value = attribute == 4 ? 32 : 0; return kSuccess; }

Result cuLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned, void*, void** params, void**) {
  if (bx * by * bz > 1024) return kLaunchOutOfResources;
  if (gx == 0 || gy == 0 || gz == 0) return kInvalidValue;
  const std::string& name = static_cast<FakeFunction*>(function)->name;
  if (name == "vadd") {
    auto x = *static_cast<float**>(params[0]);
    auto y = *static_cast<float**>(params[1]);
    auto out = *static_cast<float**>(params[2]);
    int32_t n = *static_cast<int32_t*>(params[3]);
    for (int32_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
  } else if (name == "tma_probe") {
    std::memcpy(lastProbeMap, params[2], sizeof lastProbeMap);
    lastProbeParamAddress = reinterpret_cast<uintptr_t>(params[2]);
    ++probeLaunches;
  } else if (name == "double_in_place") {
    auto x = *static_cast<float**>(params[0]);
    int32_t n = *static_cast<int32_t*>(params[1]);
    for (int32_t i = 0; i < n; ++i) x[i] *= 2;
  }
  return kSuccess;
}

Result cuMemAlloc_v2(uint64_t* ptr, size_t bytes) {
  void* p = std::malloc(bytes);
  if (!p) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  *ptr = reinterpret_cast<uintptr_t>(p);
  return kSuccess;
}
Result cuMemFree_v2(uint64_t ptr) { std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(ptr))); return kSuccess; }
Result cuMemcpyHtoD_v2(uint64_t dst, const void* src, size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, bytes);
  return kSuccess;
}
Result cuMemcpyDtoH_v2(void* dst, uint64_t src, size_t bytes) {
  std::memcpy(dst, reinterpret_cast<const void*>(static_cast<uintptr_t>(src)), bytes);
  return kSuccess;
}
Result cuMemsetD8_v2(uint64_t dst, unsigned char value, size_t count) {
  std::memset(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), value, count);
  return kSuccess;
}

Result cuEventCreate(void** event, unsigned) { *event = new FakeEvent; return kSuccess; }
Result cuEventRecord(void* event, void*) { static_cast<FakeEvent*>(event)->ms = nowMs(); return kSuccess; }
Result cuEventSynchronize(void*) { return kSuccess; }
Result cuEventElapsedTime_v2(float* ms, void* start, void* end) {
  *ms = static_cast<float>(static_cast<FakeEvent*>(end)->ms - static_cast<FakeEvent*>(start)->ms);
  return kSuccess;
}
Result cuEventDestroy_v2(void* event) { delete static_cast<FakeEvent*>(event); return kSuccess; }

Result cuTensorMapEncodeTiled(void* map, int dataType, unsigned rank, void* globalAddress, const uint64_t* globalDims,
                               const uint64_t* globalStrides, const unsigned* boxDims, const unsigned* elementStrides,
                               int interleave, int swizzle, int l2Promotion, int oobFill) {
  if (std::getenv("ARGUS_FAKE_TMA_FAIL")) return kInvalidValue;
  if (rank < 1 || rank > 5 || reinterpret_cast<uintptr_t>(map) % 64 != 0) return kInvalidValue;
  ArgusFakeTensorMapCall call;
  call.dataType = dataType;
  call.rank = rank;
  call.globalAddress = reinterpret_cast<uintptr_t>(globalAddress);
  for (unsigned d = 0; d < rank; ++d) {
    call.globalDims[d] = globalDims[d];
    call.boxDims[d] = boxDims[d];
    call.elementStrides[d] = elementStrides[d];
    if (d + 1 < rank) call.globalStrides[d] = globalStrides[d];
  }
  call.interleave = interleave;
  call.swizzle = swizzle;
  call.l2Promotion = l2Promotion;
  call.oobFill = oobFill;
  call.mapAddress = reinterpret_cast<uintptr_t>(map);
  lastTensorMapCall = call;
  ++tensorMapCalls;
  uint64_t words[16] = {kArgusFakeTensorMapMagic, call.globalAddress, static_cast<uint64_t>(tensorMapCalls)};
  std::memcpy(map, words, sizeof words);
  return kSuccess;
}

const ArgusFakeTensorMapCall* argusFakeLastTensorMapCall(int* calls) {
  *calls = tensorMapCalls;
  return &lastTensorMapCall;
}

void argusFakeLastProbe(uint64_t words[16], uintptr_t* paramAddress, int* launches) {
  std::memcpy(words, lastProbeMap, sizeof lastProbeMap);
  *paramAddress = lastProbeParamAddress;
  *launches = probeLaunches;
}

Result cuGetErrorName(Result result, const char** name) {
  switch (result) {
    case kSuccess: *name = "CUDA_SUCCESS"; return kSuccess;
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; return kSuccess;
    case kInvalidPtx: *name = "CUDA_ERROR_INVALID_PTX"; return kSuccess;
    case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; return kSuccess;
    case kLaunchOutOfResources: *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; return kSuccess;
    default: *name = nullptr; return kInvalidValue;
  }
}
Result cuGetErrorString(Result result, const char** text) {
  *text = result == kSuccess ? "no error" : "fake driver error";
  return kSuccess;
}

}  // extern "C"
