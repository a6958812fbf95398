// Built-in: a dot result's epilogue pairs each element with the tensor
// elements it belongs with (AG2046). In acc + bias[None, :], acc * scale[:, None]
// or acc + residual, element (m, n) of the product was computed from row m of A
// and column n of B; a tile of another tensor combined with it element by
// element must be taken, along each axis, at the index the product's element
// has there wherever the two index axes of the same runtime extent (B's columns
// and bias both of size N). A bias tile taken at the row-tile index
// (bias.tile((BN,))[tm] for [tn]) adds bias[tm * BN + j] to column tn * BN + j.
// Axes of different extents are not compared (nothing says how they relate),
// nor constant extents, nor an operand that is itself a product (two dots), nor
// components that vary along both axes of the result. Only a definite
// violation, with both indices known and inside their tensors, is reported.
#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

namespace {

// The tensor parameter a tile was loaded from through reshapes, broadcasts,
// casts and layout conversions (bias[None, :] is Broadcast(Reshape(Load))); -1 if none.
int loadedTensor(const ir::Function& fn, ir::ValueId value) {
  for (int depth = 0; depth < 16 && value < fn.values.size(); ++depth) {
    const ir::Op* def = fn.values[value].def;
    if (!def || def->operands.empty()) return -1;
    switch (def->kind) {
      case ir::OpKind::Broadcast: value = ir::BroadcastOp(*def).x(); break;
      case ir::OpKind::Reshape: value = ir::ReshapeOp(*def).x(); break;
      case ir::OpKind::Cast: value = ir::CastOp(*def).x(); break;
      case ir::OpKind::ConvertLayout: value = ir::ConvertLayoutOp(*def).x(); break;
      case ir::OpKind::Load: {
        const ir::Op* view = fn.values[ir::LoadOp(*def).view()].def;
        if (!view || view->kind != ir::OpKind::View || view->operands.empty()) return -1;
        const ir::ValueId base = ir::ViewOp(*view).base();
        if (fn.values[base].type.kind != ir::TypeKind::Tensor) return -1;
        return traceOrigin(fn, base, 0);
      }
      default: return -1;
    }
  }
  return -1;
}

// The dot a tile is the result of, also through the loop that carries it as an
// accumulator (acc after `for ...: acc = dot(a, b, acc)`); null if none or several.
const ir::Op* productDot(const ir::Function& fn, ir::ValueId value) {
  if (const ir::Op* dot = producingDot(fn, value)) return dot;
  const ir::Op* loop = value < fn.values.size() ? fn.values[value].def : nullptr;
  if (!loop || loop->kind != ir::OpKind::For || loop->regions.empty()) return nullptr;
  const ir::Block& body = loop->regions.front();
  if (body.ops.empty() || body.ops.back()->kind != ir::OpKind::Yield) return nullptr;
  for (size_t i = 0; i < loop->results.size(); ++i)
    if (loop->results[i] == value && i < body.ops.back()->operands.size())
      return producingDot(fn, body.ops.back()->operands[i]);
  return nullptr;
}

struct EpilogueOperands {
  ir::ValueId product = ir::kNoValue, other = ir::kNoValue;
  int tensor = -1;
};

// The product and the loaded tile an element-wise op combines, if it does.
std::optional<EpilogueOperands> epilogueOperands(const ir::Function& fn, const ir::Op& op) {
  if ((op.kind != ir::OpKind::Binary && op.kind != ir::OpKind::Fma) || op.results.empty()) return std::nullopt;
  const ir::Type& result = fn.values[op.results[0]].type;
  if (!result.isTile() || result.shape.size() != 2) return std::nullopt;
  for (ir::ValueId product : op.operands) {
    if (!productDot(fn, product)) continue;
    for (ir::ValueId other : op.operands) {
      if (other == product || productDot(fn, other)) continue;
      if (int tensor = loadedTensor(fn, other); tensor >= 0) return EpilogueOperands{product, other, tensor};
    }
  }
  return std::nullopt;
}

// Which component of `tags` varies along result axis `axis` alone (the others fixed); -1 if none does.
int componentAlong(TagFlow& flow, const TagMap& tags, size_t axis) {
  const z3::expr zero = flow.bv(0);
  for (size_t d = 0; d < tags.originAxes.size(); ++d) {
    auto it = tags.tags.find(originKey(static_cast<int64_t>(d)));
    if (it == tags.tags.end() || tags.originAxes[d].tensor < 0) continue;
    const z3::expr& value = it->second.value;
    bool alongAxis = !z3::eq(substitute(value, {flow.coordVar(axis)}, {zero}), value);
    bool alongOther = !z3::eq(substitute(value, {flow.coordVar(1 - axis)}, {zero}), value);
    if (alongAxis && !alongOther) return static_cast<int>(d);
  }
  return -1;
}

// The runtime size an origin axis runs over; -1 for a constant extent.
int sizeIndexOf(const ir::Function& fn, const OriginAxis& axis) {
  const ir::DimRef& dim = fn.params[static_cast<size_t>(axis.tensor)].dims[static_cast<size_t>(axis.axis)];
  return dim.constant >= 0 ? -1 : static_cast<int>(dim.sizeIndex);
}

std::string indexText(const ir::Function& fn, const OriginAxis& axis, int64_t value) {
  const ir::Param& tensor = fn.params[static_cast<size_t>(axis.tensor)];
  std::string text = tensor.dims.size() == 1 ? "element " + std::to_string(value)
                                              : axisText(tensor, axis.axis, value);
  return text + " of '" + tensor.name + "'";
}

}  // namespace

void addEpilogueOrigins(const ir::Function& fn, const ir::Block& block, std::map<int, std::set<int64_t>>& origins) {
  for (const auto& op : block.ops) {
    if (auto e = epilogueOperands(fn, *op))
      for (size_t axis = 0; axis < fn.params[static_cast<size_t>(e->tensor)].dims.size(); ++axis)
        origins[e->tensor].insert(static_cast<int64_t>(axis));
    for (const ir::Block& region : op->regions) addEpilogueOrigins(fn, region, origins);
  }
}

bool hasEpilogue(const ir::Function& fn, const ir::Block& block) {
  std::map<int, std::set<int64_t>> origins;
  addEpilogueOrigins(fn, block, origins);
  return !origins.empty();
}

void checkEpilogueOperandsAgree(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op) {
  std::optional<EpilogueOperands> operands = epilogueOperands(fn, op);
  if (!operands) return;
  const TagMap* product = flow.tilesTags(operands->product);
  const TagMap* other = flow.tilesTags(operands->other);
  if (!product || !other || product->originAxes.size() != 2) return;
  const std::vector<int64_t>& shape = fn.values[op.results[0]].type.shape;
  z3::context& ctx = flow.context();
  z3::expr m = ctx.bv_const("epilogue_m", 32), n = ctx.bv_const("epilogue_n", 32);
  std::vector<z3::expr> coords{flow.coordVar(0), flow.coordVar(1)}, at{m, n};
  struct Compared {
    OriginAxis productAxis, otherAxis;
    z3::expr productValue, otherValue;
  };
  std::vector<Compared> compared;
  z3::expr differs = ctx.bool_val(false);
  for (size_t axis = 0; axis < 2; ++axis) {
    const std::string productKey = originKey(static_cast<int64_t>(axis));
    auto p = product->tags.find(productKey);
    int e = componentAlong(flow, *other, axis);
    if (p == product->tags.end() || e < 0) continue;
    const OriginAxis& productAxis = product->originAxes[axis];
    const OriginAxis& otherAxis = other->originAxes[static_cast<size_t>(e)];
    if (productAxis.tensor < 0 || sizeIndexOf(fn, productAxis) < 0 ||
        sizeIndexOf(fn, productAxis) != sizeIndexOf(fn, otherAxis))
      continue;
    const TagTerm& o = other->tags.at(originKey(e));
    z3::expr pv = substitute(p->second.value, coords, at), ov = substitute(o.value, coords, at);
    z3::expr described = substitute(p->second.present && p->second.known, coords, at) &&
                         substitute(o.present && o.known, coords, at);
    z3::expr extent = ctx.bv_const(fn.sizeNames[static_cast<size_t>(sizeIndexOf(fn, productAxis))].c_str(), 32);
    z3::expr inside = pv >= 0 && pv < extent && ov >= 0 && ov < extent;
    differs = differs || (described && pv != ov && inside);
    compared.push_back({productAxis, otherAxis, pv, ov});
  }
  if (compared.empty()) return;
  const std::string otherName = fn.params[static_cast<size_t>(operands->tensor)].name;
  std::optional<z3::model> found = elementViolation(
      flow, diags, op,
      "this operation combines each element of the dot() result with the element of '" + otherName +
          "' at the same index",
      m, n, shape, differs);
  if (!found) return;
  const z3::model& model = *found;
  const int64_t mv = modelValue(model, m), nv = modelValue(model, n);
  const Compared* wrong = &compared.front();
  for (const Compared& c : compared)
    if (modelValue(model, c.productValue) != modelValue(model, c.otherValue)) wrong = &c;
  const int64_t productIndex = modelValue(model, wrong->productValue);
  const int64_t otherIndex = modelValue(model, wrong->otherValue);
  const std::string sizeName = fn.sizeNames[static_cast<size_t>(sizeIndexOf(fn, wrong->productAxis))];
  std::string productName = flow.valueName(operands->product);
  std::string element = tileElementText(productName, mv, nv, "product");
  Counterexample cx;
  std::string iteration = iterationsOf(flow, model, cx);
  std::string launch = flow.launchText(model);
  std::string summary = element + " was computed from " + indexText(fn, wrong->productAxis, productIndex) +
                        ", and this combines it with " + indexText(fn, wrong->otherAxis, otherIndex) +
                        " (both run over " + sizeName + ")" + (launch.empty() ? "" : " when " + launch) +
                        (iteration.empty() ? "" : ", in iteration " + iteration);
  Diagnostic& d = diags.report(DiagId::EpilogueOperandElsewhere, op.range,
                               {productName, otherName, sizeName, summary});
  cx.facts.emplace_back("element", element);
  cx.facts.emplace_back("product", indexText(fn, wrong->productAxis, productIndex));
  cx.facts.emplace_back("combined with", indexText(fn, wrong->otherAxis, otherIndex));
  if (!launch.empty()) cx.facts.emplace_back("launch", launch);
  cx.trace = other->trace;
  nameLowestThreadHolding(cx, fn, fn.values[op.results[0]].type.layout, {mv, nv});
  d.counterexample = std::move(cx);
  d.labels.push_back(Label{productDot(fn, operands->product)->range, "the product comes from this dot"});
  d.notes.push_back("each element (m, n) of a product belongs with the elements of the other operands at row m and "
                    "column n: take the '" + otherName + "' tile at the same tile index as the output tile along " +
                    sizeName);
}

}  // namespace argus::checker
