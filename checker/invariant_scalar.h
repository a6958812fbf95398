// Z3 encoding of block-uniform i32 scalars for one program point (internal to
// the invariant checks): the enclosing loops' induction variables (one
// iteration index each), program ids bounded by the kernel's grid, runtime
// sizes (>= 0, under the kernel's require(...)s), and the conditions of the
// enclosing `if`s. Arithmetic wraps as the IR's does. Any other scalar is an
// unknown constant whose name is remembered, so that a proof that needs it is
// reported as "cannot prove".
#pragma once

#include <z3++.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checker/solver_budget.h"
#include "ir/ir.h"
#include "ir/ops.h"

namespace argus::checker {

struct ScalarScope {
  std::vector<const ir::Op*> loops;                       // enclosing For ops, outermost first
  std::vector<std::pair<ir::ValueId, bool>> conditions;   // enclosing If conditions and the branch taken
};

// Calls `visit(op, scope)` for every op of `block` and its regions in program
// order, `scope` holding the loops and `if` conditions around it.
template <typename Visit>
void forEachOpInScope(const ir::Block& block, ScalarScope& scope, const Visit& visit) {
  for (const auto& op : block.ops) {
    visit(*op, static_cast<const ScalarScope&>(scope));
    if (op->kind == ir::OpKind::For && !op->regions.empty()) {
      scope.loops.push_back(op.get());
      forEachOpInScope(op->regions[0], scope, visit);
      scope.loops.pop_back();
    } else if (op->kind == ir::OpKind::If && op->regions.size() == 2 && !op->operands.empty()) {
      for (size_t branch = 0; branch < 2; ++branch) {
        scope.conditions.push_back({ir::IfOp(*op).condition(), branch == 0});
        forEachOpInScope(op->regions[branch], scope, visit);
        scope.conditions.pop_back();
      }
    } else {
      for (const ir::Block& region : op->regions) forEachOpInScope(region, scope, visit);
    }
  }
}

// A cheap first pass before Z3: the range [lo, hi] of an i32 scalar at the
// program point of `scope` by interval arithmetic, or nothing. Sound under the
// IR's wrapping: an add, subtract or multiply that may overflow gives the whole
// i32 range. Loop variables lie in [lb, ub - 1] (at most 2^31 - 2), sizes in
// [0, 2^31 - 1], program ids below a constant grid; if conditions are ignored.
struct ScalarRange {
  int64_t lo, hi;
};
std::optional<ScalarRange> scalarRange(const ir::Function& fn, const ScalarScope& scope, ir::ValueId id);

// Whether `id` is a condition ScalarEncoder encodes (a comparison of i32
// scalars, not/and/or/xor of such); anything else is dropped there, which
// over-approximates where code under it runs.
bool conditionEncodable(const ir::Function& fn, ir::ValueId id, int depth = 0);

class ScalarEncoder {
 public:
  // `impliedRequirements`: whether the launch includes the requirements the compiler
  // added for the target (ir::Requirement::implied), or only the user's.
  ScalarEncoder(z3::context& ctx, const ir::Function& fn, const ScalarScope& scope, bool impliedRequirements = true);

  z3::expr scalar(ir::ValueId id);
  // The runtime size `index` (>= 0), the variable scalars and requirements use.
  z3::expr size(int index) { return sizeVar(index); }
  const std::vector<z3::expr>& constraints() const { return constraints_; }
  // Every axis of the grid has a block (for a witness: a launch with no block shows nothing).
  std::vector<z3::expr> nonEmptyGrid();
  // The block of the encoded program ids is not the last along any grid axis it uses.
  std::vector<z3::expr> notLastBlock();
  // Names of the uninterpreted values the encoded scalars depend on ("'n'", "a sum(...)").
  const std::vector<std::string>& opaqueNames() const { return opaqueNames_; }

  // A model of `assertions` with the earliest iterations and the smallest launch, if found within the budget.
  std::optional<z3::model> minimize(const z3::expr_vector& assertions, SolverBudget& budget);
  // The iteration index of each loop of the scope, outermost first (the loop variable is lb + j * step).
  const std::vector<z3::expr>& iterations() const { return iterations_; }
  // Loop variables by source name, outermost first.
  std::vector<std::pair<std::string, int64_t>> iterationValues(const z3::model& model) const;
  // The program ids and runtime sizes the encoding used ("program_id(0)", "N").
  std::vector<std::pair<std::string, int64_t>> launchValues(const z3::model& model) const;
  static int64_t valueOf(const z3::model& model, const z3::expr& e);

 private:
  z3::expr bv(int64_t v) { return ctx_.bv_val(v, 32); }
  z3::expr sizeVar(int index);
  z3::expr programId(int axis);
  std::optional<z3::expr> launchInt(const ir::LaunchExpr& e);
  std::optional<z3::expr> launchBool(const ir::LaunchExpr& e);
  std::optional<z3::expr> condition(ir::ValueId id);
  z3::expr opaque(ir::ValueId id);
  // scalar() and condition() below their memo and depth check.
  z3::expr scalarTerm(ir::ValueId id);
  std::optional<z3::expr> conditionTerm(ir::ValueId id);
  static constexpr int kMaxEncodingDepth = 256;
  int encodingDepth_ = 0;

  z3::context& ctx_;
  const ir::Function& fn_;
  const ScalarScope& scope_;
  std::vector<z3::expr> constraints_;
  std::vector<std::string> opaqueNames_;
  std::map<ir::ValueId, z3::expr> memo_;
  std::map<ir::ValueId, std::optional<z3::expr>> conditionMemo_;  // bool chains share operands: no exponential walk
  std::vector<std::pair<ir::ValueId, z3::expr>> inductionVars_;  // iv value -> iv
  std::vector<z3::expr> iterations_;                             // per scope loop: j
  std::map<int, z3::expr> sizes_;                                // size index -> variable
  std::vector<int> reportedSizes_;  // sizes the scalars or the grid use (not only a requirement)
  bool inRequirement_ = false;
  std::map<int, z3::expr> programIds_;                           // axis -> variable
};

}  // namespace argus::checker
