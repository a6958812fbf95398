// Shared views stay in bounds (AG2030) for every loop iteration, program id and
// launch size. Sema rejects views whose offsets are constants (AG4026); this
// check takes the others: each offset of a view of a shared buffer is encoded
// as a 32-bit bit-vector over the enclosing loops' iteration indices, the
// program ids and the runtime sizes (checker/invariant_scalar.h), under the
// conditions of the enclosing `if`s, the kernel's `require(...)`s and its grid,
// and Z3 is asked for an assignment where some covered element falls outside
// the buffer. A model is minimized (first iteration, smallest launch) and
// reported with the lowest thread that touches an element outside, which is
// where the CPU interpreter stops too. An offset that depends on a value the
// encoding does not interpret gets "cannot prove" (AG2034), never silence.
#include <z3++.h>

#include <memory>

#include "checker/invariant_check.h"
#include "checker/invariant_scalar.h"
#include "checker/solver_budget.h"
#include "ir/async.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::OpKind;

namespace {

struct ViewUse {
  const ir::Op* op = nullptr;
  ir::Layout layout;
  bool store = false;
  int dotOperand = -1;
  int64_t chunk = 1;  // copy_async: elements per chunk along the last axis (ir/async.h)
};

// The first op that accesses the view, with the layout that says who touches what.
ViewUse firstUse(const ir::Function& fn, ir::ValueId view) {
  ViewUse found;
  forEachOpWithDepth(fn.body, 0, [&](const ir::Op& op, int) {
    if (found.op) return;
    // Who touches what: the op's declared effect on this view (ir/ops.def).
    for (const ir::MemoryEffect& effect : ir::memoryEffects(fn, op)) {
      if (effect.view != view) continue;
      std::optional<ir::Layout> layout = ir::effectLayout(fn, op, *effect.decl);
      if (!layout) continue;
      const ir::Type& t = fn.typeOf(view);
      const bool chunks = effect.decl->elements == ir::EffectElements::AsyncCopyChunks;
      found = {&op, *layout, effect.decl->access == ir::MemoryAccess::Write,
               op.kind == OpKind::Dot ? static_cast<int>(effect.decl->operand) : -1,
               chunks ? ir::asyncCopyVectorElements(t.dtype, t.shape) : 1};
      return;
    }
  });
  return found;
}

struct Outside {
  int64_t thread = -1, value = 0;
  std::vector<int64_t> element;
};

// The lowest thread (and its lowest value) that touches an element outside the buffer.
Outside firstThreadOutside(const ir::Function& fn, const ViewUse& use, const std::vector<int64_t>& offset,
                           const std::vector<int64_t>& viewShape, const std::vector<int64_t>& bufferShape) {
  Outside out;
  size_t rank = bufferShape.size(), k = viewShape.size();
  auto elementOf = [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> e(rank);
    for (size_t d = 0; d < rank; ++d) e[d] = offset[d] + (d + k >= rank && d + k - rank < c.size() ? c[d + k - rank] : 0);
    return e;
  };
  auto outside = [&](const std::vector<int64_t>& e) {
    for (size_t d = 0; d < rank; ++d)
      if (e[d] < 0 || e[d] >= bufferShape[d]) return true;
    return false;
  };
  if (use.op) {
    ir::Distribution dist = ir::Distribution::of(use.layout, fn.numWarps);
    int64_t kExtent = use.dotOperand == 0 && viewShape.size() == 2 ? viewShape[1]
                      : use.dotOperand == 1 && viewShape.size() == 2 ? viewShape[0] : 1;
    for (int64_t t = 0; t < fn.numThreads(); ++t) {
      if (use.store && !dist.isPrimaryOwner(t)) continue;
      for (int64_t v = 0; v < dist.valuesPerThread; ++v) {
        std::vector<int64_t> c = dist.coordinate(t, v);
        if (!c.empty()) c.back() *= use.chunk;  // a copy_async chunk starts at its first element
        for (int64_t kk = 0; kk < kExtent; ++kk) {
          std::vector<int64_t> tc = c;
          if (use.dotOperand == 0 && tc.size() == 2) tc = {c[0], kk};
          if (use.dotOperand == 1 && tc.size() == 2) tc = {kk, c[1]};
          if (tc.size() != k) continue;
          std::vector<int64_t> e = elementOf(tc);
          if (outside(e)) return Outside{t, v, e};
        }
      }
    }
  }
  // No use (or none reaches outside with its layout): the first element outside, in row-major order.
  std::vector<int64_t> c(k, 0);
  for (size_t d = 0; d < k; ++d) {
    size_t bd = d + rank - k;
    if (offset[bd] + viewShape[d] > bufferShape[bd]) c[d] = viewShape[d] - 1;
  }
  out.element = elementOf(c);
  return out;
}

std::string elementText(const std::string& buffer, const std::vector<int64_t>& element) {
  std::string s = buffer + "[";
  for (size_t d = 0; d < element.size(); ++d) s += (d ? ", " : "") + std::to_string(element[d]);
  return s + "]";
}

std::string opVerb(const ViewUse& use) {
  if (!use.op) return "touches";
  return use.store ? "writes" : "reads";
}

class BoundsCheck {
 public:
  BoundsCheck(const ir::Function& fn, DiagnosticSink& diags, const Options& options)
      : fn_(fn), diags_(diags), options_(options) {}

  void run() {
    ScalarScope scope;
    walk(fn_.body, scope);
  }

 private:
  void walk(const ir::Block& block, ScalarScope& scope) {
    for (const auto& op : block.ops) {
      if (op->kind == OpKind::View) checkView(*op, scope);
      if (op->kind == OpKind::For && !op->regions.empty()) {
        scope.loops.push_back(op.get());
        walk(op->regions[0], scope);
        scope.loops.pop_back();
      } else if (op->kind == OpKind::If && op->regions.size() == 2 && !op->operands.empty()) {
        for (int branch = 0; branch < 2; ++branch) {
          scope.conditions.push_back({ir::IfOp(*op).condition(), branch == 0});
          walk(op->regions[static_cast<size_t>(branch)], scope);
          scope.conditions.pop_back();
        }
      } else {
        for (const ir::Block& region : op->regions) walk(region, scope);
      }
    }
  }

  static bool allConstant(const ir::Function& fn, const ir::Op& view) {
    for (size_t i = 1; i < view.operands.size(); ++i) {
      const ir::Op* def = fn.values[view.operands[i]].def;
      if (!def || def->kind != OpKind::Const) return false;
    }
    return true;
  }

  // Interval arithmetic settles most offsets (a stage index kt % S) without the solver.
  bool provedByRanges(const ir::Op& view, const ScalarScope& scope) const {
    const std::vector<int64_t>& shape = fn_.typeOf(ir::ViewOp(view).base()).shape;
    const std::vector<int64_t>& viewShape = fn_.typeOf(view.results[0]).shape;
    size_t rank = shape.size(), k = viewShape.size();
    if (view.operands.size() != rank + 1 || k > rank) return false;
    for (size_t d = 0; d < rank; ++d) {
      auto r = scalarRange(fn_, scope, view.operands[d + 1]);
      int64_t extent = d + k >= rank ? viewShape[d + k - rank] : 1;
      if (!r || r->lo < 0 || r->hi + extent > shape[d]) return false;
    }
    return true;
  }

  void checkView(const ir::Op& view, const ScalarScope& scope) {
    if (view.operands.empty() || view.results.empty()) return;
    const ir::ViewOp viewOp(view);
    const ir::Type& base = fn_.typeOf(viewOp.base());
    if (base.kind != ir::TypeKind::Shared || allConstant(fn_, view)) return;  // sema checks constant offsets
    if (provedByRanges(view, scope)) return;
    const std::vector<int64_t>& shape = base.shape;
    const std::vector<int64_t>& viewShape = fn_.typeOf(view.results[0]).shape;
    size_t rank = shape.size(), k = viewShape.size();
    if (view.operands.size() != rank + 1 || k > rank) return;
    if (budget_.spent()) {  // never silence: what is left unasked is "cannot prove"
      diags_.report(DiagId::SharedBoundsUnproved, view.range,
                    {shapeText(viewShape), sharedName(fn_, viewOp.base()), shapeText(shape), budget_.spentReason()});
      return;
    }
    try {
      if (!ctx_) ctx_ = &SolverBudget::contextFor(options_, ownContext_);
      ScalarEncoder enc(*ctx_, fn_, scope);
      std::vector<z3::expr> offsets;
      z3::expr outside = ctx_->bool_val(false);
      for (size_t d = 0; d < rank; ++d) {
        z3::expr x = enc.scalar(view.operands[d + 1]);
        offsets.push_back(x);
        int64_t extent = d + k >= rank ? viewShape[d + k - rank] : 1;
        z3::expr x64 = z3::sext(x, 32);
        outside = outside || x64 < ctx_->bv_val(0, 64) || x64 + ctx_->bv_val(extent, 64) > ctx_->bv_val(shape[d], 64);
      }
      // An offset that depends on a scalar argument or a computed value is data
      // the checker does not model; the CPU interpreter checks it (docs/checker.md, Limits).
      if (!enc.opaqueNames().empty()) return;
      z3::solver solver = bitVectorSolver(*ctx_);
      budget_.limit(solver);
      for (const z3::expr& c : enc.constraints()) solver.add(c);
      solver.add(outside);
      z3::check_result result = budget_.check(solver);
      if (result == z3::unsat) return;
      std::string name = sharedName(fn_, viewOp.base());
      if (result == z3::unknown) {
        diags_.report(DiagId::SharedBoundsUnproved, view.range,
                      {shapeText(viewShape), name, shapeText(shape), "the solver gave up (" + budget_.unknownReason(solver) + ")"});
        return;
      }
      z3::model model = enc.minimize(solver.assertions(), budget_).value_or(solver.get_model());
      report(view, enc, model, offsets, viewShape, shape, name);
    } catch (const z3::exception& e) {
      diags_.report(DiagId::SharedBoundsUnproved, view.range,
                    {shapeText(viewShape), sharedName(fn_, viewOp.base()), shapeText(shape),
                     std::string("the solver failed: ") + e.msg()});
    }
  }

  void report(const ir::Op& view, ScalarEncoder& enc, const z3::model& model, const std::vector<z3::expr>& offsets,
              const std::vector<int64_t>& viewShape, const std::vector<int64_t>& shape, const std::string& name) {
    std::vector<int64_t> offset;
    for (const z3::expr& x : offsets) offset.push_back(ScalarEncoder::valueOf(model, x));
    ViewUse use = firstUse(fn_, view.results[0]);
    Outside out = firstThreadOutside(fn_, use, offset, viewShape, shape);
    std::vector<std::pair<std::string, int64_t>> iteration = enc.iterationValues(model);
    std::vector<std::pair<std::string, int64_t>> launch = enc.launchValues(model);
    std::string when;
    for (const auto& [n, v] : iteration) when += (when.empty() ? "" : ", ") + n + " = " + std::to_string(v);
    for (const auto& [n, v] : launch) when += (when.empty() ? "" : ", ") + n + " = " + std::to_string(v);
    std::string detail = (when.empty() ? std::string("its offset is ") : "when " + when + " its offset is ") +
                         shapeText(offset) + ", so " +
                         (out.thread >= 0 ? "thread " + std::to_string(out.thread) + " " + opVerb(use) + " "
                                          : std::string("it covers ")) +
                         elementText(name, out.element) + ", outside the buffer";
    Diagnostic& d = diags_.report(DiagId::SharedViewOutOfBounds, view.range,
                                  {shapeText(viewShape), name, shapeText(shape), detail});
    const ir::Op* alloc = fn_.values[ir::ViewOp(view).base()].def;
    if (alloc) d.labels.push_back(Label{alloc->range, "'" + name + "' has shape " + shapeText(shape)});
    if (use.op && use.op != &view) d.labels.push_back(Label{use.op->range, "the access that goes outside"});
    Counterexample cx;
    if (out.thread >= 0) {
      cx.thread = out.thread;
      cx.warp = out.thread / 32;
      cx.lane = out.thread % 32;
      cx.value = out.value;
    }
    cx.iteration = iteration;
    cx.facts.emplace_back("element", elementText(name, out.element));
    cx.facts.emplace_back("offset", shapeText(offset));
    std::string launchText;
    for (const auto& [n, v] : launch) launchText += (launchText.empty() ? "" : ", ") + n + " = " + std::to_string(v);
    if (!launchText.empty()) cx.facts.emplace_back("launch", launchText);
    d.counterexample = std::move(cx);
    std::string note = "every offset of a view of shared memory must keep the whole view inside the buffer, in "
                       "every iteration and for every launch";
    if (!iteration.empty()) note += "; check the loop bounds and the stage index (a ring of S stages is indexed % S)";
    d.notes.push_back(note);
  }

  const ir::Function& fn_;
  DiagnosticSink& diags_;
  const Options& options_;
  std::unique_ptr<z3::context> ownContext_;  // only when check() gave none
  z3::context* ctx_ = nullptr;
  SolverBudget budget_{options_};
};

}  // namespace

void checkSharedBounds(const ir::Function& fn, DiagnosticSink& diags, const SourceFile*, const Options& options) {
  BoundsCheck(fn, diags, options).run();
}

}  // namespace argus::checker
