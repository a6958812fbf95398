// The built-in "a stored element lands where its origin says", the choice of
// kernels the tag flow walks at all, and helpers for reading models.
#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

int64_t modelValue(const z3::model& model, const z3::expr& e) {
  z3::expr v = model.eval(e, true);
  uint64_t bits = 0;
  if (!v.is_numeral() || !v.is_numeral_u64(bits)) return 0;
  return static_cast<int32_t>(static_cast<uint32_t>(bits));
}

std::string TagFlow::launchText(const std::optional<z3::model>& model) const {
  std::string launch;
  if (!model) return launch;
  for (const auto& [name, term] : launchTerms())
    if (name.rfind("num_programs", 0) != 0)
      launch += (launch.empty() ? "" : ", ") + name + " = " + std::to_string(modelValue(*model, term));
  return launch;
}

// The sizes, program ids and loop iterations of a model of `solver`'s
// assertions and `bound`, asked of a fresh solver, as one equality; none when
// that solver finds no model either. Each size the model makes larger than 2 is
// then shrunk on its own where the violation allows (to 2, else 64), each by a
// fresh solver, as preferSmall does incrementally: a size the violation does not
// need (the number of experts beside the row count that shows the bug) would
// otherwise stay wherever the solver left it, and the witness could be a launch
// too large for the interpreter to replay (moe_gemm_persistent's E = 193).
std::optional<z3::expr> TagFlow::launchInFreshSolver(z3::solver& solver, const z3::expr& bound) {
  z3::expr bounds = bound;
  auto solve = [&](const z3::expr& extra) -> std::optional<z3::model> {
    z3::solver fresh = copyOfSolver(solver);
    budget_.limit(fresh);
    fresh.add(bounds && extra);
    if (budget_.check(fresh) != z3::sat) return std::nullopt;
    return fresh.get_model();
  };
  std::optional<z3::model> model = solve(ctx_.bool_val(true));
  if (!model) return std::nullopt;
  for (const auto& [name, term] : launchTerms()) {
    if (!isRuntimeSize(name)) continue;
    for (int64_t cap : {2, 64}) {
      if (modelValue(*model, term) <= cap) break;
      if (std::optional<z3::model> smaller = solve(term <= bv(cap))) {
        bounds = bounds && term <= bv(cap);
        model = smaller;
        break;
      }
    }
  }
  z3::expr pinned = ctx_.bool_val(true);
  for (const auto& [name, term] : launchTerms()) pinned = pinned && term == model->eval(term, true);
  for (const LoopFrame& l : loops()) pinned = pinned && l.j == model->eval(l.j, true);
  return pinned;
}

// Narrows the model to the first iterations of a small launch where possible.
// The grid is not bounded itself: small sizes make a small grid, and a
// persistent kernel's grid is a constant (SMS = 132) no tier could go below.
// Each bound is asked under an assumption literal, not inside push/pop: after a
// check that learned much, Z3's pop cost more than all the checks (two mutants
// of moe_gemm_persistent.ag spent about 700 s each in Z3_solver_pop here). The
// solver keeps no scope of its own, and get_model() gives the last sat check's model.
// When a tier is undecided under its assumption, the caller's solver (without
// scopes) is replaced by a fresh one fixed to a launch of that tier.
z3::check_result TagFlow::preferSmall(z3::solver& solver) {
  const int64_t iterations[] = {1, 2, 3, 4, 8}, sizes[] = {64, 128, 256, 1024, 4096};
  auto literal = [&](const z3::expr& bound) {
    z3::expr p = z3::to_expr(ctx_, Z3_mk_fresh_const(ctx_, "small", Z3_mk_bool_sort(ctx_)));
    solver.add(z3::implies(p, bound));
    return p;
  };
  auto drop = [](z3::expr_vector& v) { v.resize(v.size() - 1); };
  for (int tier = 0; tier < 5; ++tier) {
    z3::expr tierBound = ctx_.bool_val(true);
    for (const LoopFrame& l : loops()) tierBound = tierBound && z3::ult(l.j, bv(iterations[tier]));
    for (const auto& [name, term] : launchTerms())
      if (name.rfind("num_programs", 0) != 0) tierBound = tierBound && term <= bv(sizes[tier]);
    z3::expr_vector assumed(ctx_);
    assumed.push_back(literal(tierBound));
    z3::check_result inTier = budget_.check(solver, assumed);
    if (inTier == z3::unknown && Z3_solver_get_num_scopes(ctx_, solver) == 0) {
      // Under an assumption the solver works incrementally, without the
      // preprocessing that bit-blasts small bounds at once, and it may give up
      // (the witnesses of two moe_gemm_persistent mutants were then launches
      // of 2^31 rows, which the interpreter cannot replay). A fresh solver with
      // the tier's bounds asserted finds a launch; the caller's solver is
      // replaced by a fresh one fixed to that launch, whose model the caller
      // reads (and narrows further, within that launch).
      z3::expr atLeastTwo = ctx_.bool_val(true);
      for (const auto& [name, term] : launchTerms())
        if (isRuntimeSize(name)) atLeastTwo = atLeastTwo && term >= bv(2);
      std::optional<z3::expr> pinned = launchInFreshSolver(solver, tierBound && atLeastTwo);
      if (!pinned) pinned = launchInFreshSolver(solver, tierBound);
      if (!pinned) continue;
      z3::solver again = copyOfSolver(solver);
      budget_.limit(again);
      again.add(*pinned);
      if (budget_.check(again) != z3::sat) continue;
      solver = again;
      return z3::sat;
    }
    if (inTier != z3::sat) continue;
    // The tier bounds every size together; from 128 up, each size is then
    // shrunk on its own where the violation allows (E = 2 experts, not 128,
    // beside K = 128), so that the witness stays a launch the interpreter
    // can replay. Only on the path that found a violation.
    if (sizes[tier] >= 128)
      for (const auto& [name, term] : launchTerms()) {
        if (!isRuntimeSize(name)) continue;
        for (int64_t bound : {2, 16, 64}) {
          assumed.push_back(literal(term <= bv(bound)));
          if (budget_.check(solver, assumed) == z3::sat) break;  // keep this bound
          drop(assumed);
        }
      }
    // A size of 0 or 1 makes a degenerate witness (an empty row, a row of
    // one element that normalizes the same whatever it holds): sizes of at
    // least 2 when the violation has them. Asked only once a violation is found.
    z3::expr atLeastTwo = ctx_.bool_val(true);
    for (const auto& [name, term] : launchTerms())
      if (isRuntimeSize(name)) atLeastTwo = atLeastTwo && term >= bv(2);
    assumed.push_back(literal(atLeastTwo));
    if (budget_.check(solver, assumed) == z3::sat) return z3::sat;
    drop(assumed);
    if (budget_.check(solver, assumed) == z3::sat) return z3::sat;  // the model get_model() gives
  }
  return budget_.check(solver);
}


// Built-in: a tile stored into a tensor of the same shape as the one its
// origin indexes lands at the coordinates its origin says. Only a definite
// violation is reported; unknown origins and undecided queries stay silent.
// `op`: a Store whose view a View op defines (TagFlow::step calls the hook only for those).
void checkStoreLandsAtOrigin(TagFlow& flow_, const ir::Function& fn_, DiagnosticSink& diags_, const Options& /*options*/,
                             const ir::Op& op) {
  z3::context& ctx_ = flow_.context();
  const ir::StoreOp store(op);
  const TagMap* tile = flow_.tilesTags(store.value());
  const ir::Op* view = fn_.values[store.view()].def;
  if (!tile || tile->originAxes.empty() || !view || view->operands.empty()) return;
  const ir::Param* to = nullptr;
  for (const ir::Param& p : fn_.params)
    if (p.value == ir::ViewOp(*view).base() && p.kind == ir::ParamKind::Tensor) to = &p;
  if (!to || tile->originAxes.size() > to->dims.size()) return;
  // A dot result's origin names a row of A and a column of B: the last two
  // axes of a destination with leading batch axes (attention's (BH, S, D)
  // output), which the view fixes.
  const size_t shift = to->dims.size() - tile->originAxes.size();
  // Each component of the origin must index an axis as long as the destination's.
  bool oneTensor = true;
  for (size_t d = 0; d < tile->originAxes.size(); ++d) {
    const OriginAxis& axis = tile->originAxes[d];
    const ir::DimRef& source = fn_.params[static_cast<size_t>(axis.tensor)].dims[static_cast<size_t>(axis.axis)];
    bool sameConstant = source.constant >= 0 && source.constant == to->dims[d + shift].constant;
    bool sameSize = source.sizeIndex >= 0 && source.sizeIndex == to->dims[d + shift].sizeIndex;
    if (!sameConstant && !sameSize) return;
    oneTensor = oneTensor && axis.tensor == tile->originAxes[0].tensor && axis.axis == static_cast<int64_t>(d);
  }
  if (shift > 0 && oneTensor) return;  // a loaded tile stored into a tensor of another rank: not a same-shape copy
  const ir::Param& from = fn_.params[static_cast<size_t>(tile->originAxes[0].tensor)];
  const ir::Type& tileType = fn_.values[store.value()].type;
  size_t r = to->dims.size(), k = tileType.shape.size();
  if (k > r) return;
  std::vector<z3::expr> coords, from0, dest;
  z3::expr context = flow_.assumptions();
  for (size_t i = 0; i < k; ++i) {
    coords.push_back(ctx_.bv_const(("stored" + std::to_string(i)).c_str(), 32));
    from0.push_back(flow_.coordVar(i));
    context = context && z3::ult(coords.back(), flow_.bv(tileType.shape[i]));
  }
  z3::expr wrong = ctx_.bool_val(false);
  std::vector<z3::expr> origin;
  for (size_t d = 0; d < r; ++d) {
    z3::expr offset = d + 1 < view->operands.size() ? flow_.scalar(view->operands[d + 1]) : flow_.bv(0);
    dest.push_back(d >= r - k ? offset + coords[d - (r - k)] : offset);
    const ir::DimRef& dim = to->dims[d];
    z3::expr extent = dim.constant >= 0 ? flow_.bv(dim.constant)
                                        : ctx_.bv_const(fn_.sizeNames[static_cast<size_t>(dim.sizeIndex)].c_str(), 32);
    context = context && dest.back() >= 0 && dest.back() < extent;  // stores outside the tensor are skipped
    if (d < shift) continue;  // a batch axis: the origin does not name it
    auto it = tile->tags.find(originKey(static_cast<int64_t>(d - shift)));
    if (it == tile->tags.end()) return;
    origin.push_back(substitute(it->second.value, from0, coords));
    context = context && substitute(it->second.present, from0, coords) && substitute(it->second.known, from0, coords);
    wrong = wrong || origin.back() != dest.back();
  }
  // Proven first with remainders abstracted (TagFlow::check): the origin of a
  // tile that went through a ring of stages is a chain of stage remainders.
  if (flow_.check(context && wrong)) return;
  z3::solver solver(ctx_, "QF_BV");
  SolverBudget& budget = flow_.budget();
  budget.limit(solver);
  solver.add(context && wrong);
  // A witness whose origin lies inside its tensor reads real data, not the
  // fill value of an edge tile: clearer, and the interpreter shows it. Small
  // launches first: there a violation is found fastest (preferSmall).
  solver.push();
  for (size_t d = 0; d < origin.size(); ++d) {
    const OriginAxis& axis = tile->originAxes[d];
    const ir::DimRef& dim = fn_.params[static_cast<size_t>(axis.tensor)].dims[static_cast<size_t>(axis.axis)];
    z3::expr extent = dim.constant >= 0 ? flow_.bv(dim.constant)
                                        : ctx_.bv_const(fn_.sizeNames[static_cast<size_t>(dim.sizeIndex)].c_str(), 32);
    solver.add(origin[d] >= 0 && origin[d] < extent);
  }
  z3::check_result result = flow_.preferSmall(solver);
  if (result != z3::sat) {
    solver.pop();
    result = flow_.preferSmall(solver);
  }
  if (result == z3::unknown) {  // undecided is never silence
    diags_.report(DiagId::CheckerCannotProve, op.range,
                  {"this store writes every element where its 'origin' says", "the solver gave up (" + budget.unknownReason(solver) + ")"});
    return;
  }
  if (result != z3::sat) return;
  z3::model model = solver.get_model();
  auto tuple = [&](const std::vector<z3::expr>& terms) {
    std::string s = "(";
    for (size_t i = 0; i < terms.size(); ++i) s += (i ? ", " : "") + std::to_string(modelValue(model, terms[i]));
    return s + (terms.size() == 1 ? ",)" : ")");
  };
  std::string element = tuple(coords);
  // A dot result's origin names a row of A and a column of B.
  auto axisText = [&](size_t d) {
    const OriginAxis& axis = tile->originAxes[d];
    const ir::Param& tensor = fn_.params[static_cast<size_t>(axis.tensor)];
    const int64_t rank = static_cast<int64_t>(tensor.dims.size());
    std::string name = axis.axis == rank - 2 ? "row " : axis.axis == rank - 1 ? "column " : "index ";
    return name + std::to_string(modelValue(model, origin[d])) + " of '" + tensor.name + "'";
  };
  Diagnostic& d = oneTensor ? diags_.report(DiagId::StoreAgainstOrigin, op.range,
                                            {"the element with origin " + tuple(origin), from.name, tuple(dest), to->name,
                                             "every element should land at its origin"})
                            : diags_.report(DiagId::DotResultAgainstOrigin, op.range,
                                            {axisText(0), axisText(1), tuple(dest), to->name});
  Counterexample cx;
  std::vector<int64_t> coord;
  for (const z3::expr& c : coords) coord.push_back(modelValue(model, c));
  ir::Distribution dist = ir::Distribution::of(tileType.layout, fn_.numWarps);
  for (int64_t t = 0; t < fn_.numThreads(); ++t)
    if (dist.isPrimaryOwner(t) && dist.valueIndexOf(t, coord) >= 0) {
      cx.thread = t;
      cx.warp = t / 32;
      cx.lane = t % 32;
      cx.value = dist.valueIndexOf(t, coord);
      break;
    }
  for (const LoopFrame& l : flow_.loops()) cx.iteration.emplace_back(l.name, modelValue(model, l.iv));
  cx.facts.emplace_back("element", "tile element " + element);
  cx.facts.emplace_back("tags found", oneTensor ? "origin " + tuple(origin) + " in '" + from.name + "'"
                                               : "origin " + tuple(origin) + ": " + axisText(0) + ", " + axisText(1));
  cx.facts.emplace_back("expected", "origin " + tuple(dest) + ", where the element is stored in '" + to->name + "'");
  std::string launch = flow_.launchText(model);
  if (!launch.empty()) cx.facts.emplace_back("launch", launch);
  cx.trace = tile->trace;
  d.counterexample = std::move(cx);
  if (oneTensor)
    d.notes.push_back("the tile was loaded from '" + from.name + "', which has the shape of '" + to->name +
                      "': check the indices of this store against those of the load");
  else
    d.notes.push_back("element (m, n) of a dot() result is the product of row m of its A operand and column n of its B "
                      "operand: check the tile indices of this store against those of the loads of A and B");
}

// Whether `value` may carry an origin of a tensor shaped like `dims`: a cheap
// look back through elementwise ops to a load (a loop-carried value stops it).
static bool mayCarrySameShapedOrigin(const ir::Function& fn, ir::ValueId value, const std::vector<ir::DimRef>& dims, int depth) {
  const ir::Op* def = value < fn.values.size() ? fn.values[value].def : nullptr;
  if (!def || depth > 64) return false;
  switch (def->kind) {
    case ir::OpKind::Load: {
      const ir::Op* view = fn.values[ir::LoadOp(*def).view()].def;
      if (!view || view->kind != ir::OpKind::View) return false;
      for (const ir::Param& p : fn.params)
        if (p.value == ir::ViewOp(*view).base() && p.dims.size() == dims.size()) {
          bool same = true;
          for (size_t d = 0; d < dims.size(); ++d)
            same = same && p.dims[d].constant == dims[d].constant && p.dims[d].sizeIndex == dims[d].sizeIndex;
          return same;
        }
      return false;
    }
    case ir::OpKind::Binary: case ir::OpKind::Compare: case ir::OpKind::Unary: case ir::OpKind::Fma:
    case ir::OpKind::Select: case ir::OpKind::Cast: case ir::OpKind::ConvertLayout: case ir::OpKind::Broadcast:
    case ir::OpKind::TagSet:
      for (ir::ValueId operand : def->operands)
        if (fn.values[operand].type.isTile() && mayCarrySameShapedOrigin(fn, operand, dims, depth + 1)) return true;
      return false;
    default:
      return false;
  }
}

// Kernels with assertions, or with a store the built-in origin check may concern.
bool tagFlowNeeded(const ir::Function& fn, const ir::Block& block, bool countDots) {
  for (const auto& op : block.ops) {
    if (op->kind == ir::OpKind::Assert || (countDots && dotK(fn, *op))) return true;
    if (op->kind == ir::OpKind::Store && op->operands.size() == 2) {
      const ir::StoreOp store(*op);
      const ir::Op* view = fn.values[store.view()].def;
      if (view && view->kind == ir::OpKind::View && !view->operands.empty())
        for (const ir::Param& p : fn.params)
          if (p.value == ir::ViewOp(*view).base() && p.kind == ir::ParamKind::Tensor &&
              mayCarrySameShapedOrigin(fn, store.value(), p.dims, 0))
            return true;
    }
    for (const ir::Block& region : op->regions)
      if (tagFlowNeeded(fn, region, countDots)) return true;
  }
  return false;
}

}  // namespace argus::checker
