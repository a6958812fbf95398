// Built-in: the operands of a dot come from one batch (AG2044). When both
// operands of dot(a, b) are tiles of two different tensors of one rank above
// two whose leading axes have the same extents (attention's q and k, both
// (BH, S, D); a batched GEMM's A and B), the leading axes index a batch (a
// head, a sequence) and every product a[m, k] * b[k, n] must pair elements of
// one batch: q of head 1 times k of head 0 is a wrong block index that the K
// check cannot see, since both agree in K. Tensors whose leading extents
// differ (grouped-query attention's k with fewer heads, a MoE GEMM's experts)
// map batches on purpose and are not asked. Only a definite violation, with
// both origins known and inside their tensors, is reported.
#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

namespace {

bool sameExtentAxis(const ir::DimRef& x, const ir::DimRef& y) {
  return (x.constant >= 0 && x.constant == y.constant) || (x.sizeIndex >= 0 && x.sizeIndex == y.sizeIndex);
}

std::string extentText(const ir::Function& fn, const ir::DimRef& dim) {
  return dim.constant >= 0 ? std::to_string(dim.constant) : fn.sizeNames[static_cast<size_t>(dim.sizeIndex)];
}

}  // namespace

void checkDotOperandsShareBatch(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op) {
  if (op.kind != ir::OpKind::Dot || op.operands.size() != 3) return;
  const ir::DotOp dot(op);
  const int ta = traceOrigin(fn, dot.a(), 0), tb = traceOrigin(fn, dot.b(), 0);
  if (ta < 0 || tb < 0 || ta == tb) return;
  const ir::Param& pa = fn.params[static_cast<size_t>(ta)];
  const ir::Param& pb = fn.params[static_cast<size_t>(tb)];
  const size_t rank = pa.dims.size();
  if (rank < 3 || pb.dims.size() != rank) return;
  for (size_t d = 0; d + 2 < rank; ++d)
    if (!sameExtentAxis(pa.dims[d], pb.dims[d])) return;
  TagMap a = dotOperandTags(flow, fn, dot.a()), b = dotOperandTags(flow, fn, dot.b());
  const std::vector<int64_t>& aShape = fn.values[dot.a()].type.shape;
  const std::vector<int64_t>& accShape = fn.values[dot.acc()].type.shape;
  if (aShape.size() != 2 || accShape.size() != 2) return;
  z3::context& ctx = flow.context();
  z3::expr m = ctx.bv_const("batch_m", 32), n = ctx.bv_const("batch_n", 32), k = ctx.bv_const("batch_k", 32);
  std::vector<z3::expr> coords{flow.coordVar(0), flow.coordVar(1)};
  std::vector<z3::expr> atA{m, k}, atB = dot.transB() ? std::vector<z3::expr>{n, k} : std::vector<z3::expr>{k, n};
  auto at = [&](const z3::expr& e, const std::vector<z3::expr>& to) { return substitute(e, coords, to); };
  for (size_t d = 0; d + 2 < rank; ++d) {
    auto aIt = a.tags.find(originKey(static_cast<int64_t>(d)));
    auto bIt = b.tags.find(originKey(static_cast<int64_t>(d)));
    if (aIt == a.tags.end() || bIt == b.tags.end()) continue;
    z3::expr batchA = at(aIt->second.value, atA), batchB = at(bIt->second.value, atB);
    z3::expr described =
        at(aIt->second.present && aIt->second.known, atA) && at(bIt->second.present && bIt->second.known, atB);
    z3::expr formula = flow.assumptions() && z3::ult(m, flow.bv(aShape[0])) && z3::ult(k, flow.bv(aShape[1])) &&
                       z3::ult(n, flow.bv(accShape[1])) && described && batchA != batchB &&
                       insideTensor(flow, fn, a, pa, coords, atA) && insideTensor(flow, fn, b, pb, coords, atB);
    if (flow.check(formula)) continue;  // proven
    z3::solver solver(ctx, "QF_BV");
    flow.budget().limit(solver);
    solver.add(formula);
    z3::check_result result = flow.preferSmall(solver);
    if (result == z3::unknown) {
      diags.report(DiagId::CheckerCannotProve, op.range,
                   {"the operands of this dot come from one index along axis " + std::to_string(d) + " of '" +
                        pa.name + "' and '" + pb.name + "'",
                    "the solver gave up (" + flow.budget().unknownReason(solver) + ")"});
      return;
    }
    if (result != z3::sat || !narrowToFirstElements(flow, solver, m, n)) continue;
    z3::model model = solver.get_model();
    const int64_t mv = modelValue(model, m), nv = modelValue(model, n), kv = modelValue(model, k);
    const int64_t aBatch = modelValue(model, batchA), bBatch = modelValue(model, batchB);
    const std::string aName = flow.valueName(dot.a()), bName = flow.valueName(dot.b());
    const std::string aElement = aName + "[" + std::to_string(mv) + ", " + std::to_string(kv) + "]";
    const std::string bElement = dot.transB() ? bName + "[" + std::to_string(nv) + ", " + std::to_string(kv) + "]"
                                              : bName + "[" + std::to_string(kv) + ", " + std::to_string(nv) + "]";
    Counterexample cx;
    nameLowestThreadHolding(cx, fn, fn.values[dot.acc()].type.layout, {mv, nv});
    for (const LoopFrame& l : flow.loops()) cx.iteration.emplace_back(l.name, modelValue(model, l.iv));
    std::string summary;
    if (cx.thread)
      summary = "thread " + std::to_string(*cx.thread) + " (warp " + std::to_string(*cx.warp) + ", lane " +
                std::to_string(*cx.lane) + "), value " + std::to_string(*cx.value) + ": ";
    summary += aElement + " comes from index " + std::to_string(aBatch) + " of '" + pa.name + "' but " + bElement +
               " from index " + std::to_string(bBatch) + " of '" + pb.name + "'";
    std::string iteration;
    for (const auto& [name, v] : cx.iteration) iteration += (iteration.empty() ? "" : ", ") + name + " = " + std::to_string(v);
    if (!iteration.empty()) summary += " in iteration " + iteration;
    Diagnostic& diag = diags.report(DiagId::DotOperandsDisagreeInBatch, op.range,
                                    {aName, bName, std::to_string(d), pa.name, pb.name, extentText(fn, pa.dims[d]), summary});
    cx.facts.emplace_back("element", aElement);
    cx.facts.emplace_back("element", bElement);
    cx.facts.emplace_back("a_batch", std::to_string(aBatch));
    cx.facts.emplace_back("b_batch", std::to_string(bBatch));
    const std::string launch = flow.launchText(model);
    if (!launch.empty()) cx.facts.emplace_back("launch", launch);
    cx.trace = a.trace;
    addLabels(cx.trace, b.trace, 8);
    diag.counterexample = std::move(cx);
    diag.notes.push_back("axis " + std::to_string(d) + " of '" + pa.name + "' and '" + pb.name + "' has the same extent (" +
                         extentText(fn, pa.dims[d]) + ") in both: it indexes a batch (a head), and a product pairs "
                         "elements of one batch; index both tiles by the same batch coordinate");
    return;
  }
}

}  // namespace argus::checker
