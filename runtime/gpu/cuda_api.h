// The few entry points of the CUDA driver API that the runtime uses, resolved
// at run time with dlopen/dlsym so that building Argus never needs CUDA: the
// types are declared here (opaque handles, int results) instead of coming from
// cuda.h. A machine without the driver gets an error message, not a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace argus::gpu {

namespace cu {
using Result = int;  // CUresult; 0 is CUDA_SUCCESS
using Device = int;  // CUdevice
using DevicePtr = unsigned long long;  // CUdeviceptr (64-bit)
struct ContextHandle;
struct ModuleHandle;
struct FunctionHandle;
struct EventHandle;
struct StreamHandle;
using Context = ContextHandle*;
using Module = ModuleHandle*;
using Function = FunctionHandle*;
using Event = EventHandle*;
using Stream = StreamHandle*;

constexpr Result kSuccess = 0;
constexpr Result kErrorNoDevice = 100;
// CUdevice_attribute values (cuda.h)
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedPerBlockOptin = 97;
// CUfunction_attribute values
constexpr int kFuncAttrSharedSizeBytes = 1;
constexpr int kFuncAttrLocalSizeBytes = 3;
constexpr int kFuncAttrNumRegs = 4;
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
// CUjit_option values
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSizeBytes = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;

// CUtensorMap: the opaque TMA descriptor cuTensorMapEncodeTiled fills in
// (CU_TENSOR_MAP_NUM_QWORDS = 16 words, 64-byte aligned as cuda.h declares it).
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};
static_assert(sizeof(TensorMap) == 128 && alignof(TensorMap) == 64);
// CUtensorMapDataType values
constexpr int kTensorMapUint8 = 0;
constexpr int kTensorMapUint16 = 1;
constexpr int kTensorMapUint32 = 2;
constexpr int kTensorMapInt32 = 3;
constexpr int kTensorMapUint64 = 4;
constexpr int kTensorMapInt64 = 5;
constexpr int kTensorMapFloat16 = 6;
constexpr int kTensorMapFloat32 = 7;
constexpr int kTensorMapFloat64 = 8;
constexpr int kTensorMapBfloat16 = 9;
// CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill values
constexpr int kTensorMapInterleaveNone = 0;
constexpr int kTensorMapSwizzleNone = 0;
constexpr int kTensorMapSwizzle32B = 1;
constexpr int kTensorMapSwizzle64B = 2;
constexpr int kTensorMapSwizzle128B = 3;
constexpr int kTensorMapL2Promotion128B = 2;
constexpr int kTensorMapFloatOobFillNone = 0;  // out-of-bounds elements read as zero
}  // namespace cu

// Function pointers into libcuda. Every member is non-null once load() succeeded,
// except tensorMapEncodeTiled: drivers before CUDA 12 lack it, and only kernels
// that copy with TMA need it (their launch reports its absence).
struct CudaApi {
  cu::Result (*init)(unsigned flags) = nullptr;
  cu::Result (*deviceGetCount)(int* count) = nullptr;
  cu::Result (*deviceGet)(cu::Device* device, int ordinal) = nullptr;
  cu::Result (*deviceGetAttribute)(int* value, int attribute, cu::Device device) = nullptr;
  cu::Result (*deviceGetName)(char* name, int length, cu::Device device) = nullptr;
  cu::Result (*primaryCtxRetain)(cu::Context* context, cu::Device device) = nullptr;
  cu::Result (*primaryCtxRelease)(cu::Device device) = nullptr;
  cu::Result (*ctxSetCurrent)(cu::Context context) = nullptr;
  cu::Result (*ctxSynchronize)() = nullptr;
  cu::Result (*moduleLoadDataEx)(cu::Module* module, const void* image, unsigned numOptions,
                                 int* options, void** optionValues) = nullptr;
  cu::Result (*moduleUnload)(cu::Module module) = nullptr;
  cu::Result (*moduleGetFunction)(cu::Function* function, cu::Module module, const char* name) = nullptr;
  cu::Result (*funcSetAttribute)(cu::Function function, int attribute, int value) = nullptr;
  cu::Result (*funcGetAttribute)(int* value, int attribute, cu::Function function) = nullptr;
  cu::Result (*launchKernel)(cu::Function function, unsigned gridX, unsigned gridY, unsigned gridZ,
                             unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                             cu::Stream stream, void** params, void** extra) = nullptr;
  cu::Result (*memAlloc)(cu::DevicePtr* ptr, size_t bytes) = nullptr;
  cu::Result (*memFree)(cu::DevicePtr ptr) = nullptr;
  cu::Result (*memcpyHtoD)(cu::DevicePtr dst, const void* src, size_t bytes) = nullptr;
  cu::Result (*memcpyDtoH)(void* dst, cu::DevicePtr src, size_t bytes) = nullptr;
  cu::Result (*memsetD8)(cu::DevicePtr dst, unsigned char value, size_t count) = nullptr;
  cu::Result (*eventCreate)(cu::Event* event, unsigned flags) = nullptr;
  cu::Result (*eventRecord)(cu::Event event, cu::Stream stream) = nullptr;
  cu::Result (*eventSynchronize)(cu::Event event) = nullptr;
  cu::Result (*eventElapsedTime)(float* ms, cu::Event start, cu::Event end) = nullptr;
  cu::Result (*eventDestroy)(cu::Event event) = nullptr;
  cu::Result (*getErrorName)(cu::Result result, const char** name) = nullptr;
  cu::Result (*getErrorString)(cu::Result result, const char** text) = nullptr;
  // The enum arguments (CUtensorMapDataType, ...) are C enums: int-sized.
  cu::Result (*tensorMapEncodeTiled)(cu::TensorMap* map, int dataType, uint32_t rank, void* globalAddress,
                                     const uint64_t* globalDims, const uint64_t* globalStrides,
                                     const uint32_t* boxDims, const uint32_t* elementStrides, int interleave,
                                     int swizzle, int l2Promotion, int oobFill) = nullptr;

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a failed call's result.
  std::string describe(cu::Result result) const;
  // "what failed: CUDA_ERROR_... (...)"; false when `result` is not success.
  bool check(cu::Result result, const std::string& what, std::string& error) const;

  // Opens `library` (normally "libcuda.so.1") and resolves every entry point;
  // null with `error` set when the library or a symbol is missing.
  static std::shared_ptr<const CudaApi> load(const std::string& library, std::string& error);

  ~CudaApi();
  CudaApi() = default;
  CudaApi(const CudaApi&) = delete;
  CudaApi& operator=(const CudaApi&) = delete;

 private:
  void* library_ = nullptr;
};

}  // namespace argus::gpu
