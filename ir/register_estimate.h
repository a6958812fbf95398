// An estimate of the registers per thread that a function's live register
// tiles take, at the program point where they peak: what the register budget
// (AG2033) warns about and what the agent's cost model charges for occupancy
// and spills, defined once here.
//
// A tile of layout L takes Distribution::of(L).valuesPerThread values per
// thread (two registers each for 64-bit dtypes; 16-bit values of an mma layout
// pair up, two to a register). A tile is live from its definition up to its
// last use, where its registers pass to the op's result; a use inside a loop
// the tile is defined outside of keeps it live to the end of that loop, and a
// loop-carried tile lives from the loop to the body's last use. A broadcast
// costs what its operand costs and a splat one value. Scalars, addresses and
// temporaries of code generation are not counted, nor are the temporaries of
// an element-wise expression (an iota, or an element-wise result whose one
// use is an element-wise op or a reduction, or which is unused), which code
// generation computes element by element into their user; so the estimate is
// a lower bound of what ptxas allocates.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace argus::ir {

struct TileRegisterPeak {
  int64_t registers = 0;       // per thread, at the peak
  const Op* at = nullptr;      // the op where the peak is; nullptr for a function without ops
  // The tiles live there with their registers, largest first (ties: by value id).
  std::vector<std::pair<int64_t, ValueId>> liveAtPeak;
};

TileRegisterPeak estimateTileRegisters(const Function& fn);

}  // namespace argus::ir
