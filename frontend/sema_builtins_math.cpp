// Builtins that compute: tile creation, reductions, elementwise math, where,
// cast and dot.
#include <cmath>

#include "frontend/sema_internal.h"

namespace argus::sema::detail {

namespace {
std::optional<ir::UnaryKind> unaryKindOf(Builtin id) {
  switch (id) {
    case Builtin::Exp: return ir::UnaryKind::Exp;
    case Builtin::Exp2: return ir::UnaryKind::Exp2;
    case Builtin::Log: return ir::UnaryKind::Log;
    case Builtin::Log2: return ir::UnaryKind::Log2;
    case Builtin::Sqrt: return ir::UnaryKind::Sqrt;
    case Builtin::Rsqrt: return ir::UnaryKind::Rsqrt;
    case Builtin::Tanh: return ir::UnaryKind::Tanh;
    case Builtin::Erf: return ir::UnaryKind::Erf;
    case Builtin::Sin: return ir::UnaryKind::Sin;
    case Builtin::Cos: return ir::UnaryKind::Cos;
    case Builtin::Abs: return ir::UnaryKind::Abs;
    case Builtin::Floor: return ir::UnaryKind::Floor;
    case Builtin::Ceil: return ir::UnaryKind::Ceil;
    default: return std::nullopt;
  }
}

double foldUnary(ir::UnaryKind k, double x) {
  switch (k) {
    case ir::UnaryKind::Exp: return std::exp(x);
    case ir::UnaryKind::Exp2: return std::exp2(x);
    case ir::UnaryKind::Log: return std::log(x);
    case ir::UnaryKind::Log2: return std::log2(x);
    case ir::UnaryKind::Sqrt: return std::sqrt(x);
    case ir::UnaryKind::Rsqrt: return 1.0 / std::sqrt(x);
    case ir::UnaryKind::Tanh: return std::tanh(x);
    case ir::UnaryKind::Erf: return std::erf(x);
    case ir::UnaryKind::Sin: return std::sin(x);
    case ir::UnaryKind::Cos: return std::cos(x);
    case ir::UnaryKind::Abs: return std::fabs(x);
    case ir::UnaryKind::Floor: return std::floor(x);
    case ir::UnaryKind::Ceil: return std::ceil(x);
    default: return x;
  }
}
}  // namespace

Val Analyzer::builtinCreation(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  const char* name = findBuiltin(id == Builtin::Zeros ? "zeros" : id == Builtin::Full ? "full" : id == Builtin::Arange ? "arange" : "iota")->name;
  auto dtypeArg = [&](const ast::Argument* arg) -> std::optional<ir::DType> {
    Val v = eval(*arg->value);
    if (v.isError()) return std::nullopt;
    if (v.kind != Val::Kind::DType) {
      report(DiagId::BadArgument, arg->value->range, {"dtype", name, "a dtype such as f32", describe(v)});
      return std::nullopt;
    }
    return v.dtype;
  };
  switch (id) {
    case Builtin::Zeros: {
      std::optional<ir::DType> dt = dtypeArg(a[0]);
      std::optional<std::vector<int64_t>> shape = evalShape(*a[1]->value, true, "tile");
      if (!dt || !shape) return Val::error();
      ir::Layout layout = ir::Layout::canonical(*shape);
      if (a[2]) {
        std::optional<ir::Layout> mma = mmaLayoutArg(*a[2]->value, *shape);
        if (!mma) return Val::error();
        layout = *mma;
      }
      ir::ValueId zero = materialize(Val::constant(Constant::ofInt(0)), *dt, call.range);
      return Val::value(b().make(ir::OpKind::Splat, {zero}, ir::Type::tile(*dt, layout), call.range));
    }
    case Builtin::Full: {
      std::optional<std::vector<int64_t>> shape = evalShape(*a[0]->value, true, "tile");
      Val value = eval(*a[1]->value);
      std::optional<ir::DType> dt;
      if (a[2]) {
        dt = dtypeArg(a[2]);
        if (!dt) return Val::error();
      }
      if (!shape || value.isError()) return Val::error();
      bool scalar = value.kind == Val::Kind::Const || (typeOf(value) && typeOf(value)->isScalar());
      if (!scalar) {
        report(DiagId::BadArgument, a[1]->value->range, {"value", "full", "a scalar", describe(value)});
        return Val::error();
      }
      if (!dt) dt = *dtypeOf(value);
      bool ok = value.kind == Val::Kind::Const ? canAdapt(value.c, *dt) : typeOf(value)->dtype == *dt;
      if (!ok) {
        report(DiagId::BadArgument, a[1]->value->range,
               {"value", "full", "a scalar of dtype " + std::string(ir::dtypeName(*dt)), describe(value)});
        return Val::error();
      }
      ir::ValueId v = materialize(value, *dt, a[1]->value->range);
      return Val::value(b().make(ir::OpKind::Splat, {v}, ir::Type::tile(*dt, ir::Layout::canonical(*shape)), call.range));
    }
    case Builtin::Arange: {
      std::optional<int64_t> n = constIntArg(*a[0]->value, "arange", "n");
      if (!n || !checkTileExtent(*n, a[0]->value->range, true, "tile")) return Val::error();
      ir::Attrs attrs;
      ir::IotaAttrs(attrs).axis(0);
      return Val::value(b().make(ir::OpKind::Iota, {}, ir::Type::tile(ir::DType::I32, ir::Layout::canonical({*n})),
                                 call.range, attrs));
    }
    case Builtin::Iota: {
      std::optional<std::vector<int64_t>> shape = evalShape(*a[0]->value, true, "tile");
      std::optional<int64_t> axis = constIntArg(*a[1]->value, "iota", "axis");
      if (!shape || !axis) return Val::error();
      int64_t rank = static_cast<int64_t>(shape->size());
      if (*axis < -rank || *axis >= rank) {
        report(DiagId::AxisOutOfRange, a[1]->value->range, {std::to_string(*axis), "a tile of shape " + shapeText(*shape)});
        return Val::error();
      }
      ir::Attrs attrs;
      ir::IotaAttrs(attrs).axis(*axis < 0 ? *axis + rank : *axis);
      return Val::value(b().make(ir::OpKind::Iota, {}, ir::Type::tile(ir::DType::I32, ir::Layout::canonical(*shape)),
                                 call.range, attrs));
    }
    default: return Val::error();
  }
}

Val Analyzer::builtinReduce(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  const char* name = id == Builtin::Sum ? "sum" : id == Builtin::Max ? "max" : id == Builtin::Min ? "min" : "prod";
  Val x = eval(*a[0]->value);
  if (x.isError()) return Val::error();
  const ir::Type* t = typeOf(x);
  if (!t || !t->isTile()) {
    report(DiagId::BadArgument, a[0]->value->range, {"x", name, "a tile", describe(x)});
    return Val::error();
  }
  if (t->dtype == ir::DType::Bool) {
    report(DiagId::BadArgument, a[0]->value->range, {"x", name, "a tile of numbers", describe(x)});
    return Val::error();
  }
  const ir::ReduceKind reduction = id == Builtin::Sum   ? ir::ReduceKind::Sum
                                   : id == Builtin::Max ? ir::ReduceKind::Max
                                   : id == Builtin::Min ? ir::ReduceKind::Min
                                                        : ir::ReduceKind::Prod;
  ir::Attrs attrs;
  if (!a[1] || a[1]->value->kind == ast::ExprKind::None) {
    ir::ReduceAllAttrs(attrs).reduceKind(reduction);
    return Val::value(b().make(ir::OpKind::ReduceAll, {x.id}, ir::Type::scalar(t->dtype), call.range, attrs));
  }
  std::optional<int64_t> axis = constIntArg(*a[1]->value, name, "axis");
  if (!axis) return Val::error();
  int64_t rank = static_cast<int64_t>(t->shape.size());
  if (*axis < -rank || *axis >= rank) {
    report(DiagId::AxisOutOfRange, a[1]->value->range, {std::to_string(*axis), describe(x)});
    return Val::error();
  }
  int64_t ax = *axis < 0 ? *axis + rank : *axis;
  if (t->shape[static_cast<size_t>(ax)] == 1) return x;  // nothing to reduce
  ir::ReduceAttrs(attrs).reduceKind(reduction).axis(ax);
  ir::Layout layout = t->layout;
  layout.reducedMask |= 1u << ax;
  return Val::value(b().make(ir::OpKind::Reduce, {x.id}, ir::Type::tile(t->dtype, layout), call.range, attrs));
}

Val Analyzer::builtinMath(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  // The builtin's own name, not the callee's text: `(exp, log)[0](x)` or a
  // callee split over lines would otherwise be quoted into the message.
  const std::string name = builtinTable()[static_cast<size_t>(id)].name;
  if (id == Builtin::Maximum || id == Builtin::Minimum || id == Builtin::Fma) {
    std::vector<Operand> ops;
    for (const ast::Argument* arg : a) ops.push_back({eval(*arg->value), arg->value->range});
    std::vector<Operand*> ptrs;
    for (Operand& o : ops) {
      if (o.val.isError()) return Val::error();
      ptrs.push_back(&o);
    }
    ir::DType dt;
    auto ids = elementwiseOperands(ptrs, name, call.range, dt);
    if (!ids) return Val::error();
    if (id == Builtin::Fma) {
      if (!ir::isFloat(dt)) {
        Diagnostic* d = report(DiagId::FloatOnly, ops[0].range, {"fma()", describe(ops[0].val)});
        addFixIt(d, ops[0].range, "cast(" + text(ops[0].range) + ", f32)", "convert it to f32");
        return Val::error();
      }
      return Val::value(b().make(ir::OpKind::Fma, *ids, fn_->values[(*ids)[0]].type, call.range));
    }
    if (dt == ir::DType::Bool) {
      report(DiagId::BadOperand, call.range, {name, "bool operands", ""});
      return Val::error();
    }
    return emitBinary(id == Builtin::Maximum ? ir::BinaryKind::Max : ir::BinaryKind::Min, (*ids)[0], (*ids)[1], call.range);
  }
  ir::UnaryKind kind = *unaryKindOf(id);
  Val x = eval(*a[0]->value);
  if (x.isError()) return Val::error();
  if (!isValueLike(x)) {
    report(DiagId::BadArgument, a[0]->value->range, {"x", name, "a tile or a scalar", describe(x)});
    return Val::error();
  }
  if (x.kind == Val::Kind::Const && x.c.weak && x.c.kind != Constant::Kind::Bool) {
    if (kind == ir::UnaryKind::Abs && x.c.kind == Constant::Kind::Int)
      // Negated in unsigned arithmetic, as unary minus folds: abs(-2^63) wraps instead of overflowing.
      return Val::constant(Constant::ofInt(x.c.i < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x.c.i)) : x.c.i));
    return Val::constant(Constant::ofFloat(foldUnary(kind, x.c.asDouble())));
  }
  ir::DType dt = *dtypeOf(x);
  bool ok = ir::isFloat(dt) || (kind == ir::UnaryKind::Abs && ir::isSigned(dt));
  if (!ok) {
    Diagnostic* d = report(DiagId::FloatOnly, a[0]->value->range, {name + "()", describe(x)});
    addFixIt(d, a[0]->value->range, "cast(" + text(a[0]->value->range) + ", f32)", "convert it to f32");
    return Val::error();
  }
  return emitUnary(kind, materialize(x, dt, a[0]->value->range), call.range);
}

Val Analyzer::builtinWhere(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  Operand cond{eval(*a[0]->value), a[0]->value->range};
  Operand x{eval(*a[1]->value), a[1]->value->range};
  Operand y{eval(*a[2]->value), a[2]->value->range};
  if (cond.val.isError() || x.val.isError() || y.val.isError()) return Val::error();
  if (!isValueLike(cond.val) || dtypeOf(cond.val) != ir::DType::Bool) {
    report(DiagId::ExpectedBool, cond.range, {"the condition of where()", describe(cond.val), ""});
    return Val::error();
  }
  for (Operand* o : {&x, &y})
    if (!isValueLike(o->val)) {
      report(DiagId::BadArgument, o->range, {o == &x ? "a" : "b", "where", "a tile or a scalar", describe(o->val)});
      return Val::error();
    }
  std::vector<Operand*> ops{&x, &y};
  std::optional<ir::DType> dt = unifyDTypes(ops, "where");
  if (!dt) return Val::error();
  if (cond.val.kind == Val::Kind::Const) {
    const Val& chosen = cond.val.c.i ? x.val : y.val;
    if (chosen.kind != Val::Kind::Const) return chosen;
    std::optional<Constant> c = convertConstant(chosen.c, *dt);
    return c ? Val::constant(*c) : chosen;
  }
  std::vector<ir::ValueId> ids{materialize(cond.val, ir::DType::Bool, cond.range), materialize(x.val, *dt, x.range),
                               materialize(y.val, *dt, y.range)};
  if (!broadcast(ids, "where", call.range)) return Val::error();
  return Val::value(b().make(ir::OpKind::Select, ids, fn_->values[ids[1]].type, call.range));
}

Val Analyzer::builtinCast(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  Val x = eval(*a[0]->value);
  Val dtype = eval(*a[1]->value);
  if (x.isError() || dtype.isError()) return Val::error();
  if (dtype.kind != Val::Kind::DType) {
    report(DiagId::BadArgument, a[1]->value->range, {"dtype", "cast", "a dtype such as f32", describe(dtype)});
    return Val::error();
  }
  if (!isValueLike(x)) {
    report(DiagId::BadArgument, a[0]->value->range, {"x", "cast", "a tile or a scalar", describe(x)});
    return Val::error();
  }
  ir::DType to = dtype.dtype;
  if (x.kind == Val::Kind::Const) {
    Constant c = x.c;
    c.weak = false;
    c.dtype = to;
    if (to == ir::DType::Bool) {
      bool v = c.kind == Constant::Kind::Float ? c.f != 0.0 : c.i != 0;
      c = Constant::ofBool(v);
      c.weak = false;
    } else if (ir::isFloat(to)) {
      c.f = c.asDouble();
      c.kind = Constant::Kind::Float;
      if (to == ir::DType::F32) c.f = static_cast<double>(static_cast<float>(c.f));
    } else {
      if (c.kind == Constant::Kind::Float) {
        if (!std::isfinite(c.f) || std::fabs(c.f) > 9.2e18) {
          report(DiagId::ConstantRange, a[0]->value->range, {x.c.str(), ir::dtypeName(to)});
          return Val::error();
        }
        c.i = static_cast<int64_t>(c.f);
      }
      c.kind = Constant::Kind::Int;
      c = wrapConstant(c);
    }
    return Val::constant(c);
  }
  const ir::Type& t = *typeOf(x);
  if (t.dtype == to) return x;
  ir::Type result = t;
  result.dtype = to;
  ir::Attrs attrs;
  ir::CastAttrs(attrs).to(to);
  return Val::value(b().make(ir::OpKind::Cast, {x.id}, result, call.range, attrs));
}

// A register tile or a global view as an operand of dot(), as Triton's tl.dot takes them: the
// compiler stages it through a shared buffer of its own, allocated at the kernel's entry. The
// (view, tile) store is left in `stores`: builtinDot puts the stores of both operands between
// one barrier before them (a dot of the previous iteration may still read the buffers) and one
// after them (every thread's part is in before any thread reads). The checker proves the
// choreography like any other; a hand-staged, pipelined copy is still the fast path.
Val Analyzer::stageDotOperand(const Val& v, SourceRange range, const char* name,
                              std::vector<std::pair<ir::ValueId, ir::ValueId>>& stores) {
  const ir::Type t = *typeOf(v);
  for (int64_t e : t.shape)
    if (!checkTileExtent(e, range, true, "tile")) return Val::error();
  ir::ValueId tile = v.id;
  if (t.kind == ir::TypeKind::View)
    tile = b().make(ir::OpKind::Load, {v.id}, ir::Type::tile(t.dtype, ir::Layout::canonical(t.shape)), range);
  ir::Block entry;
  ir::Builder atEntry(*fn_, &entry);
  ir::ValueId buffer = atEntry.make(ir::OpKind::AllocShared, {}, ir::Type::shared(t.dtype, t.shape), range);
  fn_->values[buffer].name = std::string("dot_") + name + "_staged";
  fn_->body.ops.insert(fn_->body.ops.begin(), std::move(entry.ops.front()));
  ir::ValueId zero = b().constInt(0, ir::DType::I32, range);
  ir::ValueId view =
      b().make(ir::OpKind::View, {buffer, zero, zero}, ir::Type::view(ir::MemSpace::Shared, t.dtype, t.shape), range);
  stores.emplace_back(view, tile);
  return Val::value(view);
}

Val Analyzer::builtinDot(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  const char* names[] = {"a", "b"};
  Val ops[2];
  std::vector<std::pair<ir::ValueId, ir::ValueId>> staged;  // (shared view, tile) stores of staged operands
  bool transB = false;
  if (a[3]) {
    Val flag = eval(*a[3]->value);
    if (flag.isError()) return Val::error();
    if (flag.kind != Val::Kind::Const || flag.c.kind != Constant::Kind::Bool) {
      report(DiagId::BadArgument, a[3]->value->range, {"trans_b", "dot", "True or False", describe(flag)});
      return Val::error();
    }
    transB = flag.c.i != 0;
  }
  for (int k = 0; k < 2; ++k) {
    SourceRange r = a[k]->value->range;
    Val v = eval(*a[k]->value);
    if (v.isError()) return Val::error();
    const ir::Type* t = typeOf(v);
    if (k == 0 && t && t->isTile() && t->layout.isMma()) {  // a register operand (P @ V): checked against acc below
      ops[k] = v;
      continue;
    }
    bool sharedish = t && (t->kind == ir::TypeKind::Shared ||
                           (t->kind == ir::TypeKind::View && t->space == ir::MemSpace::Shared));
    const bool stageable = t && t->shape.size() == 2 && ir::isFloat(t->dtype) &&
                           (t->kind == ir::TypeKind::Tile ||
                            (t->kind == ir::TypeKind::View && t->space == ir::MemSpace::Global));
    if (!sharedish && stageable && pipelinedDepth_ > 0) {
      // Staging needs barriers, which a pipelined loop's schedule places itself.
      report(DiagId::BadArgument, r,
             {names[k], "dot",
              "a shared buffer that the pipelined loop's copy_async fills (copy_async(buf, view) at the top of the "
              "loop, then dot(buf, ...))",
              describe(v)});
      return Val::error();
    }
    if (!sharedish && stageable) {  // Triton's load-then-dot: the compiler stages the operand
      v = stageDotOperand(v, r, names[k], staged);
      if (v.isError()) return v;
      ops[k] = v;
      continue;
    }
    if (!sharedish) {
      if (t && (t->kind == ir::TypeKind::Tile || t->kind == ir::TypeKind::View || t->kind == ir::TypeKind::Tensor)) {
        report(DiagId::DotNotShared, r, {names[k], describe(v)});
      } else {
        report(DiagId::BadArgument, r, {names[k], "dot", "a view of shared memory", describe(v)});
      }
      return Val::error();
    }
    v = asView(v, r, "dot", names[k]);
    if (v.isError()) return v;
    const ir::Type& vt = fn_->values[v.id].type;
    if (vt.shape.size() != 2 || !ir::isFloat(vt.dtype)) {
      report(DiagId::BadArgument, r, {names[k], "dot", "a 2-D float view of shared memory", describe(v)});
      return Val::error();
    }
    ops[k] = v;
  }
  const ir::Type at = fn_->values[ops[0].id].type, bt = fn_->values[ops[1].id].type;
  const int64_t bK = transB ? bt.shape[1] : bt.shape[0], bN = transB ? bt.shape[0] : bt.shape[1];
  if (at.shape.size() != 2 || at.shape[1] != bK) {
    report(DiagId::DotKMismatch, a[1]->value->range, {describe(ops[0]), std::to_string(at.shape.size() == 2 ? at.shape[1] : 0),
                                                      describe(ops[1]), std::to_string(bK)});
    return Val::error();
  }
  if (at.dtype != bt.dtype) {
    report(DiagId::BadArgument, a[1]->value->range,
           {"b", "dot", "a view of " + std::string(ir::dtypeName(at.dtype)) + " like a", describe(ops[1])});
    return Val::error();
  }
  Val acc = eval(*a[2]->value);
  if (acc.isError()) return Val::error();
  std::vector<int64_t> mn{at.shape[0], bN};
  const ir::Type* ct = typeOf(acc);
  if (!ct || !ct->isTile() || ct->dtype != ir::DType::F32 || ct->shape != mn) {
    report(DiagId::DotAccumulator, a[2]->value->range, {shapeText(mn), describe(acc)});
    return Val::error();
  }
  if (at.isTile()) {
    bool ok = at.layout.isMma() && ct->layout.isMma() && at.layout.warpsN == 1 && ct->layout.warpsN == 1 &&
              at.layout.warpsM == ct->layout.warpsM && at.layout.reducedMask == 0 && at.shape[1] % 16 == 0 &&
              (at.dtype == ir::DType::BF16 || at.dtype == ir::DType::F16);
    if (!ok) {
      report(DiagId::DotRegisterOperand, a[0]->value->range, {describe(ops[0]), describe(acc)});
      return Val::error();
    }
  }
  if (!staged.empty()) {
    b().create(ir::OpKind::Barrier, {}, {}, call.range);
    for (const auto& [view, tile] : staged) b().create(ir::OpKind::Store, {view, tile}, {}, call.range);
    b().create(ir::OpKind::Barrier, {}, {}, call.range);
  }
  ir::Attrs attrs;
  ir::DotAttrs(attrs).transB(transB);
  return Val::value(b().make(ir::OpKind::Dot, {ops[0].id, ops[1].id, acc.id}, *ct, call.range, attrs));
}

}  // namespace argus::sema::detail
