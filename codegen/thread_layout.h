// Where the elements of a register tile live, as bit fields of the thread id.
//
// The canonical distribution (ir/types.h) splits the thread id into lane and
// warp fields per dimension, every extent a power of two. Codegen does not
// re-derive that formula: it probes ir::Distribution (the one definition the
// interpreter uses too) and checks that the result is bit-linear, so that
//   coordinate(tid, v)[d] = sum over tid bits b of bit(tid, b) * step(b, d)
//                           + valueCoord[v][d]
// holds exactly. LLVM-free so that it can be tested on its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/types.h"

namespace argus::codegen {

struct ThreadLayout {
  struct TidBit {
    int dim = -1;       // the tile dimension this bit moves; -1: a replica bit
    int64_t step = 0;   // how far it moves the coordinate (a power of two)
  };

  ir::Layout layout;
  ir::Distribution dist;
  std::vector<int64_t> shape;                    // layout.shape()
  int numThreadBits = 0;                         // log2(threads per block)
  std::vector<TidBit> bits;                      // one per thread-id bit
  std::vector<std::vector<int64_t>> valueCoord;  // [v][d]: coordinate of value v in thread 0
  uint32_t ownerMask = 0;  // thread-id bits that are all zero exactly in the primary owners

  int64_t numValues() const { return static_cast<int64_t>(valueCoord.size()); }
  int rank() const { return static_cast<int>(shape.size()); }
  // Mask of the thread-id bits that move dimension `dim`, lane bits (0..4) or warp bits (5..).
  uint32_t laneBitsOf(int dim) const;
  uint32_t warpBitsOf(int dim) const;
  // Mask of the lane / warp bits that move no coordinate (replicas of the same elements).
  uint32_t replicaLaneBits() const;
  uint32_t replicaWarpBits() const;
};

// Probes `dist` for `layout` with `numWarps` warps. Returns false with a
// reason when the distribution is not bit-linear (an internal error).
bool analyzeThreadLayout(const ir::Layout& layout, int64_t numWarps, ThreadLayout& out,
                         std::string* why);

// The coordinate steps of a thread's value-index bits: steps[b][d] is how far
// bit b of the value index moves dimension d, when the values are bit-linear
//   valueCoord[v][d] = sum over v's bits b of steps[b][d]
// (the value count a power of two). False, with `steps` unspecified, otherwise.
// Lets codegen walk a thread's values in a run-time loop instead of unrolled.
bool valueBitSteps(const ThreadLayout& layout, std::vector<std::vector<int64_t>>& steps);

// Row-major linear index of `coord` in `shape`.
int64_t linearIndex(const std::vector<int64_t>& coord, const std::vector<int64_t>& shape);

}  // namespace argus::codegen
