// Launch geometry: @kernel(grid=..., warps=...) and require(...), evaluated
// into host-side launch expressions over runtime sizes and constants.
#include "frontend/sema_internal.h"

namespace argus::sema::detail {

namespace {
ir::LaunchExpr constExpr(int64_t v) {
  ir::LaunchExpr e;
  e.kind = ir::LaunchExpr::Kind::Const;
  e.value = v;
  return e;
}
ir::LaunchExpr binaryExpr(ir::LaunchExpr::Kind k, ir::LaunchExpr a, ir::LaunchExpr b) {
  ir::LaunchExpr e;
  e.kind = k;
  e.operands.push_back(std::move(a));
  e.operands.push_back(std::move(b));
  // Fold constant subexpressions.
  if (e.lhs().kind == ir::LaunchExpr::Kind::Const && e.rhs().kind == ir::LaunchExpr::Kind::Const) {
    int64_t v = 0;
    if (e.evaluate({}, v)) return constExpr(v);
  }
  return e;
}
}  // namespace

std::optional<Analyzer::LaunchVal> Analyzer::evalLaunch(const ast::Expr& e, const char* context) {
  using K = ir::LaunchExpr::Kind;
  auto bad = [&](const std::string& what) -> std::optional<LaunchVal> {
    report(DiagId::BadLaunchExpr, e.range, {what, context});
    return std::nullopt;
  };
  switch (e.kind) {
    case ast::ExprKind::Int:
      result_.exprTypes[e.id] = ir::Type::scalar(Constant::ofInt(static_cast<const ast::IntExpr&>(e).value).dtype);
      return LaunchVal{constExpr(static_cast<const ast::IntExpr&>(e).value), false};
    case ast::ExprKind::Bool:
      return LaunchVal{constExpr(static_cast<const ast::BoolExpr&>(e).value ? 1 : 0), true};
    case ast::ExprKind::Name: {
      const auto& name = static_cast<const ast::NameExpr&>(e);
      Binding* bnd = findBinding(name.name);
      if (bnd && bnd->state == Binding::State::Defined && bnd->kind == Symbol::Kind::Size) {
        addReference(bnd->symbol, e.range);
        result_.exprTypes[e.id] = ir::Type::scalar(ir::DType::I32);
        ir::LaunchExpr x;
        x.kind = K::Size;
        x.value = sizeIndex_[name.name];
        return LaunchVal{x, false};
      }
      Val v = eval(e);
      if (v.isError()) return std::nullopt;
      if (v.kind == Val::Kind::Const && v.c.kind != Constant::Kind::Float)
        return LaunchVal{constExpr(v.c.i), v.c.kind == Constant::Kind::Bool};
      return bad(quote(name.name) + " (" + describe(v) + ")");
    }
    case ast::ExprKind::Unary: {
      const auto& u = static_cast<const ast::UnaryExpr&>(e);
      if (!u.operand) return std::nullopt;
      std::optional<LaunchVal> x = evalLaunch(*u.operand, context);
      if (!x) return std::nullopt;
      if (u.op == ast::UnaryOp::Pos) return x;
      if (u.op == ast::UnaryOp::Neg) return LaunchVal{binaryExpr(K::Sub, constExpr(0), std::move(x->expr)), false};
      if (u.op == ast::UnaryOp::Not) {
        ir::LaunchExpr n;
        n.kind = K::Not;
        n.operands.push_back(std::move(x->expr));
        if (n.negated().kind == K::Const) return LaunchVal{constExpr(n.negated().value == 0), true};
        return LaunchVal{n, true};
      }
      return bad(quote(std::string(ast::unaryOpSpelling(u.op))));
    }
    case ast::ExprKind::Binary: {
      const auto& bin = static_cast<const ast::BinaryExpr&>(e);
      if (!bin.lhs || !bin.rhs) return std::nullopt;
      K kind;
      bool boolean = false;
      switch (bin.op) {
        case ast::BinaryOp::Add: kind = K::Add; break;
        case ast::BinaryOp::Sub: kind = K::Sub; break;
        case ast::BinaryOp::Mul: kind = K::Mul; break;
        case ast::BinaryOp::FloorDiv: kind = K::FloorDiv; break;
        case ast::BinaryOp::Mod: kind = K::Mod; break;
        case ast::BinaryOp::Lt: kind = K::Lt; boolean = true; break;
        case ast::BinaryOp::Le: kind = K::Le; boolean = true; break;
        case ast::BinaryOp::Gt: kind = K::Gt; boolean = true; break;
        case ast::BinaryOp::Ge: kind = K::Ge; boolean = true; break;
        case ast::BinaryOp::Eq: kind = K::Eq; boolean = true; break;
        case ast::BinaryOp::Ne: kind = K::Ne; boolean = true; break;
        case ast::BinaryOp::And: kind = K::And; boolean = true; break;
        case ast::BinaryOp::Or: kind = K::Or; boolean = true; break;
        default:
          report(DiagId::BadLaunchExpr, bin.opRange, {quote(std::string(ast::binaryOpSpelling(bin.op))), context});
          return std::nullopt;
      }
      std::optional<LaunchVal> l = evalLaunch(*bin.lhs, context);
      if (!l) return std::nullopt;
      std::optional<LaunchVal> r = evalLaunch(*bin.rhs, context);
      if (!r) return std::nullopt;
      if ((kind == K::FloorDiv || kind == K::Mod) && r->expr.kind == K::Const && r->expr.value == 0) {
        report(DiagId::ConstDivByZero, bin.rhs->range);
        return std::nullopt;
      }
      return LaunchVal{binaryExpr(kind, std::move(l->expr), std::move(r->expr)), boolean};
    }
    case ast::ExprKind::Call: {
      const auto& call = static_cast<const ast::CallExpr&>(e);
      std::string name = call.callee && call.callee->kind == ast::ExprKind::Name
                             ? static_cast<const ast::NameExpr&>(*call.callee).name : "";
      K kind = name == "cdiv" ? K::CeilDiv : name == "min" ? K::Min : K::Max;
      if ((name == "cdiv" || name == "min" || name == "max") && !findBinding(name)) {
        std::vector<const ast::Argument*> slots;
        if (!bindArguments(call, name, {"a", "b"}, 2, slots)) return std::nullopt;
        addReference(builtinSymbol(name, findBuiltin(name)->signature), call.callee->range);
        std::optional<LaunchVal> l = evalLaunch(*slots[0]->value, context);
        std::optional<LaunchVal> r = evalLaunch(*slots[1]->value, context);
        if (!l || !r) return std::nullopt;
        if (kind == K::CeilDiv && r->expr.kind == K::Const && r->expr.value == 0) {
          report(DiagId::ConstDivByZero, slots[1]->value->range);
          return std::nullopt;
        }
        return LaunchVal{binaryExpr(kind, std::move(l->expr), std::move(r->expr)), false};
      }
      if (!name.empty() && !findBinding(name) && !findBuiltin(name) && !devices_.count(name)) {
        reportUnknownName(name, call.callee->range, {}, true);
        return std::nullopt;
      }
      return bad(quote(text(e.range)));
    }
    case ast::ExprKind::Error: return std::nullopt;
    default: {
      Val v = eval(e);
      if (v.isError()) return std::nullopt;
      return bad(quote(text(e.range)) + " (" + describe(v) + ")");
    }
  }
}

bool Analyzer::analyzeLaunch(const ast::FunctionDef& def, const ast::Decorator& decorator) {
  const ast::Argument* grid = nullptr;
  const ast::Argument* warps = nullptr;
  const ast::Argument* cluster = nullptr;
  bool ok = true;
  for (const ast::Argument& a : *decorator.args) {
    if (!a.keyword) {
      report(DiagId::BadArgument, a.range, {grid ? "warps" : "grid", "@kernel", "given by keyword (grid=(...), warps=4)",
                                            "positional"});
      ok = false;
      continue;
    }
    const ast::Argument** slot = *a.keyword == "grid"      ? &grid
                                 : *a.keyword == "warps"   ? &warps
                                 : *a.keyword == "cluster" ? &cluster
                                                           : nullptr;
    if (!slot) {
      std::string hint = suggestion(*a.keyword, {"grid", "warps", "cluster"});
      Diagnostic* d = report(DiagId::UnknownKeyword, a.keywordRange,
                             {"@kernel", *a.keyword, hint.empty() ? "" : "; did you mean '" + hint + "'?"});
      if (!hint.empty()) addFixIt(d, a.keywordRange, hint, "replace with '" + hint + "'");
      ok = false;
      continue;
    }
    if (*slot) {
      report(DiagId::DuplicateArgument, a.range, {"@kernel", *a.keyword});
      ok = false;
      continue;
    }
    *slot = &a;
  }
  if (!grid) {
    if (ok) report(DiagId::MissingGrid, decorator.range, {def.name});
  } else {
    const ast::Expr& g = *grid->value;
    std::vector<const ast::Expr*> axes;
    if (g.kind == ast::ExprKind::Tuple || g.kind == ast::ExprKind::List) {
      const auto& elems = g.kind == ast::ExprKind::Tuple ? static_cast<const ast::TupleExpr&>(g).elements
                                                         : static_cast<const ast::ListExpr&>(g).elements;
      for (const ast::ExprPtr& x : elems)
        if (x) axes.push_back(x.get());
    } else {
      axes.push_back(&g);
    }
    if (axes.empty() || axes.size() > 3) {
      report(DiagId::GridRank, g.range, {std::to_string(axes.size())});
      ok = false;
    } else {
      gridRank_ = static_cast<int>(axes.size());
      for (size_t i = 0; i < 3; ++i) fn_->grid[i] = constExpr(1);
      for (size_t i = 0; i < axes.size(); ++i) {
        std::optional<LaunchVal> v = evalLaunch(*axes[i], "the grid");
        if (!v) { ok = false; continue; }
        if (v->isBool) {
          report(DiagId::BadLaunchExpr, axes[i]->range, {"the condition '" + text(axes[i]->range) + "'", "the grid"});
          ok = false;
          continue;
        }
        if (v->expr.kind == ir::LaunchExpr::Kind::Const && v->expr.value <= 0) {
          report(DiagId::NonPositiveExtent, axes[i]->range, {"a grid", std::to_string(v->expr.value)});
          ok = false;
          continue;
        }
        fn_->grid[i] = std::move(v->expr);
      }
    }
  }
  if (warps) {
    Val w = eval(*warps->value);
    if (w.isError()) {
      ok = false;
    } else if (w.kind != Val::Kind::Const || w.c.kind != Constant::Kind::Int) {
      if (w.kind == Val::Kind::Value && typeOf(w)->isScalar())
        report(DiagId::NotConstant, warps->value->range, {"warps", quote(text(warps->value->range))});
      else
        report(DiagId::BadWarps, warps->value->range, {text(warps->value->range)});
      ok = false;
    } else if (!isPowerOfTwo(w.c.i) || w.c.i > 32) {
      report(DiagId::BadWarps, warps->value->range, {w.c.str()});
      ok = false;
    } else {
      fn_->numWarps = w.c.i;
    }
  }
  if (cluster && !analyzeCluster(*cluster->value)) ok = false;
  return ok;
}

// cluster=C: a power of two up to 8 (the portable cluster size), and, where the grid's
// first axis is a constant, a divisor of it (a launch needs whole clusters).
bool Analyzer::analyzeCluster(const ast::Expr& e) {
  Val c = eval(e);
  if (c.isError()) return false;
  const std::string written = text(e.range);
  if (c.kind != Val::Kind::Const || c.c.kind != Constant::Kind::Int) {
    report(DiagId::BadCluster, e.range, {written, "the cluster size must be a constant integer, but it is " + describe(c)});
    return false;
  }
  if (!isPowerOfTwo(c.c.i) || c.c.i > 8) {
    report(DiagId::BadCluster, e.range,
           {written, "a cluster is 1, 2, 4 or 8 blocks along the grid's first axis, not " + c.c.str()});
    return false;
  }
  const ir::LaunchExpr& x = fn_->grid[0];
  if (x.kind == ir::LaunchExpr::Kind::Const && x.value % c.c.i != 0) {
    report(DiagId::BadCluster, e.range,
           {written, "the grid's first axis is " + std::to_string(x.value) + " blocks, which do not form whole clusters of " +
                         c.c.str() + "; make it a multiple of " + c.c.str()});
    return false;
  }
  fn_->clusterSize = c.c.i;
  return true;
}

Val Analyzer::builtinRequire(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  if (!frame_->isKernel || controlDepth_ > 0) {
    report(DiagId::NotAtTopLevel, call.range, {"require()", frame_->isKernel ? "a loop or a branch" : "a @device function"});
    return Val::error();
  }
  std::string message;
  if (a[1]) {
    Val m = eval(*a[1]->value);
    if (m.isError()) return Val::error();
    if (m.kind != Val::Kind::String) {
      report(DiagId::BadArgument, a[1]->value->range, {"message", "require", "a string", describe(m)});
      return Val::error();
    }
    message = m.text;
  }
  std::optional<LaunchVal> cond = evalLaunch(*a[0]->value, "a requirement");
  if (!cond) return Val::error();
  std::string condText = text(a[0]->value->range);
  if (!cond->isBool) {
    report(DiagId::ExpectedBool, a[0]->value->range, {"the condition of require()", "an integer expression",
                                                      "; compare explicitly, e.g. N % 16 == 0"});
    return Val::error();
  }
  if (cond->expr.kind == ir::LaunchExpr::Kind::Const) {
    if (cond->expr.value == 0) report(DiagId::RequirementFalse, a[0]->value->range, {condText});
    return Val::none();
  }
  fn_->requirements.push_back({std::move(cond->expr), message.empty() ? condText : message, call.range});
  return Val::none();
}

}  // namespace argus::sema::detail
