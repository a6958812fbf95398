// Global accesses that never touch their tensor (AG2038), or not in some
// block (AG2042, loads and copies at the kernel's top level). A load, store or
// copy of a tile of a global tensor is masked at the tensor's edges, so a tile
// index past the last tile faults nowhere: a load quietly returns its fill
// value (0, or `other=`), a store writes nothing. When that holds for every
// launch the kernel's require()s allow, every block and every loop iteration
// that reaches the access, the access is certainly a mistake (a tile index off
// by one, a row tile taken past a row that must fit in one tile), and the
// kernel computes on fill values or leaves its output unwritten.
//
// One query per access: is there a launch, block and iteration where the
// tile's box meets the tensor on every axis? Scalars the encoding cannot
// interpret (data-dependent offsets) stay free, which only widens what the
// access may touch, so an "unsat" is a proof; "unknown" and anything inside an
// `if` (dead code the user may intend) stay silent.
#include <z3++.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "checker/invariant_check.h"
#include "checker/invariant_scalar.h"
#include "checker/solver_budget.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::OpKind;

namespace {

struct Access {
  const ir::Op* op = nullptr;
  const ir::Op* view = nullptr;
  const ir::Param* tensor = nullptr;
  bool writes = false;
};

class DeadAccessCheck {
 public:
  DeadAccessCheck(const ir::Function& fn, DiagnosticSink& diags, const Options& options)
      : fn_(fn), diags_(diags), options_(options) {}

  void run() {
    ScalarScope scope;
    walk(fn_.body, scope);
  }

 private:
  void walk(const ir::Block& block, ScalarScope& scope) {
    for (const auto& op : block.ops) {
      for (const Access& a : accessesOf(*op)) {
        if (budget_.spent()) return;
        try {
          check(a, scope);
        } catch (const z3::exception&) {
          // Undecided: this check only reports proofs.
        }
      }
      if (op->kind == OpKind::For && !op->regions.empty()) {
        scope.loops.push_back(op.get());
        walk(op->regions[0], scope);
        scope.loops.pop_back();
      } else if (op->kind != OpKind::If) {  // code under an if may be dead on purpose
        for (const ir::Block& region : op->regions) walk(region, scope);
      }
    }
  }

  // The views of global tensors `op` reads or writes through.
  std::vector<Access> accessesOf(const ir::Op& op) const {
    std::vector<Access> out;
    auto add = [&](size_t i, bool writes) {
      if (i >= op.operands.size()) return;
      const ir::Op* view = fn_.values[op.operands[i]].def;
      if (!view || view->kind != OpKind::View || view->operands.empty()) return;
      for (const ir::Param& p : fn_.params)
        if (p.value == ir::ViewOp(*view).base() && p.kind == ir::ParamKind::Tensor &&
            view->operands.size() == p.dims.size() + 1)
          out.push_back({&op, view, &p, writes});
    };
    // Global accesses are those the op table declares (ir/ops.def); `add` keeps tensor views.
    for (const ir::EffectDecl& effect : ir::opInfo(op.kind).effects)
      add(effect.operand, effect.access == ir::MemoryAccess::Write);
    return out;
  }

  // Offsets computed by at most this many scalar ops are asked about; longer
  // chains (rare in tile indices) would make deep terms for the encoder and Z3.
  static constexpr size_t kMaxOffsetOps = 64;
  bool smallOffsets(const ir::Op& view) const {
    std::vector<ir::ValueId> work(view.operands.begin() + 1, view.operands.end());
    std::set<ir::ValueId> seen;
    while (!work.empty()) {
      ir::ValueId id = work.back();
      work.pop_back();
      if (id >= fn_.values.size() || !seen.insert(id).second) continue;
      if (seen.size() > kMaxOffsetOps) return false;
      if (const ir::Op* def = fn_.values[id].def) work.insert(work.end(), def->operands.begin(), def->operands.end());
    }
    return true;
  }

  void check(const Access& a, const ScalarScope& scope) {
    if (!smallOffsets(*a.view)) return;
    if (!ctx_) ctx_ = &SolverBudget::contextFor(options_, ownContext_);
    ScalarEncoder enc(*ctx_, fn_, scope);
    const std::vector<int64_t>& tile = fn_.typeOf(a.op->kind == OpKind::Load ? a.op->results[0] : a.view->results[0]).shape;
    size_t rank = a.tensor->dims.size(), k = tile.size();
    if (k > rank) return;
    std::vector<z3::expr> offsets, meets, extents;
    for (size_t d = 0; d < rank; ++d) {
      z3::expr x = z3::sext(enc.scalar(a.view->operands[d + 1]), 32);
      const ir::DimRef& dim = a.tensor->dims[d];
      z3::expr extent = dim.constant >= 0 ? ctx_->bv_val(dim.constant, 64) : z3::sext(enc.size(dim.sizeIndex), 32);
      int64_t length = d + k >= rank ? tile[d + k - rank] : 1;
      offsets.push_back(x);
      extents.push_back(extent);
      meets.push_back(x < extent && x + ctx_->bv_val(length, 64) > ctx_->bv_val(0, 64));
    }
    z3::solver solver = bitVectorSolver(*ctx_);
    budget_.limit(solver);
    for (const z3::expr& c : enc.constraints()) solver.add(c);
    solver.push();
    for (const z3::expr& m : meets) solver.add(m);
    // Live in a launch with every size fixed (1, then 1000) and block 0: a
    // quick answer for almost every access, before the question for all launches.
    // (bitVectorSolver solves each check from scratch, the fixed sizes
    // substituted first: pushed, Z3's default solver bit-blasted gemm_cluster's
    // division by cdiv(N, 256) * 8 as a divider of unknowns, 0.2-0.5 s.)
    // In each, the loops' first iterations first: every unknown is then a number,
    // where a free iteration of a persistent loop of tiles left the grouped order's
    // remainder by its last group's rows to a divider circuit (gemm_bias_gelu:
    // 75 000 units for an access that block 0 makes in its first iteration).
    bool touches = false;
    for (int64_t size : {1, 1000})
      for (bool firstIterations : {true, false}) {
        if (touches || (firstIterations && enc.iterations().empty())) continue;
        solver.push();
        for (size_t i = 0; i < fn_.sizeNames.size(); ++i) solver.add(enc.size(static_cast<int>(i)) == ctx_->bv_val(size, 32));
        for (int axis = 0; axis < 3; ++axis)
          solver.add(ctx_->bv_const(("program_id" + std::to_string(axis)).c_str(), 32) == ctx_->bv_val(0, 32));
        if (firstIterations)
          for (const z3::expr& j : enc.iterations()) solver.add(j == ctx_->bv_val(0, j.get_sort().bv_size()));
        touches = budget_.check(solver) == z3::sat;
        solver.pop();
      }
    if (!touches) {
      z3::check_result anywhere = budget_.check(solver);
      if (anywhere == z3::unknown) return;
      touches = anywhere == z3::sat;
    }
    if (touches) {
      if (!a.writes && scope.loops.empty()) checkEveryBlockReads(a, enc, meets, offsets, extents);
      return;
    }
    solver.pop();
    if (budget_.check(solver) != z3::sat) return;  // nothing reaches it at all: not this check's finding
    // The axis along which the tile always misses, for the message.
    size_t axis = rank;
    for (size_t d = 0; d < rank && axis == rank; ++d) {
      solver.push();
      solver.add(meets[d]);
      if (budget_.check(solver) == z3::unsat) axis = d;
      solver.pop();
    }
    // A witness with a non-empty tensor and grid: an empty one would show nothing.
    for (const z3::expr& extent : extents) solver.add(extent > ctx_->bv_val(0, 64));
    for (const z3::expr& c : enc.nonEmptyGrid()) solver.add(c);
    for (const z3::expr& c : enc.constraints()) solver.add(c);  // the sizes the grid brought in
    if (budget_.check(solver) != z3::sat) return;
    preferSizesAtLeastTwo(solver, enc);
    std::optional<z3::model> model = enc.minimize(solver.assertions(), budget_);
    if (!model) {
      if (budget_.check(solver) != z3::sat) return;
      model = solver.get_model();
    }
    report(a, enc, *model, offsets, extents, axis);
  }

  // Built-in (AG2042): a load or copy at the top of the kernel (in no loop,
  // under no `if`) whose tile lies wholly outside its tensor for a block that
  // is not the last along its grid axes, in every launch with all sizes 256,
  // and with all sizes 1024, that the requirements allow. Tiles are powers of
  // two, so at those sizes no block is a ragged edge, and a last block reading
  // a halo past the end is not asked: what is left is a block computing on
  // fill values alone, from a tile coordinate on the wrong axis (`x[0, r]` for
  // `x[r, 0]` with a row that fits one tile) or a grid axis walking another
  // tensor axis. A test at those launches, not a proof; loads inside loops (an
  // iteration past the end is usual) and loads whose offsets depend on data
  // the encoding does not interpret are not asked.
  void checkEveryBlockReads(const Access& a, ScalarEncoder& enc, const std::vector<z3::expr>& meets,
                            const std::vector<z3::expr>& offsets, const std::vector<z3::expr>& extents) {
    if (!enc.opaqueNames().empty()) return;
    std::vector<z3::expr> grid = enc.nonEmptyGrid(), notLast = enc.notLastBlock();
    if (notLast.empty()) return;  // the same tile for every block: AG2038's question, not this one
    z3::solver miss = bitVectorSolver(*ctx_);
    budget_.limit(miss);
    for (const z3::expr& c : grid) miss.add(c);
    for (const z3::expr& c : notLast) miss.add(c);
    for (const z3::expr& c : enc.constraints()) miss.add(c);
    for (const z3::expr& extent : extents) miss.add(extent > ctx_->bv_val(0, 64));
    z3::expr_vector anyAxis(*ctx_);
    for (const z3::expr& m : meets) anyAxis.push_back(!m);
    miss.add(z3::mk_or(anyAxis));
    bool probed = false;
    for (int64_t size : {256, 1024}) {
      miss.push();
      for (size_t i = 0; i < fn_.sizeNames.size(); ++i) miss.add(enc.size(static_cast<int>(i)) == ctx_->bv_val(size, 32));
      // The launch alone (without the miss) must be allowed for the probe to count.
      z3::solver allowed = bitVectorSolver(*ctx_);
      budget_.limit(allowed);
      for (const z3::expr& c : grid) allowed.add(c);
      for (const z3::expr& c : enc.constraints()) allowed.add(c);
      for (size_t i = 0; i < fn_.sizeNames.size(); ++i)
        allowed.add(enc.size(static_cast<int>(i)) == ctx_->bv_val(size, 32));
      z3::check_result launchable = budget_.check(allowed);
      z3::check_result found = launchable == z3::sat ? budget_.check(miss) : z3::unsat;
      miss.pop();
      if (launchable == z3::unknown || found == z3::unknown) return;
      if (launchable != z3::sat) continue;
      if (found != z3::sat) return;  // every block but the last meets the tensor there
      probed = true;
    }
    if (!probed || budget_.check(miss) != z3::sat) return;
    preferSizesAtLeastTwo(miss, enc);
    std::optional<z3::model> model = enc.minimize(miss.assertions(), budget_);
    if (!model) {
      if (budget_.check(miss) != z3::sat) return;
      model = miss.get_model();
    }
    size_t axis = 0;
    while (axis + 1 < meets.size() && model->eval(meets[axis], true).is_true()) ++axis;
    auto [blocks, launch] = blocksAndLaunch(enc, *model);
    const std::string& name = a.tensor->name;
    std::vector<int64_t> offset = valuesOf(*model, offsets);
    int64_t extent = model->eval(extents[axis], true).get_numeral_int64();
    std::string why = "along axis " + std::to_string(axis) + " (" + extentName(a, axis) + ") its tile starts at " +
                      std::to_string(offset[axis]) + ", and '" + name + "' is " + std::to_string(extent) +
                      " long there; with every size 256, and with every size 1024, too, a block that is not the last "
                      "reads nothing";
    std::string what = a.op->kind == OpKind::Load ? "load" : "copy";
    Diagnostic& d = diags_.report(DiagId::BlockReadsOutsideTensor, a.op->range,
                                  {what, name, blocks, launch.empty() ? "" : " when " + launch, why});
    Counterexample cx;
    cx.facts.emplace_back("offset", shapeText(offset));
    cx.facts.emplace_back("block", blocks);
    if (!launch.empty()) cx.facts.emplace_back("launch", launch);
    d.counterexample = std::move(cx);
    d.notes.push_back("a tile past the edge of a tensor is masked: in that block this " + what +
                      " only returns its fill value, and what the block computes from it is not data; check which "
                      "axis of '" + name + "' each program_id() walks (rows `[r, 0]`, columns `[0, c]`) against "
                      "the grid");
  }

  // The model's program ids ("program_id(0) = 1") and runtime sizes ("M = 2"), as two lists.
  static std::pair<std::string, std::string> blocksAndLaunch(ScalarEncoder& enc, const z3::model& model) {
    std::string blocks, launch;
    for (const auto& [key, v] : enc.launchValues(model)) {
      std::string& into = key.rfind("program_id", 0) == 0 ? blocks : launch;
      into += (into.empty() ? "" : ", ") + key + " = " + std::to_string(v);
    }
    return {blocks, launch};
  }

  // How axis `axis` of the tensor is written in its type: a constant or a size name.
  std::string extentName(const Access& a, size_t axis) const {
    const ir::DimRef& dim = a.tensor->dims[axis];
    return dim.constant >= 0 ? std::to_string(dim.constant) : fn_.sizeNames[static_cast<size_t>(dim.sizeIndex)];
  }

  static std::vector<int64_t> valuesOf(const z3::model& model, const std::vector<z3::expr>& terms) {
    std::vector<int64_t> out;
    for (const z3::expr& x : terms) out.push_back(model.eval(x, true).get_numeral_int64());
    return out;
  }

  // Sizes of 1 make degenerate witnesses (a row of one element normalizes to
  // the same value whatever it reads): every size at least 2 when the kernel allows it.
  void preferSizesAtLeastTwo(z3::solver& solver, ScalarEncoder& enc) {
    solver.push();
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i)
      solver.add(enc.size(static_cast<int>(i)) >= ctx_->bv_val(2, 32));
    if (budget_.check(solver) == z3::sat) return;  // kept
    solver.pop();
  }

  void report(const Access& a, ScalarEncoder& enc, const z3::model& model, const std::vector<z3::expr>& offsets,
              const std::vector<z3::expr>& extents, size_t axis) {
    const std::string& name = a.tensor->name;
    std::string what = a.op->kind == OpKind::Load ? "load" : a.op->kind == OpKind::Store ? "store" : "copy";
    std::string verb = a.writes ? "writes" : "reads";
    std::vector<int64_t> offset = valuesOf(model, offsets);
    std::string why;
    if (axis < offsets.size()) {
      why = "along axis " + std::to_string(axis) + " (" + extentName(a, axis) + ") its tile lies outside '" + name +
            "' in every launch the kernel's require()s allow, for every block and iteration";
    } else {
      why = "its tile lies outside '" + name + "' in every launch the kernel's require()s allow, for every block and iteration";
    }
    Diagnostic& d = diags_.report(DiagId::GlobalAccessNeverInside, a.op->range, {what, verb, name, why});
    Counterexample cx;
    for (const auto& [loop, v] : enc.iterationValues(model)) cx.iteration.emplace_back(loop, v);
    auto [blocks, launch] = blocksAndLaunch(enc, model);
    cx.facts.emplace_back("offset", shapeText(offset));
    if (axis < extents.size())
      cx.facts.emplace_back("extent", "axis " + std::to_string(axis) + " of '" + name + "' is " +
                                          std::to_string(model.eval(extents[axis], true).get_numeral_int64()) +
                                          " long, and the tile starts at " + std::to_string(offset[axis]) + " along it");
    if (!blocks.empty()) cx.facts.emplace_back("block", blocks);
    if (!launch.empty()) cx.facts.emplace_back("launch", launch);
    d.counterexample = std::move(cx);
    d.notes.push_back(std::string("a tile past the edge of a tensor is masked: ") +
                      (a.writes ? "this store writes nothing, ever" : "this load only ever returns its fill value") +
                      "; check the tile index along that axis against the grid and the kernel's require()s");
  }

  const ir::Function& fn_;
  DiagnosticSink& diags_;
  const Options& options_;
  std::unique_ptr<z3::context> ownContext_;  // only when check() gave none
  z3::context* ctx_ = nullptr;
  SolverBudget budget_{options_};
};

}  // namespace

void checkGlobalAccessesMeetTensors(const ir::Function& fn, DiagnosticSink& diags, const Options& options) {
  DeadAccessCheck(fn, diags, options).run();
}

}  // namespace argus::checker
