// TMA tensor maps (CUtensorMap) for kernels that copy tiles with
// cp.async.bulk.tensor: the kernel metadata names, per map, a tensor parameter,
// the box (the tile one copy moves) and the swizzle (ir/bulk.h is the
// compiler's side of this contract); at launch the runtime encodes each map for
// the actual tensor and passes it as a 128-byte, 64-byte aligned argument after
// the size parameters.
//
// planTensorMap turns a tensor (row-major, contiguous) and a map into the
// arguments of cuTensorMapEncodeTiled, innermost dimension first, after
// checking what TMA requires (aligned address and strides, boxes of at most
// 256 elements, ...) so that a violation is a message about the user's tensor
// instead of the driver's CUDA_ERROR_INVALID_VALUE.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda_api.h"
#include "host_dtype.h"

namespace argus::gpu {

// The arguments of one cuTensorMapEncodeTiled call (cuda.h's order and units).
struct TensorMapEncoding {
  int dataType = cu::kTensorMapUint8;
  uint64_t globalAddress = 0;
  std::vector<uint64_t> globalDims;     // innermost first: the tensor's extents reversed
  std::vector<uint64_t> globalStrides;  // bytes, of dimensions 1..rank-1 (innermost first)
  std::vector<uint32_t> boxDims;        // innermost first
  std::vector<uint32_t> elementStrides; // all 1
  int interleave = cu::kTensorMapInterleaveNone;
  int swizzle = cu::kTensorMapSwizzleNone;
  int l2Promotion = cu::kTensorMapL2Promotion128B;
  int oobFill = cu::kTensorMapFloatOobFillNone;
  bool operator==(const TensorMapEncoding&) const = default;
};

// What the launch knows of one tensor map's tensor.
struct TensorMapTarget {
  std::string tensorName;
  HostDType dtype;
  std::vector<int64_t> shape;         // outermost first
  std::vector<std::string> dimNames;  // per dimension: its size's name, "" for a constant
  uint64_t address = 0;
};

// CUtensorMapDataType of an element type ("bf16" -> BFLOAT16); -1 if TMA has none.
int tensorMapDataType(const HostDType& dtype);
// CUtensorMapSwizzle of 0/32/64/128 bytes; -1 otherwise.
int tensorMapSwizzle(int swizzleBytes);

// The encode call for `target` with `box` (outermost first, one per dimension)
// and `swizzleBytes` (0, 32, 64 or 128); false with a message when TMA cannot
// describe the tensor ("tensor 'A': its row of K=100 bf16 elements is 200
// bytes; TMA needs rows that are a multiple of 16 bytes (K a multiple of 8)").
bool planTensorMap(const TensorMapTarget& target, const std::vector<int64_t>& box, int swizzleBytes,
                   TensorMapEncoding& out, std::string& error);

// Fills `map` through the driver (GpuRuntime::tensorMapEncoder binds one).
using TensorMapEncoder = std::function<bool(const TensorMapEncoding&, cu::TensorMap& map, std::string& error)>;

// cuTensorMapEncodeTiled; a failure names the CUresult ("cuTensorMapEncodeTiled
// failed: CUDA_ERROR_INVALID_VALUE (invalid argument)"), a driver without it says so.
bool encodeTensorMap(const CudaApi& api, const TensorMapEncoding& encoding, cu::TensorMap& map, std::string& error);

}  // namespace argus::gpu
