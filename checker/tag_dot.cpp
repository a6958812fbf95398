// Built-in: the operands of a dot() agree in K (AG2035). For a dot whose two
// operands come from loads of global tensors (directly, or through shared
// memory filled by copy, copy_async or the pipelined ring) whose K extents are
// the same, every element pair the dot multiplies, a[m, k] with b[k, n], must
// come from one K: a.origin[1] at (m, k) == b.origin[0] at (k, n) (with
// trans_b, b_view.origin[1] at (n, k)), for every thread, value and
// iteration. Only a definite violation is reported: where the tags are
// unknown or the query is undecided the check is silent (an assertion would
// say "cannot prove"; docs/checker.md, "Built-in invariants").
#include <algorithm>
#include <set>

#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

// The tensor parameter whose loads `value` comes from, through shared memory,
// copies and casts; -1 when it is not that simple (several tensors, a value
// computed by a dot or a reduction, a loop-carried tile).
TagMap dotOperandTags(TagFlow& flow, const ir::Function& fn, ir::ValueId operand) {
  if (fn.values[operand].type.isTile()) {
    const TagMap* t = flow.tilesTags(operand);
    return t ? *t : TagMap{};
  }
  return flow.viewTags(operand);
}

void nameLowestThreadHolding(Counterexample& cx, const ir::Function& fn, const ir::Layout& layout,
                             const std::vector<int64_t>& coordinate) {
  const ir::Distribution dist = ir::Distribution::of(layout, fn.numWarps);
  for (int64_t t = 0; t < fn.numThreads(); ++t)
    if (int64_t v = dist.valueIndexOf(t, coordinate); v >= 0) {
      cx.thread = t;
      cx.warp = t / 32;
      cx.lane = t % 32;
      cx.value = v;
      return;
    }
}

int traceOrigin(const ir::Function& fn, ir::ValueId value, int depth) {
  if (value >= fn.values.size() || depth > 32) return -1;
  const ir::Type& type = fn.values[value].type;
  const ir::Op* def = fn.values[value].def;
  if (type.kind == ir::TypeKind::Tensor) {
    for (size_t i = 0; i < fn.params.size(); ++i)
      if (fn.params[i].value == value) return static_cast<int>(i);
    return -1;
  }
  if (!def) return -1;
  switch (def->kind) {
    case ir::OpKind::View: {
      if (def->operands.empty()) return -1;
      ir::ValueId base = ir::ViewOp(*def).base();
      if (fn.values[base].type.kind == ir::TypeKind::Tensor) return traceOrigin(fn, base, depth + 1);
      if (fn.values[base].type.kind != ir::TypeKind::Shared) return -1;
      // Every write into the buffer must bring the same tensor's elements.
      int found = -1;
      bool any = false, mixed = false;
      int loops = 0;
      std::function<void(const ir::Block&)> scan = [&](const ir::Block& block) {
        for (const auto& op : block.ops) {
          // What is written from operand 1 into operand 0: a store's tile, a copy's source.
          bool writes = ir::writesOperand(op->kind, 0) && op->operands.size() >= 2;
          const ir::Op* target = writes ? fn.values[writtenView(*op)].def : nullptr;
          if (target && target->kind == ir::OpKind::View && !target->operands.empty() &&
              ir::ViewOp(*target).base() == base) {
            int source = traceOrigin(fn, writtenSource(*op), depth + 1);
            // A bulk ring written by hand inside another loop (a persistent kernel) carries its
            // stages through a loop-carried count the induction cannot summarize in reasonable
            // time: not traced. (A pipelined loop's copies, as written, have no mbarrier.)
            if (op->kind == ir::OpKind::CopyBulk && op->operands.size() > 2 && loops >= 2) source = -1;
            mixed = mixed || source < 0 || (any && source != found);
            found = source;
            any = true;
          }
          loops += op->kind == ir::OpKind::For;
          for (const ir::Block& region : op->regions) scan(region);
          loops -= op->kind == ir::OpKind::For;
        }
      };
      scan(fn.body);
      return any && !mixed ? found : -1;
    }
    case ir::OpKind::Load:
      return def->operands.empty() ? -1 : traceOrigin(fn, ir::LoadOp(*def).view(), depth + 1);
    case ir::OpKind::Cast:
      return def->operands.empty() ? -1 : traceOrigin(fn, ir::CastOp(*def).x(), depth + 1);
    case ir::OpKind::ConvertLayout:
      return def->operands.empty() ? -1 : traceOrigin(fn, ir::ConvertLayoutOp(*def).x(), depth + 1);
    case ir::OpKind::TagSet:
      return def->operands.empty() ? -1 : traceOrigin(fn, ir::TagSetOp(*def).tile(), depth + 1);
    default:
      return -1;
  }
}

// Every origin component of `tags` at tile coordinate `to` that is known lies
// inside its tensor: a masked element past a tensor's edge is zero, and so is
// its product, so only elements inside both tensors must agree. Component d
// of an origin indexes the axis originAxes names (a load's: axis d of its tensor).
z3::expr insideTensor(TagFlow& flow, const ir::Function& fn, const TagMap& tags, const ir::Param& tensor,
                      const std::vector<z3::expr>& coords, const std::vector<z3::expr>& to) {
  z3::context& ctx = flow.context();
  z3::expr all = ctx.bool_val(true);
  for (size_t d = 0; d < std::max(tensor.dims.size(), tags.originAxes.size()); ++d) {
    auto it = tags.tags.find(originKey(static_cast<int64_t>(d)));
    if (it == tags.tags.end()) continue;
    const ir::DimRef* dim = d < tensor.dims.size() ? &tensor.dims[d] : nullptr;
    if (d < tags.originAxes.size() && tags.originAxes[d].tensor >= 0) {
      const ir::Param& along = fn.params[static_cast<size_t>(tags.originAxes[d].tensor)];
      dim = &along.dims[static_cast<size_t>(tags.originAxes[d].axis)];
    }
    if (!dim) continue;
    z3::expr extent = dim->constant >= 0 ? flow.bv(dim->constant)
                                         : ctx.bv_const(fn.sizeNames[static_cast<size_t>(dim->sizeIndex)].c_str(), 32);
    z3::expr value = substitute(it->second.value, coords, to);
    all = all && z3::implies(substitute(it->second.present && it->second.known, coords, to), value >= 0 && value < extent);
  }
  return all;
}

namespace {

ir::ValueId storage(const ir::Function& fn, ir::ValueId v) {
  const ir::Op* def = fn.values[v].def;
  return def && def->kind == ir::OpKind::View && !def->operands.empty() ? ir::ViewOp(*def).base() : v;
}

// An assertion of the user on the origins of this dot's two operands speaks
// for it (AG2010 or AG2004 there); the built-in stays quiet.
bool userAssertsOrigins(const ir::Function& fn, const ir::Block& block, ir::ValueId a, ir::ValueId b) {
  for (const auto& op : block.ops) {
    static const std::vector<std::string> kNoNames;
    const std::vector<std::string>& names =
        op->kind == ir::OpKind::Assert ? ir::AssertOp(*op).names() : kNoNames;  // [message, tag names...]
    if (names.size() > 1 && std::find(names.begin() + 1, names.end(), "origin") != names.end()) {
      bool readsA = false, readsB = false;
      for (ir::ValueId v : op->operands) {
        if (v >= fn.values.size() || fn.values[v].type.isScalar()) continue;
        readsA = readsA || storage(fn, v) == a;
        readsB = readsB || storage(fn, v) == b;
      }
      if (readsA && readsB) return true;
    }
    for (const ir::Block& region : op->regions)
      if (userAssertsOrigins(fn, region, a, b)) return true;
  }
  return false;
}

bool sameExtent(const ir::DimRef& x, const ir::DimRef& y) {
  return (x.constant >= 0 && x.constant == y.constant) || (x.sizeIndex >= 0 && x.sizeIndex == y.sizeIndex);
}

}  // namespace

// The one dot whose result `value` is, through elementwise ops, casts and
// selects (a row statistic broadcast against it, as in s - max(s), does not
// count: a broadcast or a reduction stops the search); null when there is
// none or more than one.
const ir::Op* producingDot(const ir::Function& fn, ir::ValueId value) {
  const ir::Op* found = nullptr;
  std::vector<ir::ValueId> work{value};
  std::set<ir::ValueId> seen;
  while (!work.empty() && seen.size() < 256) {
    ir::ValueId v = work.back();
    work.pop_back();
    if (v >= fn.values.size() || !seen.insert(v).second || !fn.values[v].type.isTile()) continue;
    const ir::Op* def = fn.values[v].def;
    if (!def) continue;
    switch (def->kind) {
      case ir::OpKind::Dot:
        if (found && found != def) return nullptr;
        found = def;
        break;
      case ir::OpKind::Binary: case ir::OpKind::Unary: case ir::OpKind::Fma: case ir::OpKind::Select:
      case ir::OpKind::Cast: case ir::OpKind::ConvertLayout: case ir::OpKind::TagSet:
        work.insert(work.end(), def->operands.begin(), def->operands.end());
        break;
      case ir::OpKind::If:  // a value an `if` may replace (a masked tile): what each branch yields
        for (size_t i = 0; i < def->results.size(); ++i)
          if (def->results[i] == v)
            for (const ir::Block& branch : def->regions)
              if (!branch.ops.empty() && branch.ops.back()->kind == ir::OpKind::Yield && i < branch.ops.back()->operands.size())
                work.push_back(branch.ops.back()->operands[i]);
        break;
      default:
        break;
    }
  }
  return found;
}

// Where the rows (or the columns) of a dot operand come from: a tile of a
// tensor (the view's last two axes; leading batch axes are fixed by the view),
// or the rows of an earlier dot's A (its columns: B's) when the operand is
// that dot's result in registers (P of P @ V, computed from S = Q @ K^T).
std::optional<OperandAxis> operandAxis(const ir::Function& fn, ir::ValueId value, bool column, int depth) {
  if (depth > 4) return std::nullopt;
  if (int tensor = traceOrigin(fn, value, 0); tensor >= 0) {
    const int64_t rank = static_cast<int64_t>(fn.params[static_cast<size_t>(tensor)].dims.size());
    if (rank < 2) return std::nullopt;
    const int64_t axis = column ? rank - 1 : rank - 2;
    return OperandAxis{tensor, axis, axis, false};
  }
  const ir::Op* producer = producingDot(fn, value);
  if (!producer || producer->operands.size() != 3) return std::nullopt;
  const ir::DotOp dot(*producer);
  std::optional<OperandAxis> from =
      !column ? operandAxis(fn, dot.a(), false, depth + 1) : operandAxis(fn, dot.b(), !dot.transB(), depth + 1);
  if (!from) return std::nullopt;
  from->key = column ? 1 : 0;  // a dot result's origin: [0] the row of A, [1] the column of B
  from->fromDot = true;
  return from;
}

std::optional<DotK> dotK(const ir::Function& fn, const ir::Op& op) {
  if (op.kind != ir::OpKind::Dot || op.operands.size() != 3) return std::nullopt;
  const ir::DotOp dot(op);
  std::optional<OperandAxis> a = operandAxis(fn, dot.a(), true, 0);
  std::optional<OperandAxis> b = operandAxis(fn, dot.b(), dot.transB(), 0);
  if (!a || !b) return std::nullopt;
  if (!sameExtent(fn.params[static_cast<size_t>(a->tensor)].dims[static_cast<size_t>(a->axis)],
                  fn.params[static_cast<size_t>(b->tensor)].dims[static_cast<size_t>(b->axis)]))
    return std::nullopt;
  return DotK{*a, *b};
}

// "row 5" / "column 5" of a tensor axis (the last two axes of a tile), else "index 5 along axis d".
std::string axisText(const ir::Param& tensor, int64_t axis, int64_t value) {
  const int64_t rank = static_cast<int64_t>(tensor.dims.size());
  if (axis == rank - 1) return "column " + std::to_string(value);
  if (axis == rank - 2) return "row " + std::to_string(value);
  return "index " + std::to_string(value) + " along axis " + std::to_string(axis);
}

bool narrowToFirstElements(TagFlow& flow, z3::solver& solver, const z3::expr& m, const z3::expr& n) {
  // The small launch and first iterations preferSmall found hold only under its
  // assumption literals: the checks below, asked without them, may find any launch
  // (a mutant of attention_wgmma's AG2043 came out at BH = 2^30 + 1). Each size and
  // iteration stays at most what it found.
  const z3::model found = solver.get_model();
  z3::expr within = flow.context().bool_val(true);
  for (const auto& [name, term] : flow.launchTerms())
    if (flow.isRuntimeSize(name)) within = within && z3::ule(term, found.eval(term, true));
  for (const LoopFrame& l : flow.loops()) within = within && z3::ule(l.j, found.eval(l.j, true));
  solver.add(within);
  for (int64_t bound : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    solver.push();
    solver.add(z3::ult(m, flow.bv(bound)) && z3::ult(n, flow.bv(bound)));
    if (flow.budget().check(solver) == z3::sat) break;
    solver.pop();
  }
  return flow.budget().check(solver) == z3::sat;
}

std::optional<z3::model> elementViolation(TagFlow& flow, DiagnosticSink& diags, const ir::Op& op,
                                          const std::string& property, const z3::expr& m, const z3::expr& n,
                                          const std::vector<int64_t>& shape, const z3::expr& violated) {
  z3::expr formula = flow.assumptions() && z3::ult(m, flow.bv(shape.at(0))) && z3::ult(n, flow.bv(shape.at(1))) &&
                     violated;
  if (flow.check(formula)) return std::nullopt;  // proven (one cached query)
  z3::solver solver(flow.context(), "QF_BV");
  SolverBudget& budget = flow.budget();
  budget.limit(solver);
  solver.add(formula);
  z3::check_result result = flow.preferSmall(solver);
  if (result == z3::unknown) {  // undecided is never silence
    diags.report(DiagId::CheckerCannotProve, op.range,
                 {property, "the solver gave up (" + budget.unknownReason(solver) + ")"});
    return std::nullopt;
  }
  if (result != z3::sat || !narrowToFirstElements(flow, solver, m, n)) return std::nullopt;
  return solver.get_model();
}

std::string iterationsOf(TagFlow& flow, const z3::model& model, Counterexample& cx) {
  std::string text;
  for (const LoopFrame& l : flow.loops()) {
    cx.iteration.emplace_back(l.name, modelValue(model, l.iv));
    text += (text.empty() ? "" : ", ") + l.name + " = " + std::to_string(cx.iteration.back().second);
  }
  return text;
}

std::string tileElementText(const std::string& name, int64_t m, int64_t n, const std::string& what) {
  return name.find('(') == std::string::npos
             ? name + "[" + std::to_string(m) + ", " + std::to_string(n) + "]"
             : "element (" + std::to_string(m) + ", " + std::to_string(n) + ") of the " + what;
}

bool readsDotResult(const ir::Function& fn, const ir::Block& block) {
  for (const auto& op : block.ops) {
    if (std::optional<DotK> t = dotK(fn, *op); t && (t->a.fromDot || t->b.fromDot)) return true;
    for (const ir::Block& region : op->regions)
      if (readsDotResult(fn, region)) return true;
  }
  return false;
}

std::map<int, std::set<int64_t>> kOrigins(const ir::Function& fn, const ir::Block& block) {
  std::map<int, std::set<int64_t>> out;
  std::function<void(const ir::Block&)> scan = [&](const ir::Block& b) {
    for (const auto& op : b.ops) {
      if (std::optional<DotK> t = dotK(fn, *op))
        for (int tensor : {t->a.tensor, t->b.tensor})  // every axis: the check skips elements outside the tensor
          for (size_t d = 0; d < fn.params[static_cast<size_t>(tensor)].dims.size(); ++d)
            out[tensor].insert(static_cast<int64_t>(d));
      for (const ir::Block& region : op->regions) scan(region);
    }
  };
  scan(block);
  return out;
}

// A Store into a tensor whose tile may be a dot's result (through casts,
// elementwise ops and loop-carried values) where A's rows and B's columns are
// as long as the destination's last two axes.
bool storesDotResult(const ir::Function& fn, const ir::Block& block) {
  auto feedsFrom = [&](ir::ValueId stored, const ir::Param& to) {
    std::vector<ir::ValueId> work{stored};
    std::set<ir::ValueId> seen;
    while (!work.empty() && seen.size() < 256) {
      ir::ValueId v = work.back();
      work.pop_back();
      if (v >= fn.values.size() || !seen.insert(v).second || !fn.values[v].type.isTile()) continue;
      const ir::Op* def = fn.values[v].def;
      if (!def) continue;
      switch (def->kind) {
        case ir::OpKind::Dot: {
          if (!dotK(fn, *def)) break;
          // A's rows and B's columns against the destination's last two axes
          // (leading batch axes, a head or an expert, are fixed by the view).
          const ir::DotOp dot(*def);
          std::optional<OperandAxis> rows = operandAxis(fn, dot.a(), false, 0);
          std::optional<OperandAxis> cols = operandAxis(fn, dot.b(), !dot.transB(), 0);
          const size_t r = to.dims.size();
          if (rows && cols && r >= 2 &&
              sameExtent(fn.params[static_cast<size_t>(rows->tensor)].dims[static_cast<size_t>(rows->axis)], to.dims[r - 2]) &&
              sameExtent(fn.params[static_cast<size_t>(cols->tensor)].dims[static_cast<size_t>(cols->axis)], to.dims[r - 1]))
            return true;
          break;
        }
        case ir::OpKind::For: {  // a loop result is what the body's yield carries out
          if (def->regions.empty() || def->regions[0].ops.empty()) break;
          const ir::Op& yield = *def->regions[0].ops.back();
          for (size_t i = 0; i < def->results.size(); ++i)
            if (def->results[i] == v && yield.kind == ir::OpKind::Yield && i < yield.operands.size())
              work.push_back(yield.operands[i]);
          break;
        }
        case ir::OpKind::Binary: case ir::OpKind::Unary: case ir::OpKind::Fma: case ir::OpKind::Select:
        case ir::OpKind::Cast: case ir::OpKind::ConvertLayout: case ir::OpKind::TagSet:
          for (ir::ValueId operand : def->operands) work.push_back(operand);
          break;
        default:
          break;
      }
    }
    return false;
  };
  for (const auto& op : block.ops) {
    if (op->kind == ir::OpKind::Store && op->operands.size() == 2) {
      const ir::StoreOp store(*op);
      const ir::Op* view = fn.values[store.view()].def;
      if (view && view->kind == ir::OpKind::View && !view->operands.empty())
        for (const ir::Param& p : fn.params)
          if (p.value == ir::ViewOp(*view).base() && p.kind == ir::ParamKind::Tensor && p.dims.size() >= 2 &&
              feedsFrom(store.value(), p))
            return true;
    }
    for (const ir::Block& region : op->regions)
      if (storesDotResult(fn, region)) return true;
  }
  return false;
}

void checkDotOperandsAgreeInK(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const Options& /*options*/,
                              const ir::Op& op) {
  std::optional<DotK> ks = dotK(fn, op);
  if (!ks) return;
  const ir::DotOp dot(op);
  if (userAssertsOrigins(fn, fn.body, storage(fn, dot.a()), storage(fn, dot.b()))) return;
  z3::context& ctx = flow.context();
  TagMap a = dotOperandTags(flow, fn, dot.a()), b = dotOperandTags(flow, fn, dot.b());
  bool transB = dot.transB();
  const ir::Param& pa = fn.params[static_cast<size_t>(ks->a.tensor)];
  const ir::Param& pb = fn.params[static_cast<size_t>(ks->b.tensor)];
  auto aIt = a.tags.find(originKey(ks->a.key));
  auto bIt = b.tags.find(originKey(ks->b.key));
  if (aIt == a.tags.end() || bIt == b.tags.end()) return;
  const std::vector<int64_t>& aShape = fn.values[dot.a()].type.shape;
  const std::vector<int64_t>& accShape = fn.values[dot.acc()].type.shape;
  if (aShape.size() != 2 || accShape.size() != 2) return;
  z3::expr m = ctx.bv_const("dot_m", 32), n = ctx.bv_const("dot_n", 32), k = ctx.bv_const("dot_k", 32);
  std::vector<z3::expr> coords{flow.coordVar(0), flow.coordVar(1)};
  std::vector<z3::expr> atA{m, k}, atB = transB ? std::vector<z3::expr>{n, k} : std::vector<z3::expr>{k, n};
  auto at = [&](const z3::expr& e, const std::vector<z3::expr>& to) { return substitute(e, coords, to); };
  z3::expr kA = at(aIt->second.value, atA), kB = at(bIt->second.value, atB);
  z3::expr described = at(aIt->second.present && aIt->second.known, atA) && at(bIt->second.present && bIt->second.known, atB);
  auto inside = [&](const TagMap& tags, const ir::Param& tensor, const std::vector<z3::expr>& to) {
    return insideTensor(flow, fn, tags, tensor, coords, to);
  };
  z3::expr formula = flow.assumptions() && z3::ult(m, flow.bv(aShape[0])) && z3::ult(k, flow.bv(aShape[1])) &&
                     z3::ult(n, flow.bv(accShape[1])) && described && kA != kB && inside(a, pa, atA) &&
                     inside(b, pb, atB);
  if (flow.check(formula)) return;  // proven (the common case, one cached query)
  z3::solver solver(ctx, "QF_BV");
  SolverBudget& budget = flow.budget();
  budget.limit(solver);
  solver.add(formula);
  z3::check_result result = flow.preferSmall(solver);  // small launches first: found fastest there
  if (result == z3::unknown) {  // undecided is never silence
    diags.report(DiagId::CheckerCannotProve, op.range,
                 {"the operands of this dot agree in K", "the solver gave up (" + budget.unknownReason(solver) + ")"});
    return;
  }
  if (result != z3::sat) return;
  // Then the first rows and columns of the accumulator (thread 0 holds acc[0, 0]).
  if (!narrowToFirstElements(flow, solver, m, n)) return;
  z3::model model = solver.get_model();
  int64_t mv = modelValue(model, m), nv = modelValue(model, n), kv = modelValue(model, k);
  int64_t aK = modelValue(model, kA), bK = modelValue(model, kB);
  std::string aName = flow.valueName(dot.a()), bName = flow.valueName(dot.b());
  const std::string& aTensor = pa.name;
  const std::string& bTensor = pb.name;
  std::string aElement = aName + "[" + std::to_string(mv) + ", " + std::to_string(kv) + "]";
  std::string bElement = transB ? bName + "[" + std::to_string(nv) + ", " + std::to_string(kv) + "]"
                                : bName + "[" + std::to_string(kv) + ", " + std::to_string(nv) + "]";
  // The lowest thread that holds acc[m, n] computes this product.
  Counterexample cx;
  nameLowestThreadHolding(cx, fn, fn.values[dot.acc()].type.layout, {mv, nv});
  for (const LoopFrame& l : flow.loops()) cx.iteration.emplace_back(l.name, modelValue(model, l.iv));
  std::string who = cx.thread ? "thread " + std::to_string(*cx.thread) + " (warp " + std::to_string(*cx.warp) +
                                    ", lane " + std::to_string(*cx.lane) + "), value " + std::to_string(*cx.value) + ": "
                              : std::string();
  std::string iteration;
  for (const auto& [name, v] : cx.iteration) iteration += (iteration.empty() ? "" : ", ") + name + " = " + std::to_string(v);
  std::string summary = who + aElement + " comes from " + axisText(pa, ks->a.axis, aK) + " of '" + aTensor + "' but " +
                        bElement + " from " + axisText(pb, ks->b.axis, bK) + " of '" + bTensor + "'" +
                        (iteration.empty() ? "" : " in iteration " + iteration);
  Diagnostic& d = diags.report(DiagId::DotOperandsDisagreeInK, op.range, {aName, bName, summary});
  cx.facts.emplace_back("element", aElement);
  cx.facts.emplace_back("element", bElement);
  cx.facts.emplace_back("a_k", std::to_string(aK));
  cx.facts.emplace_back("b_k", std::to_string(bK));
  // Where the two elements come from in their tensors (trans_b: B's view is (N, K)).
  auto originAt = [&](const TagMap& tags, const std::vector<z3::expr>& to) {
    std::string text = "(";
    for (int64_t d = 0; d < 3; ++d) {
      auto it = tags.tags.find(originKey(d));
      if (d == 2 && it == tags.tags.end()) break;
      text += (d ? ", " : "") + (it == tags.tags.end() ? std::string("?") : std::to_string(modelValue(model, at(it->second.value, to))));
    }
    return text + ")";
  };
  cx.facts.emplace_back("a_origin", originAt(a, atA));
  cx.facts.emplace_back("b_origin", originAt(b, atB));
  cx.facts.emplace_back("product", "acc[" + std::to_string(mv) + ", " + std::to_string(nv) + "] += " + aElement + " * " +
                                       bElement + " (k = " + std::to_string(kv) + ")");
  std::string launch = flow.launchText(model);
  if (!launch.empty()) cx.facts.emplace_back("launch", launch);
  cx.trace = a.trace;
  addLabels(cx.trace, b.trace, 8);
  d.counterexample = std::move(cx);
  d.notes.push_back("a dot multiplies a[m, k] by b[k, n]: both must come from the same K index of '" + aTensor +
                    "' and '" + bTensor + "'; check the K offsets of the loads (and the stage indices) that fill '" +
                    aName + "' and '" + bName + "'");
}

}  // namespace argus::checker

namespace argus::checker {

namespace {

// The first column of [0, K) that no product of row 0 reads at one launch
// (the model's), with what the loop did read; none when every column is
// read, or where an origin is unknown or the loop too long to evaluate.
struct Coverage {
  z3::model model;
  int64_t column = 0, extent = 0, trips = 0;
  std::optional<int64_t> first, last;
};

std::optional<Coverage> coverageAt(TagFlow& flow, const z3::model& model, const LoopFrame& loop,
                                   const z3::expr& rowZero, const z3::expr& describedRowZero, const z3::expr& trips,
                                   const z3::expr& K, const z3::expr& k, int64_t tileK) {
  // Every constant but this loop's j and k takes the model's value.
  std::vector<z3::expr> from, to;
  {
    std::vector<z3::expr> work{rowZero, describedRowZero, trips, K, loop.valid};
    std::set<unsigned> seen;
    while (!work.empty()) {
      z3::expr e = work.back();
      work.pop_back();
      if (!seen.insert(e.id()).second || !e.is_app()) continue;
      if (e.is_const() && e.decl().decl_kind() == Z3_OP_UNINTERPRETED) {
        if (!z3::eq(e, loop.j) && !z3::eq(e, k)) {
          from.push_back(e);
          to.push_back(model.eval(e, true));
        }
        continue;
      }
      for (unsigned i = 0; i < e.num_args(); ++i) work.push_back(e.arg(i));
    }
  }
  auto numeral = [&](const z3::expr& e) -> std::optional<int64_t> {
    z3::expr v = substitute(e, from, to).simplify();
    uint64_t bits = 0;
    if (!v.is_numeral() || !v.is_numeral_u64(bits)) return std::nullopt;
    return static_cast<int32_t>(static_cast<uint32_t>(bits));
  };
  std::optional<int64_t> kValue = numeral(K), tripValue = numeral(trips);
  constexpr int64_t kMaxEvaluations = 4096;
  if (!kValue || !tripValue || *kValue <= 0 || *tripValue * tileK > kMaxEvaluations) return std::nullopt;
  std::set<int64_t> covered;
  Coverage out{model, 0, 0, 0, std::nullopt, std::nullopt};
  for (int64_t j = 0; j < *tripValue; ++j)
    for (int64_t kk = 0; kk < tileK; ++kk) {
      std::vector<z3::expr> at{loop.j, k}, values{flow.bv(j), flow.bv(kk)};
      z3::expr isDescribed = substitute(substitute(describedRowZero, at, values), from, to).simplify();
      if (!isDescribed.is_true()) return std::nullopt;  // unknown somewhere: no claim
      std::optional<int64_t> c = numeral(substitute(rowZero, at, values));
      if (!c) return std::nullopt;
      covered.insert(*c);
      if (j == 0 && kk == 0) out.first = c;
      out.last = c;
    }
  while (out.column < *kValue && covered.count(out.column)) ++out.column;
  if (out.column >= *kValue) return std::nullopt;
  out.extent = *kValue;
  out.trips = *tripValue;
  return out;
}

}  // namespace

// Built-in: an accumulated dot() sums the whole K axis of its operands
// (AG2039). For acc = dot(a, b, acc) carried by a loop whose result is stored
// where a product belongs (storesDotResult), every column of A must meet the
// accumulator in some iteration: a trip count one short, or a K tile index
// one ahead, leaves the stored product partial, which neither a race nor the
// K pairing shows. At one launch, the smallest the requirements allow, fixed
// to numbers, the K origin of row 0 of the A operand is evaluated for every
// iteration and k (no solver: the terms simplify to numbers); a column of
// [0, K) that none of them is, with every origin known, makes row 0 of the
// stored product partial. A loop that visits the tiles in any order is judged
// by the set it covers, so it is never a false alarm.
void checkDotCoversK(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op) {
  std::optional<DotK> ks = dotK(fn, op);
  if (!ks || flow.loops().empty() || op.results.empty()) return;
  const ir::DotOp dot(op);  // dotK: a dot
  // The innermost loop carries the accumulator through this dot: straight, or
  // rescaled on the way (online softmax's acc * alpha).
  const LoopFrame& loop = flow.loops().back();
  const ir::Block& body = loop.op->regions[0];
  if (body.ops.empty() || body.ops.back()->kind != ir::OpKind::Yield) return;
  const ir::Op& yield = *body.ops.back();
  auto reaches = [&](ir::ValueId from, ir::ValueId arg) {
    std::vector<ir::ValueId> work{from};
    std::set<ir::ValueId> seen;
    while (!work.empty() && seen.size() < 64) {
      ir::ValueId v = work.back();
      work.pop_back();
      if (v == arg) return true;
      if (v >= fn.values.size() || !seen.insert(v).second || !fn.values[v].type.isTile()) continue;
      const ir::Op* def = fn.values[v].def;
      if (def && (def->kind == ir::OpKind::Binary || def->kind == ir::OpKind::Unary || def->kind == ir::OpKind::Fma ||
                  def->kind == ir::OpKind::Cast || def->kind == ir::OpKind::ConvertLayout))
        work.insert(work.end(), def->operands.begin(), def->operands.end());
    }
    return false;
  };
  bool carried = false;
  for (size_t i = 0; i + 1 < body.args.size() && i < yield.operands.size(); ++i)
    carried = carried || (yield.operands[i] == op.results[0] && i < loop.op->results.size() &&
                          reaches(dot.acc(), body.args[i + 1]));
  if (!carried) return;
  // ... and only a product stored where it belongs is required to be whole.
  if (!storesDotResult(fn, fn.body)) return;
  const ir::Param& pa = fn.params[static_cast<size_t>(ks->a.tensor)];
  const TagMap* tile = fn.values[dot.a()].type.isTile() ? flow.tilesTags(dot.a()) : nullptr;
  TagMap a = tile ? *tile : flow.viewTags(dot.a());
  auto it = a.tags.find(originKey(ks->a.key));
  const std::vector<int64_t>& aShape = fn.values[dot.a()].type.shape;
  if (it == a.tags.end() || aShape.size() != 2) return;
  z3::context& ctx = flow.context();
  z3::expr m = ctx.bv_const("cover_m", 32), k = ctx.bv_const("cover_k", 32);
  std::vector<z3::expr> coords{flow.coordVar(0), flow.coordVar(1)}, at{m, k};
  z3::expr column = substitute(it->second.value, coords, at);
  z3::expr described = substitute(it->second.present && it->second.known, coords, at);
  const ir::DimRef& dim = pa.dims[static_cast<size_t>(ks->a.axis)];
  z3::expr K = dim.constant >= 0 ? flow.bv(dim.constant) : ctx.bv_const(fn.sizeNames[static_cast<size_t>(dim.sizeIndex)].c_str(), 32);
  // The outer loops' iterations stay free (valid ones); this loop's j is ours to choose.
  z3::expr launch = flow.launchAssumptions();
  for (const LoopFrame& l : flow.loops())
    if (l.op != loop.op) launch = launch && l.valid;
  z3::expr trips = loop.tripCount;
  // One candidate launch, the smallest (sizes at most 2^16, far from the i32
  // wrap-around of cdiv near 2^31), fixed to numbers; there the K origins of
  // row 0 of the A operand, for every iteration and k, are plain numbers.
  // A column of [0, K) that none of them is makes row 0 of the stored product
  // partial: a trip short (or none), or a K tile one ahead.
  z3::expr small = ctx.bool_val(true);
  for (const auto& [name, term] : flow.launchTerms())
    if (TagFlow::isRuntimeSize(name))
      small = small && z3::ule(term, flow.bv(1 << 16)) && z3::uge(term, flow.bv(1));  // no empty tensor: its products are 0 anyway
  z3::solver solver(ctx, "QF_BV");
  SolverBudget& budget = flow.budget();
  budget.limit(solver);
  solver.add(launch && small && z3::ugt(K, flow.bv(0)));
  if (flow.preferSmall(solver) != z3::sat) return;
  z3::expr rowZero = substitute(column, {m}, {flow.bv(0)});
  z3::expr describedRowZero = substitute(described, {m}, {flow.bv(0)});
  // The smallest launch, then a ragged one (every runtime size one past a
  // multiple of 64, or 8 past where the requirements align it): a trip count
  // that rounds K down (K // BK) covers the whole axis whenever K is a
  // multiple of the tile, which the smallest launch may well be.
  std::optional<Coverage> miss = coverageAt(flow, solver.get_model(), loop, rowZero, describedRowZero, trips, K, k,
                                            aShape[1]);
  for (int64_t past : {1, 8, 16}) {
    if (miss) break;
    z3::expr ragged = ctx.bool_val(true);
    for (const auto& [name, term] : flow.launchTerms())
      if (TagFlow::isRuntimeSize(name)) ragged = ragged && (term & flow.bv(63)) == flow.bv(past);
    z3::solver raggedLaunch(ctx, "QF_BV");
    budget.limit(raggedLaunch);
    raggedLaunch.add(launch && small && z3::ugt(K, flow.bv(0)) && ragged);
    if (flow.preferSmall(raggedLaunch) != z3::sat) continue;
    miss = coverageAt(flow, raggedLaunch.get_model(), loop, rowZero, describedRowZero, trips, K, k, aShape[1]);
    break;
  }
  if (!miss) return;
  {
    std::string launchText = flow.launchText(miss->model);
    // "column 5" of A itself; "row 5" of K where A is P = softmax(Q @ K^T).
    std::string missing = axisText(pa, ks->a.axis, miss->column);
    std::string plural = missing.substr(0, missing.find(' ')) + "s";
    if (plural == "rows" || plural == "columns") plural += " ";
    else plural = "indices ";
    std::string extent = (dim.sizeIndex >= 0 ? fn.sizeNames[static_cast<size_t>(dim.sizeIndex)] : "K") + " = " +
                         std::to_string(miss->extent);
    std::string reads = miss->trips <= 0 ? "the loop over '" + loop.name + "' runs no iteration"
                        : "its " + std::to_string(miss->trips) + " iteration" + (miss->trips == 1 ? "" : "s") +
                              " over '" + loop.name + "' read " + plural + std::to_string(miss->first.value_or(0)) +
                              " to " + std::to_string(miss->last.value_or(0)) + " of '" + pa.name + "'";
    Diagnostic& d = diags.report(DiagId::DotMissesK, op.range, {missing, pa.name, extent, reads});
    Counterexample cx;
    cx.facts.emplace_back("missing", missing + " of '" + pa.name + "' (" + extent + ")");
    cx.facts.emplace_back("trips", std::to_string(miss->trips));
    if (!launchText.empty()) cx.facts.emplace_back("launch", launchText);
    cx.trace = a.trace;
    d.counterexample = std::move(cx);
    d.labels.push_back(Label{loop.op->range, "the loop that accumulates the product"});
    d.notes.push_back("the product stored from this accumulator must sum a[m, k] * b[k, n] over every k < K: check "
                      "the loop's trip count (cdiv(K, BK) tiles) and the K tile index of the loads");
  }
}

}  // namespace argus::checker
