// Runtime values: materializing constants, unifying dtypes of operands and
// broadcasting tiles by the layout rules of ir/ir.h (Splat, Broadcast,
// ConvertLayout).
#include <algorithm>

#include "frontend/sema_internal.h"
#include "ir/ops.h"

namespace argus::sema::detail {

namespace {
// Two float dtypes meet in the wider one, and two 16-bit kinds in f32, as in
// Triton (docs/language.md, "Type promotion"); nullopt when they do not mix.
std::optional<ir::DType> promotedFloat(ir::DType a, ir::DType b) {
  if (!ir::isFloat(a) || !ir::isFloat(b)) return std::nullopt;
  int wa = ir::dtypeBits(a), wb = ir::dtypeBits(b);
  if (wa != wb) return wa > wb ? a : b;
  if (wa == 16) return ir::DType::F32;
  return std::nullopt;  // f8e4m3 with f8e5m2
}
}  // namespace

ir::ValueId Analyzer::materialize(const Val& v, std::optional<ir::DType> dtype, SourceRange range) {
  if (v.kind == Val::Kind::Value) {
    // An operand promoted to a wider float (bf16 * f32) is converted here.
    const ir::Type& t = fn_->values[v.id].type;
    if (!dtype || t.dtype == *dtype || !ir::isFloat(t.dtype) || !ir::isFloat(*dtype)) return v.id;
    ir::Type to = t;
    to.dtype = *dtype;
    ir::Attrs attrs;
    ir::CastAttrs(attrs).to(*dtype);
    return b().make(ir::OpKind::Cast, {v.id}, to, range, attrs);
  }
  if (v.kind != Val::Kind::Const) return ir::kNoValue;
  ir::DType to = dtype ? *dtype : v.c.dtype;
  const Constant& c = v.c;
  if (to == ir::DType::Bool) return b().constBool(c.i != 0, range);
  if (ir::isFloat(to)) return b().constFloat(c.asDouble(), to, range);
  return b().constInt(c.kind == Constant::Kind::Float ? static_cast<int64_t>(c.f) : c.i, to, range);
}

Val Analyzer::valOf(ir::ValueId v) const {
  const ir::Value& value = fn_->values[v];
  if (value.def && value.def->kind == ir::OpKind::Const && value.type == ir::Type::scalar(ir::DType::I32))
    return Val::constant(Constant::ofInt(ir::ConstOp(*value.def).intValue()));
  return Val::value(v);
}

std::optional<ir::DType> Analyzer::unifyDTypes(std::vector<Operand*>& ops, const std::string& opName) {
  int strongIdx = -1;
  std::optional<ir::DType> target;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Val& v = ops[i]->val;
    bool strong = v.kind == Val::Kind::Value || (v.kind == Val::Kind::Const && !v.c.weak);
    if (!strong) continue;
    ir::DType dt = *dtypeOf(v);
    if (!target) {
      target = dt;
      strongIdx = static_cast<int>(i);
      continue;
    }
    if (dt != *target) {
      if (std::optional<ir::DType> wider = promotedFloat(*target, dt)) {
        target = *wider;
        continue;
      }
      Diagnostic* d = report(DiagId::DTypeMismatch, ops[i]->range, {opName, ir::dtypeName(*target), ir::dtypeName(dt)});
      std::string to = ir::dtypeName(*target);
      addFixIt(d, ops[i]->range, "cast(" + text(ops[i]->range) + ", " + to + ")", "convert it to " + to);
      return std::nullopt;
    }
  }
  if (!target) {
    // Only weak constants: the widest kind wins (bool < int < float).
    bool anyFloat = false, anyBool = false, anyInt = false, wide = false;
    for (Operand* op : ops) {
      anyFloat |= op->val.c.kind == Constant::Kind::Float;
      anyBool |= op->val.c.kind == Constant::Kind::Bool;
      anyInt |= op->val.c.kind == Constant::Kind::Int;
      wide |= op->val.c.dtype == ir::DType::I64;
    }
    if (anyBool && (anyFloat || anyInt)) {
      for (size_t i = 1; i < ops.size(); ++i)
        if ((ops[i]->val.c.kind == Constant::Kind::Bool) != (ops[0]->val.c.kind == Constant::Kind::Bool)) {
          report(DiagId::DTypeMismatch, ops[i]->range,
                 {opName, ir::dtypeName(ops[0]->val.c.dtype), ir::dtypeName(ops[i]->val.c.dtype)});
          return std::nullopt;
        }
    }
    return anyBool ? ir::DType::Bool : anyFloat ? ir::DType::F32 : wide ? ir::DType::I64 : ir::DType::I32;
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const Val& v = ops[i]->val;
    if (v.kind != Val::Kind::Const || !v.c.weak || canAdapt(v.c, *target)) continue;
    if (v.c.kind == Constant::Kind::Int && ir::isInteger(*target)) {
      report(DiagId::ConstantRange, ops[i]->range, {v.c.str(), ir::dtypeName(*target)});
      return std::nullopt;
    }
    // A float literal against integers (or a bool against numbers): the other operand needs a cast.
    size_t first = std::min<size_t>(i, static_cast<size_t>(strongIdx));
    size_t second = std::max<size_t>(i, static_cast<size_t>(strongIdx));
    auto name = [&](size_t k) { return std::string(ir::dtypeName(*dtypeOf(ops[k]->val))); };
    Diagnostic* d = report(DiagId::DTypeMismatch, ops[i]->range, {opName, name(first), name(second)});
    if (v.c.kind == Constant::Kind::Float) {
      std::string to = ir::dtypeName(v.c.dtype);
      const Operand& s = *ops[static_cast<size_t>(strongIdx)];
      addFixIt(d, s.range, "cast(" + text(s.range) + ", " + to + ")", "convert it to " + to);
    }
    return std::nullopt;
  }
  return target;
}

// A tile computed from coordinates and scalars alone (iota, splat, and
// elementwise ops of them, e.g. a column mask) is rebuilt in the target layout
// instead of being moved through shared memory. Returns kNoValue when `v` is
// not such a tile.
ir::ValueId Analyzer::rematerialize(ir::ValueId v, const ir::Layout& target, int depth) {
  // Copies, not references: the recursion below adds values, which may move fn_->values.
  const ir::Type valueType = fn_->values[v].type;
  const ir::Op* def = fn_->values[v].def;
  if (!valueType.isTile() || !def || depth > 6 || valueType.shape != target.shape()) return ir::kNoValue;
  switch (def->kind) {
    case ir::OpKind::Iota: case ir::OpKind::Splat: case ir::OpKind::Binary: case ir::OpKind::Compare:
    case ir::OpKind::Unary: case ir::OpKind::Select: case ir::OpKind::Cast: case ir::OpKind::Fma: break;
    default: return ir::kNoValue;
  }
  std::vector<ir::ValueId> operands;
  for (ir::ValueId o : def->operands) {
    if (fn_->values[o].type.isScalar()) {
      operands.push_back(o);
      continue;
    }
    ir::ValueId again = rematerialize(o, target, depth + 1);
    if (again == ir::kNoValue) return ir::kNoValue;
    operands.push_back(again);
  }
  ir::Type type = valueType;
  type.layout = target;
  return b().make(def->kind, std::move(operands), type, def->range, def->attrs);
}

namespace {
// True when no op after `v`'s definition in `block` reads it (and none of them has
// regions that might): its type may still change.
bool unusedSinceDefined(const ir::Function& fn, const ir::Block& block, ir::ValueId v) {
  const ir::Op* def = fn.values[v].def;
  for (size_t i = block.ops.size(); i-- > 0;) {
    const ir::Op& op = *block.ops[i];
    if (&op == def) return true;
    if (!op.regions.empty() || std::find(op.operands.begin(), op.operands.end(), v) != op.operands.end()) return false;
  }
  return false;  // defined in another block
}
}  // namespace

// A tile reshaped (x[None, :]) is reshaped straight into the layout wanted: one
// trip through shared memory instead of two. Where nothing has read the reshape
// yet, it is retyped in place rather than left behind unused.
ir::ValueId Analyzer::convertLayout(ir::ValueId v, const ir::Layout& target, SourceRange range) {
  const ir::Type t = fn_->values[v].type;
  const ir::Op* def = fn_->values[v].def;
  if (def && def->kind == ir::OpKind::Reshape) {
    if (unusedSinceDefined(*fn_, *b().block(), v)) {
      fn_->values[v].type = ir::Type::tile(t.dtype, target);
      return v;
    }
    return b().make(ir::OpKind::Reshape, {ir::ReshapeOp(*def).x()}, ir::Type::tile(t.dtype, target), range);
  }
  return b().make(ir::OpKind::ConvertLayout, {v}, ir::Type::tile(t.dtype, target), range);
}

ir::ValueId Analyzer::toLayout(ir::ValueId v, const ir::Layout& target, SourceRange range) {
  const ir::Type t = fn_->values[v].type;
  if (t.isScalar()) return b().make(ir::OpKind::Splat, {v}, ir::Type::tile(t.dtype, target), range);
  if (t.layout == target) return v;
  std::vector<int64_t> want = target.shape();
  if (t.shape == want) {
    ir::ValueId rebuilt = rematerialize(v, target);
    if (rebuilt != ir::kNoValue) return rebuilt;
    return convertLayout(v, target, range);
  }
  if (t.layout.parent != target.parent || (target.reducedMask & ~t.layout.reducedMask) != 0) {
    // Bring the operand into the target's parent, its extent-1 axes reduced.
    ir::Layout mid = target;
    for (size_t d = 0; d < want.size() && d < t.shape.size(); ++d)
      if (t.shape[d] == 1 && want[d] != 1) mid.reducedMask |= 1u << d;
    if (t.layout != mid) v = convertLayout(v, mid, range);
    if (mid == target) return v;
  }
  return b().make(ir::OpKind::Broadcast, {v}, ir::Type::tile(t.dtype, target), range);
}

bool Analyzer::broadcast(std::vector<ir::ValueId>& values, const std::string& opName, SourceRange range,
                         const ir::Layout* target) {
  std::vector<int64_t> shape;
  bool anyTile = false;
  for (ir::ValueId v : values) {
    const ir::Type& t = fn_->values[v].type;
    if (!t.isTile()) continue;
    if (!anyTile) {
      shape = t.shape;
      anyTile = true;
      continue;
    }
    if (t.shape.size() != shape.size()) {
      report(DiagId::RankMismatch, range, {opName, std::to_string(shape.size()), std::to_string(t.shape.size())});
      return false;
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == t.shape[d] || t.shape[d] == 1) continue;
      if (shape[d] == 1) {
        shape[d] = t.shape[d];
        continue;
      }
      report(DiagId::ShapeMismatch, range, {shapeText(shape), shapeText(t.shape), opName, std::to_string(d),
                                            std::to_string(shape[d]), std::to_string(t.shape[d])});
      return false;
    }
  }
  if (!anyTile && !target) return true;
  ir::Layout layout;
  if (target) {
    layout = *target;
  } else {
    // The first full-shape operand's layout, but an mma layout wins: tensor-core
    // accumulators are the values elementwise code should leave in place.
    layout = ir::Layout::canonical(shape);
    bool found = false;
    for (ir::ValueId v : values) {
      const ir::Type& t = fn_->values[v].type;
      if (!t.isTile() || t.shape != shape) continue;
      if (!found || t.layout.isMma()) layout = t.layout;
      found = true;
      if (t.layout.isMma()) break;
    }
  }
  for (ir::ValueId& v : values) v = toLayout(v, layout, range);
  return true;
}

ir::ValueId Analyzer::coerceTo(ir::ValueId v, const ir::Type& want, SourceRange range) {
  const ir::Type& t = fn_->values[v].type;
  if (t == want) return v;
  if (t.isTile() && want.isTile() && t.dtype == want.dtype && t.shape == want.shape)
    return b().make(ir::OpKind::ConvertLayout, {v}, want, range);
  return ir::kNoValue;
}

namespace {
std::string operandHint(const ir::Type* t) {
  if (!t) return "";
  switch (t->kind) {
    case ir::TypeKind::View: return "; read it into registers with load(...) first";
    case ir::TypeKind::Tensor: return "; pick a tile with x.tile((B0, ...))[i, ...] and load(...) it";
    case ir::TypeKind::Shared: return "; read it into registers with load(...) first";
    default: return "";
  }
}
}  // namespace

std::optional<std::vector<ir::ValueId>> Analyzer::elementwiseOperands(std::vector<Operand*> ops, const std::string& opName,
                                                                      SourceRange range, ir::DType& dtype) {
  for (Operand* op : ops) {
    if (op->val.isError()) return std::nullopt;
    if (!isValueLike(op->val)) {
      report(DiagId::BadOperand, op->range, {opName, describe(op->val), operandHint(typeOf(op->val))});
      return std::nullopt;
    }
  }
  std::optional<ir::DType> dt = unifyDTypes(ops, opName);
  if (!dt) return std::nullopt;
  dtype = *dt;
  std::vector<ir::ValueId> ids;
  for (Operand* op : ops) ids.push_back(materialize(op->val, dtype, op->range));
  if (!broadcast(ids, opName, range)) return std::nullopt;
  return ids;
}

Val Analyzer::emitBinary(ir::BinaryKind kind, ir::ValueId a, ir::ValueId x, SourceRange range) {
  ir::Attrs attrs;
  ir::BinaryAttrs(attrs).binaryKind(kind);
  return Val::value(b().make(ir::OpKind::Binary, {a, x}, fn_->values[a].type, range, attrs));
}

Val Analyzer::emitUnary(ir::UnaryKind kind, ir::ValueId a, SourceRange range) {
  ir::Attrs attrs;
  ir::UnaryAttrs(attrs).unaryKind(kind);
  return Val::value(b().make(ir::OpKind::Unary, {a}, fn_->values[a].type, range, attrs));
}

// i32 index arithmetic for view offsets, folded where possible.
Val Analyzer::indexArith(ast::BinaryOp op, const Val& a, const Val& x, SourceRange range) {
  if (a.kind == Val::Kind::Const && x.kind == Val::Kind::Const) {
    Constant r = Constant::ofInt(op == ast::BinaryOp::Add ? a.c.i + x.c.i : a.c.i * x.c.i);
    return Val::constant(r);
  }
  auto isConst = [](const Val& v, int64_t k) { return v.kind == Val::Kind::Const && v.c.i == k; };
  if (op == ast::BinaryOp::Add && isConst(a, 0)) return x;
  if (op == ast::BinaryOp::Add && isConst(x, 0)) return a;
  if (op == ast::BinaryOp::Mul && isConst(a, 1)) return x;
  if (op == ast::BinaryOp::Mul && isConst(x, 1)) return a;
  if (op == ast::BinaryOp::Mul && (isConst(a, 0) || isConst(x, 0))) return Val::constant(Constant::ofInt(0));
  ir::ValueId l = materialize(a, ir::DType::I32, range), r = materialize(x, ir::DType::I32, range);
  return emitBinary(op == ast::BinaryOp::Add ? ir::BinaryKind::Add : ir::BinaryKind::Mul, l, r, range);
}

}  // namespace argus::sema::detail
