// Which element of its tile a thread's value is, as SMT terms: a register layout's
// distribution (ir/types.h) digit by digit, the symbolic twin of
// ir::Distribution::coordinate and isPrimaryOwner (internal to the checker). Every
// analysis that asks "which thread touches which element" (races, separation of
// stores across blocks, the tag flow's witnesses) encodes it here, so they agree
// with each other and with the interpreter and codegen, which read the same digits.
#pragma once

#include <z3++.h>

#include <vector>

#include "ir/types.h"

namespace argus::checker {

struct EncodedDistribution {
  // One 32-bit term per axis of the layout's shape (0 on reduced axes).
  std::vector<z3::expr> coordinate;
  // Each must hold for `thread` to be the element's primary owner (the one that
  // stores it): no replica bits, lane and warp digits of reduced axes 0. Empty
  // unless asked for.
  std::vector<z3::expr> primaryOwner;
};

// `thread` and `value` are 32-bit terms; the caller bounds them (thread < the block's
// threads, value < Distribution::valuesPerThread).
EncodedDistribution encodeDistribution(z3::context& ctx, const ir::Layout& layout, const ir::Distribution& dist,
                                       const z3::expr& thread, const z3::expr& value, bool withPrimaryOwner);

}  // namespace argus::checker
