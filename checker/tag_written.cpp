// Built-in: every element a load or a dot reads from shared memory was
// written before (AG2041). The tag flow's stores and copies set the tag
// kWrittenKey on the slots they cover, so a slot's tag is present exactly
// where some write reached it on the way to this point, per element and per
// iteration: a dropped prologue copy, a prologue that fills the wrong stage
// or a ring whose first read comes before its first fill shows as a slot
// without it. Only a definite violation is reported; the loops' summaries
// never claim a tag absent that may be present (tag_loops.cpp: a component
// the induction gives up on is "present, unknown").
#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

void checkSharedReadWritten(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op,
                            ir::ValueId view) {
  const ir::Op* viewOp = view < fn.values.size() ? fn.values[view].def : nullptr;
  if (!viewOp || viewOp->kind != ir::OpKind::View || viewOp->operands.empty()) return;
  const ir::ValueId buffer = ir::ViewOp(*viewOp).base();
  const std::vector<int64_t>& shape = fn.values[view].type.shape;
  const std::vector<int64_t>& bufferShape = fn.values[buffer].type.shape;
  if (shape.size() > bufferShape.size()) return;
  z3::context& ctx = flow.context();
  TagMap tags = flow.viewTags(view);
  auto it = tags.tags.find(kWrittenKey);
  z3::expr written = it == tags.tags.end() ? ctx.bool_val(false) : it->second.present;
  z3::expr inside = ctx.bool_val(true);
  for (size_t d = 0; d < shape.size(); ++d) inside = inside && z3::ult(flow.coordVar(d), flow.bv(shape[d]));
  z3::expr formula = flow.assumptions() && inside && !written;
  if (flow.check(formula)) return;  // proven: the common case, one query
  z3::solver solver(ctx, "QF_BV");
  SolverBudget& budget = flow.budget();
  budget.limit(solver);
  solver.add(formula);
  const std::string bufferName = flow.valueName(buffer);
  const std::string what = op.kind == ir::OpKind::Dot ? "dot" : "load";
  z3::check_result result = flow.preferSmall(solver);
  if (result == z3::unknown) {  // undecided is never silence
    diags.report(DiagId::CheckerCannotProve, op.range,
                 {"this " + what + " reads only elements of '" + bufferName + "' that were written before it",
                  "the solver gave up (" + budget.unknownReason(solver) + ")"});
    return;
  }
  if (result != z3::sat) return;
  z3::model model = solver.get_model();
  // The element of the buffer: the view's offsets, plus the coordinate along the view's axes.
  const size_t r = bufferShape.size(), k = shape.size();
  std::string element = bufferName + "[";
  for (size_t d = 0; d < r; ++d) {
    z3::expr offset = d + 1 < viewOp->operands.size() ? flow.scalar(viewOp->operands[d + 1]) : flow.bv(0);
    z3::expr at = d >= r - k ? offset + flow.coordVar(d - (r - k)) : offset;
    element += (d ? ", " : "") + std::to_string(modelValue(model, at));
  }
  element += "]";
  Counterexample cx;
  std::string when;
  for (const LoopFrame& l : flow.loops()) {
    int64_t iv = modelValue(model, l.iv);
    cx.iteration.emplace_back(l.name, iv);
    when += (when.empty() ? " in iteration " : ", ") + l.name + " = " + std::to_string(iv);
  }
  std::string launch = flow.launchText(model);
  cx.facts.emplace_back("element", element);
  if (!launch.empty()) cx.facts.emplace_back("launch", launch);
  std::string why = it == tags.tags.end()
                        ? "no store or copy into '" + bufferName + "' comes before this " + what
                        : "no store or copy into '" + bufferName + "' before this " + what + " reaches that element";
  why += when;
  Diagnostic& d = diags.report(DiagId::SharedReadUnwritten, op.range, {what, element, why});
  d.counterexample = std::move(cx);
  d.notes.push_back("every element a thread reads from shared memory must be written first: fill '" + bufferName +
                    "' (copy, copy_async then wait_group and barrier(), or copy_bulk then mbarrier_wait) before the "
                    "first read; in a double-buffered loop the copy before the loop fills the stage the first "
                    "iteration reads");
}

}  // namespace argus::checker
