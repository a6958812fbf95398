// Test hooks of the stand-in driver (runtime_gpu_fake_libcuda.cpp): what its
// cuTensorMapEncodeTiled and its "tma_probe" kernel saw. Tests dlopen the same
// library the runtime loaded and dlsym these.
#pragma once

#include <cstdint>

extern "C" {

struct ArgusFakeTensorMapCall {
  int dataType = -1;
  unsigned rank = 0;
  uint64_t globalAddress = 0;
  uint64_t globalDims[5] = {};
  uint64_t globalStrides[4] = {};
  unsigned boxDims[5] = {};
  unsigned elementStrides[5] = {};
  int interleave = -1, swizzle = -1, l2Promotion = -1, oobFill = -1;
  uintptr_t mapAddress = 0;  // where the caller's CUtensorMap lies
};

// The fake writes this into word 0 of every map it encodes, the global address
// into word 1 and the call's number (1, 2, ...) into word 2.
constexpr uint64_t kArgusFakeTensorMapMagic = 0x7061'6d72'6f73'6e65ull;

// Calls so far and the last one. Setting ARGUS_FAKE_TMA_FAIL makes the encode
// return CUDA_ERROR_INVALID_VALUE.
using ArgusFakeLastTensorMapCallFn = const ArgusFakeTensorMapCall* (*)(int* calls);

// The "tma_probe" kernel's parameters are (x: tensor, N: size, map): the last
// launch's 128 map bytes and the address the kernelParams entry pointed at.
using ArgusFakeLastProbeFn = void (*)(uint64_t words[16], uintptr_t* paramAddress, int* launches);

}  // extern "C"
