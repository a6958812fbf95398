// Tensor maps (TMA descriptors) of a kernel: one contract for codegen, the
// launch metadata and the runtimes (C++ and Python) that build them.
//
// Every CopyBulk reads a global view of a tensor parameter. Each distinct
// (tensor parameter, box, swizzle) gets one tensor map, in the order of the
// first CopyBulk that needs it (program order, regions depth first). ABI: after
// the i32 size parameters, each map is one 128-byte, 64-byte aligned
// `__grid_constant__` kernel parameter holding the CUtensorMap that
// cuTensorMapEncodeTiled builds for the tensor's global address, extents and
// row-major strides, with this box, element strides 1, no interleave, the
// swizzle below, and zero fill out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace argus::ir {

struct TensorMapUse {
  size_t param = 0;          // index into Function::params (a Tensor)
  std::vector<int64_t> box;  // box extents, outermost first, one per tensor dimension
                             // (1 for the leading dimensions a lower-rank view does not span)
  int swizzleBytes = 0;      // 0 (none), 32, 64 or 128
  // A store's map (TMA store of an epilogue slice): optional. The runtime passes
  // zeros where TMA cannot describe the tensor, and the kernel, which tests the
  // same conditions (16-byte aligned base and rows), then stores without it.
  bool store = false;
  bool operator==(const TensorMapUse&) const = default;
};

// The maps of the kernel's CopyBulk ops; codegen::kernelTensorMaps appends
// those of its TMA stores, which depend on the target.
std::vector<TensorMapUse> tensorMapsOf(const Function& fn);

// Stores of 16-bit mma tiles go to global memory through per-warp shared
// slices of kStoreSliceRows x kStoreSliceCols elements (codegen/store_staging.cpp)
// when every warp holds whole slices of its own part of a tile that spans a tensor's
// last two axes (rank 2 to 5; the leading axes of the view are one element each).
inline constexpr int64_t kStoreSliceRows = 16, kStoreSliceCols = 64;
bool storesThroughSlices(const Function& fn, const Op& store);
// The map through which such a store's slices go by TMA: box 1 x ... x 16 x 64, the
// slices' 128-byte swizzle; param = params.size() when the view is not of a
// tensor parameter.
TensorMapUse storeTensorMapUse(const Function& fn, const Op& store);
// True when the kernel only stores to tensor parameter `param` (no loads or
// copies read it). TMA stores complete asynchronously, through another proxy
// than ordinary loads and stores, so they are used only for such outputs.
bool tensorOnlyStoredTo(const Function& fn, size_t param);

// The tensor map a CopyBulk op reads through, or a Store op writes through
// (an index into `maps`), or -1.
int tensorMapIndex(const Function& fn, const std::vector<TensorMapUse>& maps, const Op& copy);

// What a CopyBulk needs from its tensor map; nullopt-like -1 swizzle when TMA
// has no pattern equal to the buffer's. TMA's 32/64/128-byte swizzles XOR the
// 16-byte chunk index (byte address bits 4..) with bits 7.. of the address, so
// on element offsets they are Swizzle<b, 4 - log2(bytes), 3> with b = 1, 2, 3.
int tmaSwizzleBytes(const Swizzle& swizzle, DType dtype);
// The M of those patterns for `dtype` (4 - log2(bytes)), or -1 for sizes TMA has none for.
int tmaSwizzleBase(DType dtype);

// The TensorMapUse of one CopyBulk (param = params.size() when its source is
// not a view of a tensor parameter). A multicast copy's box is its block's slice:
// the leading axis divided by the cluster size. A destination in column panels
// (ir::Swizzle) is written one box per panel, the box one panel wide.
TensorMapUse tensorMapUseOf(const Function& fn, const Op& copy);

}  // namespace argus::ir
