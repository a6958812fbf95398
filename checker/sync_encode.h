// Z3 encoding of one pair of shared-memory accesses (internal to the checker):
// symbolic thread, value and loop-iteration variables for each side, the IR's
// scalar arithmetic as 32-bit bit-vectors, and the tile distribution formulas.
#pragma once

#include <z3++.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checker/solver_budget.h"
#include "checker/sync_walk.h"

namespace argus::checker {

// One access instance: which thread, value and iterations execute it.
struct Side {
  std::string suffix;
  std::map<int, z3::expr> iteration;  // loop -> iteration index j (bv32)
  std::map<int, z3::expr> inductionValue;  // loop -> iv (bv32)
  std::map<int, z3::expr> hasNextIteration;  // loop -> iteration j + 1 runs
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

  // Asks Z3 whether the pair can touch one element (QF_BV, within `budget`'s
  // resource limits). On sat, the model is narrowed to the most readable preference tier
  // that still holds. `reason` says why the answer is unknown.
  struct Answer {
    z3::check_result result = z3::unknown;
    std::optional<z3::model> model;
    std::string reason;
  };
  Answer solve(const Pending& earlier, int later, Side& first, Side& second, SolverBudget& budget);

  // Optional constraints that make a counterexample easy to read, tried in
  // order until one tier is satisfiable: first iterations and tiny launches,
  // first iterations and small launches, early iterations and small launches.
  static constexpr int kPreferenceTiers = 3;
  std::vector<z3::expr> preferences(int tier) const {
    std::vector<z3::expr> out = tier < 2 ? iterationsTight_ : iterationsLoose_;
    const std::vector<z3::expr>& sizes = tier == 0 ? sizesTight_ : sizesLoose_;
    out.insert(out.end(), sizes.begin(), sizes.end());
    return out;
  }

 private:
  z3::expr scalarTerm(Side& side, ir::ValueId id);  // scalar() below its memo and depth check
  static constexpr int kMaxEncodingDepth = 256;
  int encodingDepth_ = 0;
  z3::expr bv(int64_t v) { return ctx_.bv_val(v, 32); }
  z3::expr iterationOf(Side& side, int loop);
  void encodeAccess(Side& side, const Access& access);
  z3::expr opaque(Side& side, ir::ValueId id);

  z3::context& ctx_;
  const ir::Function& fn_;
  const FunctionAccesses& fa_;
  std::vector<z3::expr> constraints_;
  std::vector<z3::expr> iterationsTight_, iterationsLoose_, sizesTight_, sizesLoose_;
  void preferIterations(const z3::expr& tight, const z3::expr& loose) {
    iterationsTight_.push_back(tight);
    iterationsLoose_.push_back(loose);
  }
  void preferSizes(const z3::expr& tight, const z3::expr& loose) {
    sizesTight_.push_back(tight);
    sizesLoose_.push_back(loose);
  }
};

}  // namespace argus::checker
