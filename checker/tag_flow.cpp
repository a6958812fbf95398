// Tag flow: an abstract interpretation of the Tile IR whose state is the tags
// of every register tile and shared slot, as Z3 terms (checker/tag_state.h).
// Straight-line ops are exact; `if` merges (disagreement: unknown); loops are
// summarized by induction (tag_loops.cpp).
#include <algorithm>
#include <optional>

#include "checker/narrow_width.h"
#include "checker/relaxations.h"
#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::OpKind;

std::string originKey(int64_t dim) { return "origin[" + std::to_string(dim) + "]"; }

void addLabels(std::vector<Label>& into, const std::vector<Label>& from, size_t cap) {
  for (const Label& l : from) {
    if (into.size() >= cap) return;
    bool seen = false;
    for (const Label& m : into) seen = seen || (m.range.begin == l.range.begin && m.message == l.message);
    if (!seen) into.push_back(l);
  }
}

void mapTerms(TagMap& map, const std::function<z3::expr(const z3::expr&)>& f) {
  for (auto& [key, term] : map.tags) {
    term.value = f(term.value);
    term.known = f(term.known);
    term.present = f(term.present);
  }
}

// Both from the op table (ir/ops.def): a new op that writes memory is followed here as
// soon as it declares its Write effect and ARGUS_WRITES_FROM.
ir::ValueId writtenView(const ir::Op& op) {
  std::optional<size_t> operand = ir::writtenViewOperand(op.kind);
  return operand && *operand < op.operands.size() ? op.operands[*operand] : ir::kNoValue;
}

ir::ValueId writtenSource(const ir::Op& op) {
  std::optional<size_t> operand = ir::writtenDataOperand(op.kind);
  return operand && *operand < op.operands.size() ? op.operands[*operand] : ir::kNoValue;
}

z3::expr substitute(const z3::expr& e, const std::vector<z3::expr>& from, const std::vector<z3::expr>& to) {
  z3::expr_vector f(e.ctx()), t(e.ctx());
  for (size_t i = 0; i < from.size() && i < to.size(); ++i) {
    f.push_back(from[i]);
    t.push_back(to[i]);
  }
  z3::expr copy = e;
  return f.empty() ? copy : copy.substitute(f, t);
}

std::string TagFlow::position(SourceRange range) const {
  if (!file_) return "";
  LineCol lc = file_->lineCol(range.begin);
  return std::to_string(lc.line) + ":" + std::to_string(lc.column);
}

std::string TagFlow::valueName(ir::ValueId id) const {
  if (id < fn_.values.size() && !fn_.values[id].name.empty()) return fn_.values[id].name;
  if (id < fn_.values.size() && file_ && !fn_.values[id].range.empty()) return std::string(file_->slice(fn_.values[id].range));
  return "a value";
}

const TagMap* TagFlow::tilesTags(ir::ValueId id) const {
  auto it = tiles_.find(id);
  return it == tiles_.end() ? nullptr : &it->second;
}

const TagMap* TagFlow::bufferTags(ir::ValueId buffer) const {
  auto it = buffers_.find(buffer);
  return it == buffers_.end() ? nullptr : &it->second;
}

z3::expr TagFlow::launchAssumptions() const {
  z3::expr all = ctx_.bool_val(true);
  for (const z3::expr& c : launchConstraints_) all = all && c;
  return all;
}

z3::expr TagFlow::assumptions() const {
  z3::expr all = ctx_.bool_val(true);
  for (const z3::expr& c : launchConstraints_) all = all && c;
  for (const LoopFrame& l : loopStack_) all = all && l.valid;
  return all;
}

// Walks of a loop body repeat the same queries: each formula is asked once.
bool TagFlow::check(const z3::expr& formula) {
  if (auto it = proven_.find(formula.id()); it != proven_.end()) return it->second.second;
  // (The exact solver is made first: the order in which solvers are made shapes
  // the models of later queries, and the corpus's counterexamples are exact.)
  z3::solver solver(ctx_, "QF_BV");
  budget_.limit(solver);
  bool unsat = false;
  // Relaxations first, cheapest first: any that is unsatisfiable proves the
  // formula. Without its multiplier and divider circuits (the grid's
  // cdiv(M, BM) * cdiv(N, BN), a grouped order's pid // group), gemm_tc's
  // stage queries take a third of the time.
  std::optional<z3::expr> linear = abstractNonlinear(formula);
  auto tryRelaxed = [&](const z3::expr& relaxed) {
    z3::solver fast(ctx_, "QF_BV");
    budget_.limit(fast);
    fast.add(relaxed);
    unsat = budget_.check(fast) == z3::unsat;
  };
  if (linear) {
    std::optional<z3::expr> abstracted = abstractRemainders(*linear);
    tryRelaxed(abstracted ? *abstracted : *linear);
  }
  // Then restrictions: a model in a small launch's first iterations is a
  // model, found in milliseconds where the search for one among all launches
  // (a refuted loop guess, a persistent kernel's tile index mixed up) takes
  // seconds. Every size 200 first (ragged for the usual tiles; the divisions
  // by sizes then divide by numbers), then every size at most 256.
  // Every other unknown (an element's coordinates, a block) within 4096 as
  // well: a model there is a model, and the question then has a narrowed
  // form (narrow_width.h) that the solver answers several times faster.
  auto refutedSmall = [&](bool fixed) {
    z3::solver small(ctx_, "QF_BV");
    budget_.limit(small);
    small.add(formula);
    for (const LoopFrame& l : loops()) small.add(z3::ult(l.j, bv(4)));
    for (const auto& [name, term] : launchTerms())
      if (isRuntimeSize(name))
        small.add(fixed ? term == bv(200) : term <= bv(256));
    small.add(unknownsWithin(formula, 4096));
    return budget_.answer(small) == z3::sat;
  };
  if (!unsat && (linear || !loops().empty()) && (refutedSmall(true) || refutedSmall(false))) {
    proven_.emplace(formula.id(), std::make_pair(formula, false));
    return false;
  }
  if (!unsat)
    if (std::optional<z3::expr> abstracted = abstractRemainders(formula)) tryRelaxed(*abstracted);
  if (!unsat) {
    solver.add(formula);
    unsat = budget_.check(solver) == z3::unsat;
  }
  proven_.emplace(formula.id(), std::make_pair(formula, unsat));
  return unsat;
}

// ---------------------------------------------------------------- data movement

// The tags of element c of a view: a global view's `origin`, or the slot's tags.
TagMap TagFlow::viewTags(ir::ValueId view) {
  TagMap out;
  const ir::Op* viewOp = view < fn_.values.size() ? fn_.values[view].def : nullptr;
  if (!viewOp || viewOp->kind != OpKind::View || viewOp->operands.empty()) return out;
  ir::ValueId base = ir::ViewOp(*viewOp).base();
  const ir::Type& baseType = fn_.values[base].type;
  size_t r = baseType.shape.size(), k = fn_.values[view].type.shape.size();
  if (k > r) return out;
  std::vector<z3::expr> element;
  for (size_t d = 0; d < r; ++d) {
    z3::expr offset = d + 1 < viewOp->operands.size() ? scalar(viewOp->operands[d + 1]) : bv(0);
    element.push_back(d >= r - k ? offset + coordVar(d - (r - k)) : offset);
  }
  if (baseType.kind == ir::TypeKind::Tensor) {
    for (size_t i = 0; i < fn_.params.size(); ++i)
      if (fn_.params[i].value == base) out.originTensor = static_cast<int>(i);
    for (size_t d = 0; d < r && out.originTensor >= 0; ++d)
      out.originAxes.push_back(OriginAxis{out.originTensor, static_cast<int64_t>(d)});
    auto only = onlyOrigins_.find(out.originTensor);
    for (size_t d = 0; d < r; ++d)
      if (!filterOrigins_ || (only != onlyOrigins_.end() && only->second.count(static_cast<int64_t>(d))))
        out.tags.emplace(originKey(static_cast<int64_t>(d)), TagTerm{element[d], ctx_.bool_val(true), ctx_.bool_val(true), {}});
    return out;
  }
  const TagMap* slots = bufferTags(base);
  if (!slots) return out;
  std::vector<z3::expr> from;
  for (size_t d = 0; d < r; ++d) from.push_back(slotVar(d));
  out = *slots;
  mapTerms(out, [&](const z3::expr& e) { return substitute(e, from, element); });
  return out;
}

TagMap TagFlow::loadTags(ir::ValueId view, const ir::Op& op) {
  TagMap out = viewTags(view);
  out.tags.erase(kWrittenKey);  // a property of the slot, not of the data
  const ir::Op* viewOp = fn_.values[view].def;
  if (viewOp && viewOp->kind == ir::OpKind::View)
    addLabels(out.trace, {Label{op.range, "loaded from '" + valueName(ir::ViewOp(*viewOp).base()) + "' here"}}, 4);
  return out;
}

// A store writes the tile's tags into the slots its view covers.
void TagFlow::store(ir::ValueId view, const TagMap& tile, const ir::Op& op) {
  const ir::Op* viewOp = view < fn_.values.size() ? fn_.values[view].def : nullptr;
  if (!viewOp || viewOp->kind != OpKind::View || viewOp->operands.empty()) return;
  ir::ValueId buffer = ir::ViewOp(*viewOp).base();
  if (fn_.values[buffer].type.kind != ir::TypeKind::Shared) return;
  const std::vector<int64_t>& shape = fn_.values[view].type.shape;
  size_t r = fn_.values[buffer].type.shape.size(), k = shape.size();
  if (k > r) return;
  z3::expr inRegion = ctx_.bool_val(true);
  std::vector<z3::expr> from, to;
  for (size_t d = 0; d < r; ++d) {
    z3::expr offset = d + 1 < viewOp->operands.size() ? scalar(viewOp->operands[d + 1]) : bv(0);
    if (d < r - k) {
      inRegion = inRegion && slotVar(d) == offset;
    } else {
      size_t c = d - (r - k);
      inRegion = inRegion && slotVar(d) >= offset && slotVar(d) < offset + bv(shape[c]);
      from.push_back(coordVar(c));
      to.push_back(slotVar(d) - offset);
    }
  }
  TagMap& slots = buffers_[buffer];
  TagMap written = tile;
  written.tags.insert_or_assign(kWrittenKey, TagTerm{bv(0), ctx_.bool_val(true), ctx_.bool_val(true), {}});
  std::vector<std::string> keys;
  for (const auto& [key, term] : written.tags) keys.push_back(key);
  for (const auto& [key, term] : slots.tags)
    if (!written.tags.count(key)) keys.push_back(key);
  for (const std::string& key : keys) {
    auto newTerm = written.tags.find(key);
    auto oldTerm = slots.tags.find(key);
    bool hasNew = newTerm != written.tags.end(), hasOld = oldTerm != slots.tags.end();
    z3::expr no = ctx_.bool_val(false);
    z3::expr newValue = hasNew ? substitute(newTerm->second.value, from, to) : bv(0);
    z3::expr newKnown = hasNew ? substitute(newTerm->second.known, from, to) : no;
    z3::expr newPresent = hasNew ? substitute(newTerm->second.present, from, to) : no;
    std::vector<Label> why;
    if (hasNew) addLabels(why, newTerm->second.why, 3);
    if (hasOld) addLabels(why, oldTerm->second.why, 3);
    slots.tags.insert_or_assign(
        key, TagTerm{z3::ite(inRegion, newValue, hasOld ? oldTerm->second.value : bv(0)),
                     z3::ite(inRegion, newKnown, hasOld ? oldTerm->second.known : no),
                     z3::ite(inRegion, newPresent, hasOld ? oldTerm->second.present : no), why});
  }
  if (slots.originTensor != tile.originTensor && !slots.trace.empty()) slots.originTensor = -1;
  else slots.originTensor = tile.originTensor;
  if (slots.originAxes != tile.originAxes && !slots.trace.empty()) slots.originAxes.clear();
  else slots.originAxes = tile.originAxes;
  slots.trace = tile.trace;
  addLabels(slots.trace, {Label{op.range, "stored into '" + valueName(buffer) + "' here"}}, 4);
}

// ---------------------------------------------------------------- compute

// The axes an elementwise result's origin components index, merged with one
// more operand's, component by component: an operand without a component
// does not constrain its axis (a row statistic has no origin along the axis it
// summarizes, so acc / l_i keeps acc's column axis), and two operands whose
// components index different axes leave the result with none.
static void mergeOriginAxes(TagMap& merged, const TagMap& in) {
  std::vector<OriginAxis>& axes = merged.originAxes;
  if (axes.empty() || in.originAxes.empty() || axes.size() != in.originAxes.size()) {
    if (axes != in.originAxes) axes.clear();
    return;
  }
  for (size_t d = 0; d < axes.size(); ++d) {
    const std::string key = originKey(static_cast<int64_t>(d));
    if (!in.tags.count(key) || axes[d] == in.originAxes[d]) continue;
    if (!merged.tags.count(key)) {  // no operand so far had this component: its axis is this one's
      axes[d] = in.originAxes[d];
      continue;
    }
    axes.clear();
    return;
  }
}

// Elementwise: per element, a tag is kept where the operands that carry it
// agree, and unknown where they may not.
TagMap TagFlow::elementwise(const ir::Op& op) {
  TagMap out;
  bool first = true;
  // A tile of a lower-rank tensor combined with tiles of a higher-rank one (acc +
  // bias[None, :], a row of x times the weight row w) has its origin components keyed by
  // its own tensor's axes: merged by key, bias's axis 0 would meet acc's rows and spoil
  // the result's origin (where the product lands is AG2019's, where a row lands AG2018's).
  // Such operands keep their other tags only; whether they agree is AG2046's.
  size_t widestOrigin = 0;
  for (ir::ValueId id : op.operands)
    if (const TagMap* in = tilesTags(id); in && !in->tags.empty())
      widestOrigin = std::max(widestOrigin, in->originAxes.size());
  TagMap withoutOrigin;
  for (ir::ValueId id : op.operands) {
    const TagMap* in = tilesTags(id);
    if (!in) continue;
    const bool stripped = !in->originAxes.empty() && in->originAxes.size() < widestOrigin;
    if (stripped) {
      withoutOrigin = *in;
      for (size_t d = 0; d < in->originAxes.size(); ++d) withoutOrigin.tags.erase(originKey(static_cast<int64_t>(d)));
      withoutOrigin.originAxes.clear();
      withoutOrigin.originTensor = -1;
      in = &withoutOrigin;
    }
    // The origin's axes first, against the components merged so far.
    if (!stripped && !in->tags.empty()) {
      if (first) {
        out.originTensor = in->originTensor;
        out.originAxes = in->originAxes;
      } else {
        if (out.originTensor != in->originTensor) out.originTensor = -1;
        mergeOriginAxes(out, *in);
      }
      first = false;
    }
    for (const auto& [key, term] : in->tags) {
      auto it = out.tags.find(key);
      if (it == out.tags.end()) {
        out.tags.emplace(key, term);
        continue;
      }
      TagTerm& t = it->second;
      z3::expr agree = !(t.present && term.present) || (t.known && term.known && t.value == term.value);
      t.known = z3::ite(t.present, z3::ite(term.present, agree, t.known), term.known);
      t.value = z3::ite(t.present, t.value, term.value);
      t.present = t.present || term.present;
      addLabels(t.why, term.why, 3);
      addLabels(t.why, {Label{op.range, "operands of this operation may disagree on tag '" + key + "'"}}, 3);
    }
    addLabels(out.trace, in->trace, 4);
  }
  return out;
}

TagMap TagFlow::reduceTags(const TagMap& in, int64_t axis, const ir::Op& op) {
  TagMap out = in;
  // A row statistic has no origin along the axis it summarizes: it drops that
  // component, so that x - max(x) keeps x's (an unknown one would spoil it).
  out.tags.erase(originKey(axis));
  z3::expr c = coordVar(static_cast<size_t>(axis));
  for (auto& [key, term] : out.tags) {
    bool dependsOnAxis = key == originKey(axis);
    for (const z3::expr* e : {&term.value, &term.known, &term.present})
      dependsOnAxis = dependsOnAxis || !z3::eq(substitute(*e, {c}, {bv(0)}), *e);
    if (!dependsOnAxis) continue;
    term.present = ctx_.bool_val(true);
    term.known = ctx_.bool_val(false);
    addLabels(term.why, {Label{op.range, "the reduction along axis " + std::to_string(axis) + " here combines elements with different '" + key + "'"}}, 3);
  }
  return out;
}

// True when `term` (over k < extent) is the same for every k, under `bounds`.
bool TagFlow::independent(const z3::expr& term, const z3::expr& k, int64_t extent, const std::vector<z3::expr>& bounds) {
  z3::expr k2 = ctx_.bv_const("k_other", 32);
  z3::expr formula = assumptions() && z3::ult(k, bv(extent)) && z3::ult(k2, bv(extent)) &&
                     term != substitute(term, {k}, {k2});
  for (const z3::expr& b : bounds) formula = formula && b;
  return check(formula);
}

// dot(a, b, acc)[m, n] has origin (a.origin.row at (m, k), b.origin.col at (k, n)),
// which must not depend on k; acc's user tags pass through.
TagMap TagFlow::dotTags(const ir::Op& op) {
  TagMap out;
  if (kOnly_) return out;  // nothing reads a dot's tags
  const ir::DotOp dot(op);
  if (const TagMap* acc = tilesTags(dot.acc())) {
    out = *acc;
    for (auto it = out.tags.begin(); it != out.tags.end();)
      it = it->first.rfind("origin[", 0) == 0 ? out.tags.erase(it) : std::next(it);
  }
  out.originTensor = -1;
  out.originAxes.clear();
  const std::vector<int64_t>& aShape = fn_.values[dot.a()].type.shape;
  if (aShape.size() != 2) return out;
  // origin[0] indexes A's rows, origin[1] B's columns: of an operand whose origin has r
  // components (a rank-r tensor; leading batch axes, an expert's weights, are fixed by the
  // view), components r - 2 and r - 1 are the tile's rows and columns.
  std::vector<OriginAxis> axes;
  z3::expr k = ctx_.bv_const("k", 32), m = coordVar(0), n = coordVar(1);
  std::vector<z3::expr> bounds{z3::ult(m, bv(aShape[0])), z3::ult(n, bv(fn_.values[dot.acc()].type.shape[1]))};
  const char* names[] = {"row", "col"};
  for (int side = 0; side < 2; ++side) {
    ir::ValueId operandId = op.operands[static_cast<size_t>(side)];
    const TagMap* tile = fn_.values[operandId].type.isTile() ? tilesTags(operandId) : nullptr;
    TagMap operand = tile ? *tile : viewTags(operandId);
    addLabels(out.trace, operand.trace, 4);
    // With trans_b, b[k, n] is b_view[n, k]: its column origin is the view's row's.
    bool transposed = side == 1 && ir::DotOp(op).transB();
    const size_t components = operand.originAxes.size() >= 2 ? operand.originAxes.size() : 2;
    const size_t key = components - 2 + (transposed ? 0 : static_cast<size_t>(side));
    auto it = operand.tags.find(originKey(static_cast<int64_t>(key)));
    if (operand.originAxes.size() >= 2) axes.push_back(operand.originAxes[key]);
    if (it == operand.tags.end()) continue;
    // Operand coordinates: a[m, k] (c0 = m, c1 = k), b[k, n] (c0 = k, c1 = n; trans_b: c0 = n, c1 = k).
    std::vector<z3::expr> to = side == 0 ? std::vector<z3::expr>{m, k}
                                         : transposed ? std::vector<z3::expr>{n, k} : std::vector<z3::expr>{k, n};
    z3::expr value = substitute(it->second.value, {coordVar(0), coordVar(1)}, to);
    z3::expr known = substitute(it->second.known, {coordVar(0), coordVar(1)}, to);
    z3::expr present = substitute(it->second.present, {coordVar(0), coordVar(1)}, to);
    TagTerm term{substitute(value, {k}, {bv(0)}), substitute(known, {k}, {bv(0)}), substitute(present, {k}, {bv(0)}),
                 it->second.why};
    // One summary of (present, known, value) that must not change along k.
    z3::expr summary = z3::ite(present, z3::ite(known, value, bv(-1)), bv(-2));
    z3::expr flags = z3::ite(present, bv(2), bv(0)) + z3::ite(known, bv(1), bv(0));
    if (!exactDots_ || (!dotResultsAtFirstK_ && !independent(z3::concat(summary, flags), k, aShape[1], bounds))) {
      term.present = ctx_.bool_val(true);
      term.known = ctx_.bool_val(false);
      addLabels(term.why, {Label{op.range, std::string("the ") + (side ? "B" : "A") + " operand's origin." + names[side] +
                                               " changes along K in this dot"}}, 3);
    }
    out.tags.insert_or_assign(originKey(side), term);
  }
  if (axes.size() == 2) out.originAxes = std::move(axes);
  return out;
}

// ---------------------------------------------------------------- walk

void TagFlow::run(const AssertHook& hook) {
  hook_ = hook;
  declareLaunch();
  std::vector<const ir::Op*> enclosing;
  prepass(fn_.body, enclosing);
  walk(fn_.body);
}

bool TagFlow::readsShared(ir::ValueId view) const {
  const ir::Op* def = view < fn_.values.size() ? fn_.values[view].def : nullptr;
  return def && def->kind == OpKind::View && !def->operands.empty() &&
         fn_.values[ir::ViewOp(*def).base()].type.kind == ir::TypeKind::Shared;
}

void TagFlow::walk(const ir::Block& block) {
  for (const auto& op : block.ops) step(*op);
}

void TagFlow::step(const ir::Op& op) {
  auto resultIsTile = [&] { return !op.results.empty() && fn_.values[op.results[0]].type.isTile(); };
  switch (op.kind) {
    case OpKind::Load: {
      const ir::LoadOp load(op);
      if (!op.operands.empty() && recording_ && hook_ && readsShared(load.view())) hook_(op);  // "reads written slots"
      if (resultIsTile()) tiles_[op.results[0]] = loadTags(load.view(), op);
      return;
    }
    case OpKind::Store:
      if (op.operands.size() == 2) {
        const ir::StoreOp storeOp(op);
        const TagMap* t = tilesTags(storeOp.value());
        const ir::Op* view = fn_.values[storeOp.view()].def;
        bool global = view && view->kind == OpKind::View && !view->operands.empty() &&
                      fn_.values[ir::ViewOp(*view).base()].type.kind == ir::TypeKind::Tensor;
        if (global && recording_ && hook_) hook_(op);  // "lands where its origin says"
        store(storeOp.view(), t ? *t : TagMap{}, op);
      }
      return;
    case OpKind::CopyAsync:
    case OpKind::CopyBulk:  // (dst, src[, bars, index]): the tags the slot holds once the copy lands
      if (op.operands.size() >= 2) store(writtenView(op), loadTags(writtenSource(op), op), op);
      return;
    case OpKind::AllocShared:
      buffers_[op.results[0]] = TagMap{};
      return;
    case OpKind::Binary: case OpKind::Compare: case OpKind::Unary: case OpKind::Fma:
    case OpKind::Select: case OpKind::Cast:
      if (resultIsTile()) tiles_[op.results[0]] = elementwise(op);
      // "a product's epilogue operand is taken where the product's element is"
      if (recording_ && hook_ && (op.kind == OpKind::Binary || op.kind == OpKind::Fma) && resultIsTile()) hook_(op);
      return;
    case OpKind::ConvertLayout:
      if (const TagMap* t = tilesTags(ir::ConvertLayoutOp(op).x())) tiles_[op.results[0]] = *t;
      return;
    case OpKind::Reshape: {
      // Result element c' is operand element c with the same row-major index.
      const ir::ValueId x = ir::ReshapeOp(op).x();
      const TagMap* t = tilesTags(x);
      if (!t) return;
      const std::vector<int64_t>& from = fn_.values[x].type.shape;
      const std::vector<int64_t>& to = fn_.values[op.results[0]].type.shape;
      z3::expr linear = bv(0);
      for (size_t d = 0; d < to.size(); ++d) linear = linear * bv(to[d]) + coordVar(d);
      std::vector<z3::expr> vars, terms;
      int64_t stride = 1;
      for (size_t e = from.size(); e-- > 0;) {
        vars.push_back(coordVar(e));
        terms.push_back(z3::urem(z3::udiv(linear, bv(stride)), bv(from[e])));
        stride *= from[e];
      }
      TagMap out = *t;
      mapTerms(out, [&](const z3::expr& e) { return substitute(e, vars, terms); });
      tiles_[op.results[0]] = std::move(out);
      return;
    }
    case OpKind::Broadcast: {
      const ir::ValueId x = ir::BroadcastOp(op).x();
      const TagMap* t = tilesTags(x);
      if (!t) return;
      TagMap out = *t;
      const std::vector<int64_t>& from = fn_.values[x].type.shape;
      const std::vector<int64_t>& to = fn_.values[op.results[0]].type.shape;
      for (size_t d = 0; d < from.size() && d < to.size(); ++d) {
        if (from[d] != 1 || to[d] == 1) continue;
        mapTerms(out, [&](const z3::expr& e) { return substitute(e, {coordVar(d)}, {bv(0)}); });
      }
      tiles_[op.results[0]] = std::move(out);
      return;
    }
    case OpKind::Reduce: {
      const ir::ReduceOp reduce(op);
      if (const TagMap* t = tilesTags(reduce.x())) tiles_[op.results[0]] = reduceTags(*t, reduce.axis(), op);
      return;
    }
    case OpKind::Dot:
      if (recording_ && hook_) hook_(op);  // "the operands agree in K"
      if (op.operands.size() == 3) tiles_[op.results[0]] = dotTags(op);
      return;
    case OpKind::TagSet: {
      const ir::TagSetOp tag(op);
      TagMap out;
      if (const TagMap* t = tilesTags(tag.tile())) out = *t;
      if (!tag.tagName().empty())
        out.tags.insert_or_assign(tag.tagName(),
                                  TagTerm{scalar(tag.tagValue()), ctx_.bool_val(true), ctx_.bool_val(true), {}});
      addLabels(out.trace, {Label{op.range, "tagged here"}}, 4);
      tiles_[op.results[0]] = std::move(out);
      return;
    }
    case OpKind::Assert:
      if (recording_ && hook_) hook_(op);
      return;
    case OpKind::For: return walkFor(op);
    case OpKind::If: return walkIf(op);
    // Scalars, views and synchronization carry no tags; splat and iota tiles start without
    // any, and reduce_all's result is a scalar.
    case OpKind::Const: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Splat:
    case OpKind::Iota: case OpKind::ReduceAll: case OpKind::View: case OpKind::Barrier:
    case OpKind::CommitGroup: case OpKind::WaitGroup: case OpKind::MbarrierInit: case OpKind::MbarrierExpectTx:
    case OpKind::MbarrierArrive: case OpKind::MbarrierWait: case OpKind::Yield:
      return;
  }
}

// Both branches from the same state. With a condition the encoding understands
// the merge is exact; otherwise a tag the branches may disagree on is unknown.
void TagFlow::walkIf(const ir::Op& op) {
  if (op.regions.size() != 2) return;
  auto beforeBuffers = buffers_;
  auto yields = [&](const ir::Block& region) {
    std::vector<TagMap> out;
    if (!region.ops.empty() && region.ops.back()->kind == OpKind::Yield)
      for (ir::ValueId v : region.ops.back()->operands) {
        const TagMap* t = tilesTags(v);
        out.push_back(t ? *t : TagMap{});
      }
    return out;
  };
  walk(op.regions[0]);
  std::vector<TagMap> thenYields = yields(op.regions[0]);
  auto thenBuffers = std::move(buffers_);
  buffers_ = beforeBuffers;
  walk(op.regions[1]);
  std::vector<TagMap> elseYields = yields(op.regions[1]);
  // Per element: carried on both paths and equal, or on neither; else unknown.
  std::optional<z3::expr> condition = op.operands.empty() ? std::nullopt : truth(ir::IfOp(op).condition());
  auto merge = [&](const TagMap& a, const TagMap& b) {
    TagMap out = a;
    z3::expr no = ctx_.bool_val(false);
    if (condition) {  // exact: the branch the condition takes
      for (const auto& [key, term] : b.tags)
        if (!out.tags.count(key)) out.tags.emplace(key, TagTerm{term.value, no, no, {}});
      for (auto& [key, term] : out.tags) {
        auto other = b.tags.find(key);
        TagTerm t = other != b.tags.end() ? other->second : TagTerm{term.value, no, no, {}};
        term.value = z3::ite(*condition, term.value, t.value);
        term.known = z3::ite(*condition, term.known, t.known);
        term.present = z3::ite(*condition, term.present, t.present);
        addLabels(term.why, t.why, 3);
      }
      mergeOrigins(out, a, b);
      addLabels(out.trace, b.trace, 4);
      return out;
    }
    for (const auto& [key, term] : b.tags)
      if (!out.tags.count(key)) out.tags.emplace(key, TagTerm{term.value, no, no, {}});
    for (auto& [key, term] : out.tags) {
      auto other = b.tags.find(key);
      TagTerm t = other != b.tags.end() ? other->second : TagTerm{term.value, no, no, {}};
      z3::expr agree = (term.present && t.present && term.known && t.known && term.value == t.value) ||
                       (!term.present && !t.present);
      term.known = agree;
      term.present = term.present || t.present;
      addLabels(term.why, t.why, 3);
      addLabels(term.why, {Label{op.range, "the branches of this if may disagree on tag '" + key + "'"}}, 3);
    }
    mergeOrigins(out, a, b);
    addLabels(out.trace, b.trace, 4);
    return out;
  };
  for (size_t i = 0; i < op.results.size() && i < thenYields.size() && i < elseYields.size(); ++i)
    if (fn_.values[op.results[i]].type.isTile()) tiles_[op.results[i]] = merge(thenYields[i], elseYields[i]);
  for (auto& [buffer, slots] : buffers_) {
    auto it = thenBuffers.find(buffer);
    if (it != thenBuffers.end()) slots = merge(it->second, slots);
  }
}

}  // namespace argus::checker
