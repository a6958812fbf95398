// Expressions: literals, names, operators, attributes, calls and views.
#include <algorithm>
#include <cmath>

#include "frontend/sema_internal.h"
#include "ir/ops.h"

namespace argus::sema::detail {

Val Analyzer::eval(const ast::Expr& e) {
  if (!enterAnalysis(e.range, "this expression")) return Val::error();
  Val v = evalUncached(e);
  --analysisDepth_;
  if (v.kind == Val::Kind::Value) result_.exprTypes[e.id] = fn_->values[v.id].type;
  else if (v.kind == Val::Kind::Const) result_.exprTypes[e.id] = ir::Type::scalar(v.c.dtype);
  return v;
}

Val Analyzer::evalUncached(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::Name: return lookup(static_cast<const ast::NameExpr&>(e));
    case ast::ExprKind::Int: return Val::constant(Constant::ofInt(static_cast<const ast::IntExpr&>(e).value));
    case ast::ExprKind::Float: return Val::constant(Constant::ofFloat(static_cast<const ast::FloatExpr&>(e).value));
    case ast::ExprKind::Bool: return Val::constant(Constant::ofBool(static_cast<const ast::BoolExpr&>(e).value));
    case ast::ExprKind::String: {
      Val v;
      v.kind = Val::Kind::String;
      v.text = static_cast<const ast::StringExpr&>(e).value;
      return v;
    }
    case ast::ExprKind::None: return Val::none();
    case ast::ExprKind::Ellipsis:
      report(DiagId::NotAValue, e.range, {"'...'", ""});
      return Val::error();
    case ast::ExprKind::Tuple:
    case ast::ExprKind::List: {
      const auto& elems = e.kind == ast::ExprKind::Tuple ? static_cast<const ast::TupleExpr&>(e).elements
                                                         : static_cast<const ast::ListExpr&>(e).elements;
      Val v;
      v.kind = Val::Kind::Tuple;
      for (const ast::ExprPtr& x : elems) v.elems.push_back(x ? eval(*x) : Val::error());
      return v;
    }
    case ast::ExprKind::Call: return evalCall(static_cast<const ast::CallExpr&>(e));
    case ast::ExprKind::Attribute: return evalAttribute(static_cast<const ast::AttributeExpr&>(e));
    case ast::ExprKind::Subscript: return evalSubscript(static_cast<const ast::SubscriptExpr&>(e));
    case ast::ExprKind::Slice:
      report(DiagId::SliceInView, e.range);
      return Val::error();
    case ast::ExprKind::Binary: return evalBinary(static_cast<const ast::BinaryExpr&>(e));
    case ast::ExprKind::Unary: return evalUnary(static_cast<const ast::UnaryExpr&>(e));
    case ast::ExprKind::Error: return Val::error();
  }
  return Val::error();
}

Val Analyzer::evalBinary(const ast::BinaryExpr& e) {
  if (!e.lhs || !e.rhs) return Val::error();
  Operand lhs{eval(*e.lhs), e.lhs->range};
  Operand rhs{eval(*e.rhs), e.rhs->range};
  return binaryOp(e.op, std::move(lhs), std::move(rhs), e.opRange, e.range);
}

namespace {
bool isComparison(ast::BinaryOp op) {
  using Op = ast::BinaryOp;
  return op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge;
}
bool isArithmetic(ast::BinaryOp op) {
  using Op = ast::BinaryOp;
  return op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div || op == Op::FloorDiv || op == Op::Mod ||
         op == Op::Pow;
}
ir::CmpKind cmpKind(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::Eq: return ir::CmpKind::Eq;
    case ast::BinaryOp::Ne: return ir::CmpKind::Ne;
    case ast::BinaryOp::Lt: return ir::CmpKind::Lt;
    case ast::BinaryOp::Le: return ir::CmpKind::Le;
    case ast::BinaryOp::Gt: return ir::CmpKind::Gt;
    default: return ir::CmpKind::Ge;
  }
}
}  // namespace

Val Analyzer::binaryOp(ast::BinaryOp op, Operand lhs, Operand rhs, SourceRange opRange, SourceRange range) {
  using Op = ast::BinaryOp;
  if (lhs.val.isError() || rhs.val.isError()) return Val::error();
  std::string spelling = ast::binaryOpSpelling(op);
  for (Operand* o : {&lhs, &rhs}) {
    if (isValueLike(o->val)) continue;
    std::string hint;
    if (const ir::Type* t = typeOf(o->val)) {
      if (t->kind == ir::TypeKind::View || t->kind == ir::TypeKind::Shared) hint = "; read it into registers with load(...) first";
      if (t->kind == ir::TypeKind::Tensor) hint = "; pick a tile with x.tile((B0, ...))[i, ...] and load(...) it";
    }
    report(DiagId::BadOperand, o->range, {spelling, describe(o->val), hint});
    return Val::error();
  }
  if (op == Op::MatMul) {
    report(DiagId::BadOperand, opRange, {"@", describe(lhs.val), "; multiply matrices with dot(a, b, acc)"});
    return Val::error();
  }
  if (op == Op::And || op == Op::Or) {
    for (Operand* o : {&lhs, &rhs})
      if (dtypeOf(o->val) != ir::DType::Bool) {
        report(DiagId::ExpectedBool, o->range, {"an operand of '" + spelling + "'", describe(o->val),
                                                "; compare explicitly, e.g. x != 0"});
        return Val::error();
      }
  }
  std::vector<Operand*> ops{&lhs, &rhs};
  bool bothConst = lhs.val.kind == Val::Kind::Const && rhs.val.kind == Val::Kind::Const;
  std::optional<ir::DType> dt;
  std::vector<ir::ValueId> ids;
  if (bothConst) {
    dt = unifyDTypes(ops, spelling);
  } else {
    ir::DType d;
    auto r = elementwiseOperands(ops, spelling, range, d);
    if (r) {
      dt = d;
      ids = std::move(*r);
    }
  }
  if (!dt) return Val::error();
  ir::DType d = *dt;
  // Which dtypes each operator accepts.
  if (isArithmetic(op) && d == ir::DType::Bool) {
    report(DiagId::BadOperand, opRange, {spelling, "bool operands", "; use 'and', 'or' or 'not' on bools"});
    return Val::error();
  }
  if (op == Op::Div && !ir::isFloat(d)) {
    Diagnostic* diag = report(DiagId::IntegerDivision, opRange, {ir::dtypeName(d)});
    addFixIt(diag, opRange, "//", "use integer division");
    return Val::error();
  }
  if (op == Op::Pow && !ir::isFloat(d) && !bothConst) {
    Diagnostic* diag = report(DiagId::FloatOnly, lhs.range, {"'**'", describe(lhs.val)});
    addFixIt(diag, lhs.range, "cast(" + text(lhs.range) + ", f32)", "convert it to f32");
    return Val::error();
  }
  if ((op == Op::BitAnd || op == Op::BitOr || op == Op::BitXor) && ir::isFloat(d)) {
    report(DiagId::BadOperand, opRange, {spelling, "float operands", "; it needs integers or bools"});
    return Val::error();
  }
  if ((op == Op::Shl || op == Op::Shr) && !ir::isInteger(d)) {
    report(DiagId::BadOperand, opRange, {spelling, std::string(ir::dtypeName(d)) + " operands", "; it needs integers"});
    return Val::error();
  }
  if (bothConst) {
    bool weak = lhs.val.c.weak && rhs.val.c.weak;
    std::optional<Constant> c = foldBinary(op, lhs.val.c, rhs.val.c, d, weak, range);
    if (!c) {
      if (op == Op::Pow) {
        report(DiagId::BadOperand, opRange, {spelling, "a negative integer exponent", "; use floats"});
      }
      return Val::error();
    }
    return Val::constant(*c);
  }
  if (isComparison(op)) {
    ir::Type t = fn_->values[ids[0]].type;
    t.dtype = ir::DType::Bool;
    ir::Attrs attrs;
    ir::CompareAttrs(attrs).cmpKind(cmpKind(op));
    return Val::value(b().make(ir::OpKind::Compare, {ids[0], ids[1]}, t, range, attrs));
  }
  switch (op) {
    case Op::Add: return emitBinary(ir::BinaryKind::Add, ids[0], ids[1], range);
    case Op::Sub: return emitBinary(ir::BinaryKind::Sub, ids[0], ids[1], range);
    case Op::Mul: return emitBinary(ir::BinaryKind::Mul, ids[0], ids[1], range);
    case Op::Div: return emitBinary(ir::BinaryKind::Div, ids[0], ids[1], range);
    case Op::FloorDiv: {
      Val q = emitBinary(ir::BinaryKind::Div, ids[0], ids[1], range);
      return ir::isFloat(d) ? emitUnary(ir::UnaryKind::Floor, q.id, range) : q;
    }
    case Op::Mod: return emitBinary(ir::BinaryKind::Rem, ids[0], ids[1], range);
    case Op::Pow: return emitBinary(ir::BinaryKind::Pow, ids[0], ids[1], range);
    case Op::BitAnd: case Op::And: return emitBinary(ir::BinaryKind::And, ids[0], ids[1], range);
    case Op::BitOr: case Op::Or: return emitBinary(ir::BinaryKind::Or, ids[0], ids[1], range);
    case Op::BitXor: return emitBinary(ir::BinaryKind::Xor, ids[0], ids[1], range);
    case Op::Shl: return emitBinary(ir::BinaryKind::Shl, ids[0], ids[1], range);
    case Op::Shr: return emitBinary(ir::BinaryKind::Shr, ids[0], ids[1], range);
    default: return Val::error();
  }
}

Val Analyzer::evalUnary(const ast::UnaryExpr& e) {
  if (!e.operand) return Val::error();
  Val v = eval(*e.operand);
  if (v.isError()) return Val::error();
  const char* spelling = ast::unaryOpSpelling(e.op);
  if (!isValueLike(v)) {
    report(DiagId::BadOperand, e.operand->range, {spelling, describe(v), ""});
    return Val::error();
  }
  ir::DType d = *dtypeOf(v);
  switch (e.op) {
    case ast::UnaryOp::Pos:
    case ast::UnaryOp::Neg:
      if (d == ir::DType::Bool) {
        report(DiagId::BadOperand, e.range, {spelling, describe(v), ""});
        return Val::error();
      }
      if (e.op == ast::UnaryOp::Pos) return v;
      if (v.kind == Val::Kind::Const) {
        Constant c = v.c;
        if (c.kind == Constant::Kind::Float) c.f = -c.f;
        else c.i = static_cast<int64_t>(0 - static_cast<uint64_t>(c.i));
        return Val::constant(wrapConstant(c));
      }
      return emitUnary(ir::UnaryKind::Neg, v.id, e.range);
    case ast::UnaryOp::Not:
      if (d != ir::DType::Bool) {
        report(DiagId::ExpectedBool, e.operand->range, {"the operand of 'not'", describe(v),
                                                        ir::isInteger(d) ? "; use '~' for bitwise not" : ""});
        return Val::error();
      }
      if (v.kind == Val::Kind::Const) return Val::constant(Constant::ofBool(v.c.i == 0));
      return emitUnary(ir::UnaryKind::Not, v.id, e.range);
    case ast::UnaryOp::Invert:
      if (!ir::isInteger(d)) {
        report(DiagId::BadOperand, e.range, {spelling, describe(v), d == ir::DType::Bool ? "; use 'not' on bools" : ""});
        return Val::error();
      }
      if (v.kind == Val::Kind::Const) {
        Constant c = v.c;
        c.i = ~c.i;
        return Val::constant(wrapConstant(c));
      }
      return emitUnary(ir::UnaryKind::Not, v.id, e.range);
  }
  return Val::error();
}

Val Analyzer::evalAttribute(const ast::AttributeExpr& e) {
  if (!e.base) return Val::error();
  if (std::optional<Val> v = tritonQualifiedName(e)) return *v;
  Val base = eval(*e.base);
  if (base.isError()) return Val::error();
  const ir::Type* t = typeOf(base);
  bool shaped = t && t->kind != ir::TypeKind::Scalar;
  if (t && e.name == "dtype") {
    Val v;
    v.kind = Val::Kind::DType;
    v.dtype = t->dtype;
    return v;
  }
  if (shaped && e.name == "shape") {
    Val tuple;
    tuple.kind = Val::Kind::Tuple;
    for (size_t d = 0; d < t->shape.size(); ++d) {
      if (t->shape[d] >= 0) {
        tuple.elems.push_back(Val::constant(Constant::ofInt(t->shape[d])));
        continue;
      }
      // A runtime extent: the size parameter of that name.
      Val size = Val::error();
      for (const ir::Param& p : fn_->params)
        if (t->kind == ir::TypeKind::Tensor && p.value == base.id && d < p.dims.size() && p.dims[d].sizeIndex >= 0)
          for (const ir::Param& q : fn_->params)
            if (q.kind == ir::ParamKind::Size && q.name == fn_->sizeNames[static_cast<size_t>(p.dims[d].sizeIndex)])
              size = Val::value(q.value);
      tuple.elems.push_back(size);
    }
    return tuple;
  }
  bool tileable = t && (t->kind == ir::TypeKind::Tensor || t->kind == ir::TypeKind::Shared || t->kind == ir::TypeKind::View);
  if (t && (t->isTile() || t->kind == ir::TypeKind::Shared || t->kind == ir::TypeKind::View) && e.name == "origin") {
    report(DiagId::TagReadOutsideAssert, e.range, {text(e.range)});
    return Val::error();
  }
  if (tileable && e.name == "tile") {
    report(DiagId::NotAValue, e.range, {"the method 'tile'", "; call it: x.tile((B0, ...))[i, ...]"});
    return Val::error();
  }
  std::vector<std::string> names;
  if (t) names = {"dtype"};
  if (shaped) names.push_back("shape");
  if (tileable) names.push_back("tile");
  std::string hint = suggestion(e.name, names);
  Diagnostic* d = report(DiagId::UnknownAttribute, e.nameRange,
                         {describe(base), e.name, hint.empty() ? "" : "; did you mean '" + hint + "'?"});
  if (!hint.empty()) addFixIt(d, e.nameRange, hint, "replace with '" + hint + "'");
  return Val::error();
}

Val Analyzer::evalMethod(const ast::CallExpr& call, const ast::AttributeExpr& callee) {
  if (std::optional<Val> v = tritonQualifiedCall(call, callee)) return *v;
  Val base = callee.base ? eval(*callee.base) : Val::error();
  if (base.isError()) return Val::error();
  const ir::Type* t = typeOf(base);
  bool tileable = t && (t->kind == ir::TypeKind::Tensor || t->kind == ir::TypeKind::Shared || t->kind == ir::TypeKind::View);
  if (callee.name != "tile") {
    if (std::optional<Val> v = tritonTileMethod(call, callee, base)) return *v;
    std::vector<std::string> names{"tile"};
    std::string hint = tileable ? suggestion(callee.name, names) : "";
    Diagnostic* d = report(DiagId::UnknownAttribute, callee.nameRange,
                           {describe(base), callee.name, hint.empty() ? "" : "; did you mean '" + hint + "'?"});
    if (!hint.empty()) addFixIt(d, callee.nameRange, hint, "replace with '" + hint + "'");
    return Val::error();
  }
  if (!tileable) {
    report(DiagId::NotTileable, callee.base->range, {describe(base)});
    return Val::error();
  }
  std::vector<const ast::Argument*> slots;
  if (!bindArguments(call, "tile", {"shape"}, 1, slots)) return Val::error();
  std::optional<std::vector<int64_t>> shape = evalShape(*slots[0]->value, true, "tile");
  if (!shape) return Val::error();
  int rank = logicalRank(base);
  if (static_cast<int>(shape->size()) > rank) {
    report(DiagId::TileRank, slots[0]->value->range, {shapeText(*shape), std::to_string(shape->size()),
                                                      quote(text(callee.base->range)), std::to_string(rank)});
    return Val::error();
  }
  Val v;
  v.kind = Val::Kind::Tiling;
  v.elems.push_back(base);
  v.shape = *shape;
  return v;
}

int Analyzer::logicalRank(const Val& v) const {
  const ir::Type* t = typeOf(v);
  if (!t || t->kind == ir::TypeKind::Scalar || t->kind == ir::TypeKind::Void) return -1;
  return static_cast<int>(t->shape.size());
}

std::vector<int64_t> Analyzer::logicalShape(const Val& v) const {
  const ir::Type* t = typeOf(v);
  return t ? t->shape : std::vector<int64_t>{};
}

bool Analyzer::checkIndex(const Val& idx, SourceRange range) {
  if (idx.isError()) return false;
  if (idx.kind == Val::Kind::Const && idx.c.kind == Constant::Kind::Int && canAdapt(idx.c, ir::DType::I32)) return true;
  if (const ir::Type* t = typeOf(idx); t && *t == ir::Type::scalar(ir::DType::I32)) return true;
  report(DiagId::BadIndex, range, {describe(idx)});
  return false;
}

Val Analyzer::makeView(const Val& base, std::vector<Val> offsets, std::vector<int64_t> shape, SourceRange range) {
  ir::ValueId underlying = base.id;
  std::vector<Val> full = std::move(offsets);
  const ir::Type* bt = typeOf(base);
  if (bt->kind == ir::TypeKind::View) {
    const ir::ViewOp baseView(*fn_->values[base.id].def);  // a view is defined by a View op
    underlying = baseView.base();
    size_t r = baseView.offsets().size(), kv = bt->shape.size();
    std::vector<Val> composed;
    for (size_t u = 0; u < r; ++u) {
      Val o = valOf(baseView.offsets()[u]);
      if (u >= r - kv) o = indexArith(ast::BinaryOp::Add, o, full[u - (r - kv)], range);
      composed.push_back(o);
    }
    full = std::move(composed);
  }
  const ir::Type ut = fn_->values[underlying].type;
  if (ut.kind == ir::TypeKind::Shared) {
    bool allConst = true;
    std::vector<int64_t> offs;
    for (const Val& o : full) {
      allConst = allConst && o.kind == Val::Kind::Const;
      offs.push_back(o.kind == Val::Kind::Const ? o.c.i : 0);
    }
    size_t r = ut.shape.size(), k = shape.size();
    bool inside = true;
    for (size_t u = 0; allConst && u < r; ++u) {
      int64_t extent = u < r - k ? 1 : shape[u - (r - k)];
      inside = inside && offs[u] >= 0 && offs[u] + extent <= ut.shape[u];
    }
    if (allConst && !inside) {
      std::string offText = "(";
      for (size_t u = 0; u < r; ++u) offText += (u ? ", " : "") + std::to_string(offs[u]);
      offText += r == 1 ? ",)" : ")";
      report(DiagId::SharedOutOfBounds, range, {shapeText(shape), offText, shapeText(ut.shape)});
      return Val::error();
    }
  }
  std::vector<ir::ValueId> operands{underlying};
  for (const Val& o : full) operands.push_back(materialize(o, ir::DType::I32, range));
  ir::MemSpace space = ut.kind == ir::TypeKind::Shared ? ir::MemSpace::Shared : ir::MemSpace::Global;
  ir::Type viewType = ir::Type::view(space, ut.dtype, std::move(shape));
  viewType.swizzle = ut.swizzle;  // the buffer's physical placement travels with every view of it
  return Val::value(b().make(ir::OpKind::View, operands, std::move(viewType), range));
}

Val Analyzer::asView(const Val& v, SourceRange range, const char* fnName, const char* param) {
  if (v.isError()) return v;
  const ir::Type* t = typeOf(v);
  if (t && t->kind == ir::TypeKind::View) return v;
  if (t && (t->kind == ir::TypeKind::Shared ||
            (t->kind == ir::TypeKind::Tensor &&
             std::all_of(t->shape.begin(), t->shape.end(), [](int64_t e) { return e >= 0; })))) {
    std::vector<Val> zeros(t->shape.size(), Val::constant(Constant::ofInt(0)));
    return makeView(v, zeros, t->shape, range);
  }
  std::string hint;
  if (t && t->kind == ir::TypeKind::Tensor) hint = "; pick a tile with x.tile((B0, ...))[i, ...]";
  else if (v.kind == Val::Kind::Tiling) hint = "; index the tiling to pick one tile: x.tile((B0, ...))[i, ...]";
  else if (t && t->kind == ir::TypeKind::Tile) hint = "; a register tile is not in memory";
  (void)param;
  report(DiagId::NotAView, range, {fnName, text(range), describe(v), hint});
  return Val::error();
}

Val Analyzer::evalSubscript(const ast::SubscriptExpr& e) {
  if (!e.base) return Val::error();
  Val base = eval(*e.base);
  if (const ir::Type* bt = typeOf(base); bt && bt->isTile()) return subscriptTile(e, base);
  std::vector<Val> idx;
  bool ok = !base.isError();
  for (const ast::ExprPtr& i : e.indices) {
    if (!i) { ok = false; continue; }
    if (i->kind == ast::ExprKind::Slice) {
      report(DiagId::SliceInView, i->range);
      ok = false;
      idx.push_back(Val::error());
      continue;
    }
    idx.push_back(eval(*i));
  }
  if (!ok) return Val::error();
  if (base.kind == Val::Kind::Tuple) {
    if (idx.size() == 1 && idx[0].kind == Val::Kind::Const && idx[0].c.kind == Constant::Kind::Int) {
      int64_t n = static_cast<int64_t>(base.elems.size()), k = idx[0].c.i < 0 ? idx[0].c.i + n : idx[0].c.i;
      if (k >= 0 && k < n) return base.elems[static_cast<size_t>(k)];
      report(DiagId::AxisOutOfRange, e.indices[0]->range, {idx[0].c.str(), describe(base)});
      return Val::error();
    }
    report(DiagId::NotConstant, e.range, {"a tuple index", quote(text(e.indices[0]->range))});
    return Val::error();
  }
  for (size_t k = 0; k < idx.size(); ++k)
    if (!checkIndex(idx[k], e.indices[k]->range)) ok = false;
  auto plural = [](size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  std::string given = std::to_string(idx.size()) + (idx.size() == 1 ? " was" : " were");
  if (base.kind == Val::Kind::Tiling) {
    if (!ok) return Val::error();
    const Val& inner = base.elems[0];
    size_t rb = static_cast<size_t>(logicalRank(inner)), k = base.shape.size();
    if (idx.size() != rb) {
      report(DiagId::IndexCount, e.range, {quote(text(e.base->range)), std::to_string(rb),
                                           plural(rb, "index", "indices"), given});
      return Val::error();
    }
    std::vector<Val> offsets;
    for (size_t d = 0; d < rb; ++d)
      offsets.push_back(d < rb - k ? idx[d]
                                   : indexArith(ast::BinaryOp::Mul, idx[d],
                                                Val::constant(Constant::ofInt(base.shape[d - (rb - k)])), e.range));
    return makeView(inner, std::move(offsets), base.shape, e.range);
  }
  const ir::Type* t = typeOf(base);
  if (!t || t->kind == ir::TypeKind::Scalar) {
    report(DiagId::BadOperand, e.range, {"[]", describe(base), ""});
    return Val::error();
  }
  if (t->kind == ir::TypeKind::Tile) {
    report(DiagId::TileSubscript, e.range, {describe(base)});
    return Val::error();
  }
  if (!ok) return Val::error();
  size_t r = t->shape.size();
  if (idx.size() >= r) {
    if (t->kind == ir::TypeKind::Tensor) {
      report(DiagId::TensorSubscript, e.range, {describe(base), text(e.base->range)});
    } else {
      report(DiagId::IndexCount, e.range, {quote(text(e.base->range)), std::to_string(r),
                                           "at most " + plural(r - 1, "index", "indices"), given});
    }
    return Val::error();
  }
  std::vector<int64_t> trailing(t->shape.begin() + static_cast<long>(idx.size()), t->shape.end());
  for (int64_t extent : trailing)
    if (extent < 0) {
      report(DiagId::TensorSubscript, e.range, {describe(base), text(e.base->range)});
      return Val::error();
    }
  std::vector<Val> offsets = idx;
  offsets.resize(r, Val::constant(Constant::ofInt(0)));
  return makeView(base, std::move(offsets), std::move(trailing), e.range);
}

Val Analyzer::evalCall(const ast::CallExpr& call) {
  if (!call.callee) return Val::error();
  if (call.callee->kind == ast::ExprKind::Attribute)
    return evalMethod(call, static_cast<const ast::AttributeExpr&>(*call.callee));
  auto evalArgs = [&] {
    for (const ast::Argument& a : call.args)
      if (a.value) eval(*a.value);
  };
  if (call.callee->kind == ast::ExprKind::Name) {
    const auto& name = static_cast<const ast::NameExpr&>(*call.callee);
    Binding* bnd = findBinding(name.name);
    if (name.name == "tag" && !bnd && !devices_.count(name.name)) return evalTagCall(call);
    bool known = bnd || devices_.count(name.name) || kernels_.count(name.name) || findBuiltin(name.name);
    if (!known) {
      if (std::optional<Val> v = pythonConversion(call, name.name)) return *v;
      reportUnknownName(name.name, name.range, {}, true);
      evalArgs();
      return Val::error();
    }
  }
  Val callee = eval(*call.callee);
  switch (callee.kind) {
    case Val::Kind::Error:
      evalArgs();
      return Val::error();
    case Val::Kind::Device: return callDevice(*callee.def, call);
    case Val::Kind::Kernel:
      report(DiagId::CallKernel, call.callee->range, {callee.text});
      return Val::error();
    case Val::Kind::Builtin: return callBuiltin(builtinTable()[static_cast<size_t>(callee.builtin)], call);
    default:
      report(DiagId::NotCallable, call.callee->range, {quote(text(call.callee->range)) + ", " + describe(callee) + ","});
      return Val::error();
  }
}

}  // namespace argus::sema::detail
