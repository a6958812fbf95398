// Built-in: a dot adds its products to the accumulator elements they belong
// to (AG2043). dot(a, b, acc) adds row m of A times column n of B to
// acc[m, n]. Where acc is itself an earlier dot's result (one product split
// over two dots, as attention's D = 128 in two halves of 64:
// s = dot(q1_s, k1_s, dot(q0_s, k0_s, 0))), acc[m, n] must have been computed
// from the same row of A's tensor and the same column of B's. A key tile one
// block ahead in one half, or the operands of one half swapped, sums products
// of different rows or columns into one element; the K check cannot see it,
// since each half agrees in K by itself. A loop-carried accumulator is not
// asked: its origin is the loop summary's, and AG2019 checks where it lands.
// Only a definite violation, with both origins known and inside their
// tensors, is reported.
#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

namespace {

// Component d of an origin inside the tensor axis it indexes.
z3::expr insideItsTensor(TagFlow& flow, const ir::Function& fn, const TagMap& tags, int64_t d, const z3::expr& value) {
  if (d >= static_cast<int64_t>(tags.originAxes.size()) || tags.originAxes[static_cast<size_t>(d)].tensor < 0)
    return flow.context().bool_val(true);
  const OriginAxis& axis = tags.originAxes[static_cast<size_t>(d)];
  const ir::DimRef& dim = fn.params[static_cast<size_t>(axis.tensor)].dims[static_cast<size_t>(axis.axis)];
  z3::expr extent = dim.constant >= 0
                        ? flow.bv(dim.constant)
                        : flow.context().bv_const(fn.sizeNames[static_cast<size_t>(dim.sizeIndex)].c_str(), 32);
  return value >= 0 && value < extent;
}

std::string axisName(const ir::Function& fn, const TagMap& tags, int64_t d, int64_t value) {
  if (d >= static_cast<int64_t>(tags.originAxes.size()) || tags.originAxes[static_cast<size_t>(d)].tensor < 0)
    return (d == 0 ? "row " : "column ") + std::to_string(value);
  const OriginAxis& axis = tags.originAxes[static_cast<size_t>(d)];
  const ir::Param& tensor = fn.params[static_cast<size_t>(axis.tensor)];
  return axisText(tensor, axis.axis, value) + " of '" + tensor.name + "'";
}

}  // namespace

void checkDotAccumulatorAgrees(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op) {
  if (op.kind != ir::OpKind::Dot || op.operands.size() != 3 || op.results.empty()) return;
  const ir::DotOp dot(op);
  const ir::Op* earlier = producingDot(fn, dot.acc());
  if (!earlier || earlier == &op || !dotK(fn, op) || !dotK(fn, *earlier)) return;
  const TagMap* acc = flow.tilesTags(dot.acc());
  if (!acc) return;
  TagMap product = flow.dotTags(op);
  const std::vector<int64_t>& shape = fn.values[dot.acc()].type.shape;
  if (shape.size() != 2) return;
  z3::context& ctx = flow.context();
  z3::expr m = ctx.bv_const("acc_m", 32), n = ctx.bv_const("acc_n", 32);
  std::vector<z3::expr> coords{flow.coordVar(0), flow.coordVar(1)}, at{m, n};
  z3::expr differs = ctx.bool_val(false);
  std::vector<std::pair<z3::expr, z3::expr>> pairs;  // (accumulator's, product's) per component
  for (int64_t d = 0; d < 2; ++d) {
    auto a = acc->tags.find(originKey(d));
    auto p = product.tags.find(originKey(d));
    if (a == acc->tags.end() || p == product.tags.end()) {
      pairs.emplace_back(flow.bv(0), flow.bv(0));
      continue;
    }
    z3::expr av = substitute(a->second.value, coords, at), pv = substitute(p->second.value, coords, at);
    z3::expr described = substitute(a->second.present && a->second.known, coords, at) &&
                         substitute(p->second.present && p->second.known, coords, at);
    differs = differs || (described && av != pv && insideItsTensor(flow, fn, *acc, d, av) &&
                          insideItsTensor(flow, fn, product, d, pv));
    pairs.emplace_back(av, pv);
  }
  std::optional<z3::model> found =
      elementViolation(flow, diags, op, "this dot adds its products to the accumulator elements they belong to", m, n,
                       shape, differs);
  if (!found) return;
  const z3::model& model = *found;
  const int64_t mv = modelValue(model, m), nv = modelValue(model, n);
  const int64_t side = modelValue(model, pairs[0].first) != modelValue(model, pairs[0].second) ? 0 : 1;
  const int64_t accValue = modelValue(model, pairs[static_cast<size_t>(side)].first);
  const int64_t productValue = modelValue(model, pairs[static_cast<size_t>(side)].second);
  // A named accumulator by its name (s[0, 0]); one written inline by its place.
  std::string element = tileElementText(flow.valueName(dot.acc()), mv, nv, "accumulator");
  Counterexample cx;
  std::string iteration = iterationsOf(flow, model, cx);
  std::string summary = element + " was computed from " + axisName(fn, *acc, side, accValue) +
                        ", and this dot adds to it products from " + axisName(fn, product, side, productValue) +
                        (iteration.empty() ? "" : " in iteration " + iteration);
  Diagnostic& d = diags.report(DiagId::DotAccumulatorElsewhere, op.range,
                               {flow.valueName(dot.a()), flow.valueName(dot.b()),
                                side == 0 ? "rows of A" : "columns of B", summary});
  cx.facts.emplace_back("element", element);
  cx.facts.emplace_back("accumulator", axisName(fn, *acc, side, accValue));
  cx.facts.emplace_back("product", axisName(fn, product, side, productValue));
  std::string launch = flow.launchText(model);
  if (!launch.empty()) cx.facts.emplace_back("launch", launch);
  cx.trace = acc->trace;
  d.counterexample = std::move(cx);
  d.labels.push_back(Label{earlier->range, "the accumulator comes from this dot"});
  d.notes.push_back("a product split over several dots sums, into each element (m, n), the parts of one row m of A "
                    "and one column n of B: check that every part's tile indices (and operand order) are the same");
}

}  // namespace argus::checker
