// Which thread copies which elements in a CopyAsync (cp.async): one contract
// for codegen, the interpreter and the checker.
//
// The view (shape (.., R, C), dtype of `bytes` bytes) is cut into chunks of
// `vec` consecutive elements along its last axis, vec = min(16 / bytes, C)
// (C is a power of two). Chunk (.., r, c/vec) is copied by the thread that
// holds it in the canonical blocked layout of the chunk shape (.., R, C/vec)
// (ir/types.h); replica threads copy nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/types.h"

namespace argus::ir {

inline int64_t asyncCopyVectorElements(DType dtype, const std::vector<int64_t>& viewShape) {
  int64_t bytes = std::max(1, dtypeBits(dtype) / 8);
  int64_t vec = 16 / bytes;
  int64_t last = viewShape.empty() ? 1 : viewShape.back();
  return vec < last ? vec : last;
}

inline Layout asyncCopyChunkLayout(DType dtype, const std::vector<int64_t>& viewShape) {
  std::vector<int64_t> chunks = viewShape;
  if (!chunks.empty()) chunks.back() /= asyncCopyVectorElements(dtype, viewShape);
  return Layout::canonical(chunks);
}

}  // namespace argus::ir
