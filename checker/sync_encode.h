// Z3 encoding of one pair of shared-memory accesses (internal to the checker):
// symbolic thread, value and loop-iteration variables for each side, the IR's
// scalar arithmetic as 32-bit bit-vectors, and the tile distribution formulas.
#pragma once

#include <z3++.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checker/sync_walk.h"

namespace argus::checker {

// One access instance: which thread, value and iterations execute it.
struct Side {
  std::string suffix;
  std::map<int, z3::expr> iteration;  // loop -> iteration index j (bv32)
  std::map<int, z3::expr> inductionValue;  // loop -> iv (bv32)
  std::map<ir::ValueId, z3::expr> memo;
  std::optional<z3::expr> thread, value, k;  // k: the reduction index of a dot operand
  std::vector<z3::expr> coords;               // element coordinates in the buffer
};

class PairEncoder {
 public:
  PairEncoder(z3::context& ctx, const ir::Function& fn, const FunctionAccesses& fa)
      : ctx_(ctx), fn_(fn), fa_(fa) {}

  // Builds both sides of the pair (earlier, later) and returns the constraints
  // under which they touch the same element from different threads.
  z3::expr encode(const Pending& earlier, int later, Side& first, Side& second);

  z3::expr scalar(Side& side, ir::ValueId id);

  // Optional constraints that make a counterexample easy to read (first
  // iterations, small sizes, the first blocks); dropped when unsatisfiable.
  // Two tiers: `tight` (first iterations, tiny sizes), then `loose`.
  const std::vector<z3::expr>& preferences(bool tight) const { return tight ? tight_ : preferences_; }

 private:
  z3::expr bv(int64_t v) { return ctx_.bv_val(v, 32); }
  z3::expr iterationOf(Side& side, int loop);
  void encodeAccess(Side& side, const Access& access);
  z3::expr opaque(Side& side, ir::ValueId id);

  z3::context& ctx_;
  const ir::Function& fn_;
  const FunctionAccesses& fa_;
  std::vector<z3::expr> constraints_;
  std::vector<z3::expr> preferences_;
  std::vector<z3::expr> tight_;
  void prefer(const z3::expr& tight, const z3::expr& loose) {
    tight_.push_back(tight);
    preferences_.push_back(loose);
  }
};

}  // namespace argus::checker
