// Statements: blocks, assignments, returns, unsupported and reserved
// statements, and inlining of @device functions.
#include "frontend/limits.h"
#include "frontend/sema_internal.h"

namespace argus::sema::detail {

namespace {
SourceRange keywordRange(const ast::Stmt& s, size_t length) { return {s.range.begin, s.range.begin + static_cast<uint32_t>(length)}; }
}  // namespace

void Analyzer::analyzeBlock(const ast::Block& block, bool functionTop) {
  for (size_t i = 0; i < block.size(); ++i)
    if (block[i]) analyzeStmt(*block[i], functionTop && i + 1 == block.size());
}

bool Analyzer::enterAnalysis(SourceRange range, const char* what) {
  if (analysisDepth_ < frontend::kMaxAnalysisDepth) {
    ++analysisDepth_;
    return true;
  }
  if (Diagnostic* d = report(DiagId::NestingTooDeep, range,
                             {what, std::to_string(frontend::kMaxAnalysisDepth) + " levels of expressions and statements "
                                                                                   "across the @device calls that lead here"}))
    d->notes.push_back("the expressions and blocks of each inlined @device function add up; flatten the deepest "
                       "function or call fewer functions inside each other");
  return false;
}

void Analyzer::analyzeStmt(const ast::Stmt& s, bool lastOfFunction) {
  if (!enterAnalysis(s.range, "this statement")) return;
  analyzeStmtAtDepth(s, lastOfFunction);
  --analysisDepth_;
}

void Analyzer::analyzeStmtAtDepth(const ast::Stmt& s, bool lastOfFunction) {
  switch (s.kind) {
    case ast::StmtKind::Expr:
      if (const auto& e = static_cast<const ast::ExprStmt&>(s).expr) eval(*e);
      return;
    case ast::StmtKind::Assign: return analyzeAssign(static_cast<const ast::AssignStmt&>(s));
    case ast::StmtKind::AugAssign: return analyzeAugAssign(static_cast<const ast::AugAssignStmt&>(s));
    case ast::StmtKind::For: return analyzeFor(static_cast<const ast::ForStmt&>(s));
    case ast::StmtKind::If: return analyzeIf(static_cast<const ast::IfStmt&>(s));
    case ast::StmtKind::While:
      report(DiagId::NotSupportedYet, keywordRange(s, 5), {"while", "loop with 'for i in range(n)'"});
      return;
    case ast::StmtKind::Break:
      report(DiagId::NotSupportedYet, keywordRange(s, 5), {"break", "control flow is uniform; bound the loop with range(...)"});
      return;
    case ast::StmtKind::Continue:
      report(DiagId::NotSupportedYet, keywordRange(s, 8), {"continue", "put the rest of the body under an 'if'"});
      return;
    case ast::StmtKind::Assert: return analyzeAssert(static_cast<const ast::AssertStmt&>(s));
    case ast::StmtKind::Return: {
      const auto& r = static_cast<const ast::ReturnStmt&>(s);
      if (frame_->isKernel) {
        report(DiagId::ReturnOutsideDevice, keywordRange(s, 6));
        return;
      }
      Val v = r.value ? eval(*r.value) : Val::none();
      if (!lastOfFunction) report(DiagId::ReturnNotLast, keywordRange(s, 6));
      if (!frame_->returnValue) frame_->returnValue = std::move(v);
      return;
    }
    case ast::StmtKind::Pass:
    case ast::StmtKind::Error:
      return;
  }
}

void Analyzer::analyzeAssign(const ast::AssignStmt& s) {
  if (!s.value) return;
  Val v = eval(*s.value);
  if (v.kind == Val::Kind::None && s.value->kind == ast::ExprKind::Call) {
    const auto& call = static_cast<const ast::CallExpr&>(*s.value);
    if (call.callee && call.callee->kind == ast::ExprKind::Name &&
        devices_.count(static_cast<const ast::NameExpr&>(*call.callee).name) &&
        !findBinding(static_cast<const ast::NameExpr&>(*call.callee).name)) {
      report(DiagId::NoReturnValue, s.value->range, {static_cast<const ast::NameExpr&>(*call.callee).name});
      v = Val::error();
    }
  }
  if (s.annotation && !v.isError()) {
    if (std::optional<ir::DType> dt = annotationDType(*s.annotation, true)) {
      std::string dn = ir::dtypeName(*dt);
      if (v.kind == Val::Kind::Const && canAdapt(v.c, *dt)) {
        v = Val::constant(*convertConstant(v.c, *dt));
      } else if (!(typeOf(v) && (typeOf(v)->isScalar() || typeOf(v)->isTile()) && typeOf(v)->dtype == *dt)) {
        Diagnostic* d = report(DiagId::ValueDTypeMismatch, s.value->range,
                               {"assign", describe(v), quote(text(s.annotation->range)), dn});
        if (isValueLike(v)) addFixIt(d, s.value->range, "cast(" + text(s.value->range) + ", " + dn + ")", "convert it to " + dn);
        v = Val::error();
      }
    } else {
      v = Val::error();
    }
  }
  for (const ast::ExprPtr& t : s.targets)
    if (t) assignTo(*t, v, s.value->range);
}

void Analyzer::assignTo(const ast::Expr& target, const Val& value, SourceRange valueRange) {
  switch (target.kind) {
    case ast::ExprKind::Name:
      bindLocal(static_cast<const ast::NameExpr&>(target), value);
      return;
    case ast::ExprKind::Tuple:
    case ast::ExprKind::List: {
      const auto& elems = target.kind == ast::ExprKind::Tuple ? static_cast<const ast::TupleExpr&>(target).elements
                                                              : static_cast<const ast::ListExpr&>(target).elements;
      bool unpackable = value.kind == Val::Kind::Tuple && value.elems.size() == elems.size();
      if (!unpackable && !value.isError())
        report(DiagId::UnpackMismatch, target.range, {describe(value), std::to_string(elems.size())});
      for (size_t i = 0; i < elems.size(); ++i)
        if (elems[i]) assignTo(*elems[i], unpackable ? value.elems[i] : Val::error(), valueRange);
      return;
    }
    case ast::ExprKind::Subscript: {
      Val view = eval(target);
      if (view.isError()) return;
      const ir::Type* t = typeOf(view);
      if (!t || t->kind != ir::TypeKind::View) {
        report(DiagId::BadAssignTarget, target.range, {describe(view)});
        return;
      }
      storeValue(view, Operand{value, valueRange}, target.range, "store");
      return;
    }
    case ast::ExprKind::Attribute:
      report(DiagId::BadAssignTarget, target.range, {"an attribute"});
      return;
    case ast::ExprKind::Error:
      return;
    default:
      report(DiagId::BadAssignTarget, target.range, {quote(text(target.range))});
      return;
  }
}

void Analyzer::analyzeAugAssign(const ast::AugAssignStmt& s) {
  if (!s.target || !s.value) return;
  if (s.target->kind == ast::ExprKind::Name) {
    Operand current{eval(*s.target), s.target->range};
    Operand rhs{eval(*s.value), s.value->range};
    Val result = binaryOp(s.op, std::move(current), std::move(rhs), s.opRange, s.range);
    bindLocal(static_cast<const ast::NameExpr&>(*s.target), result);
    return;
  }
  if (s.target->kind == ast::ExprKind::Subscript) {
    Val view = eval(*s.target);
    Operand rhs{eval(*s.value), s.value->range};
    if (view.isError() || rhs.val.isError()) return;
    const ir::Type vt = *typeOf(view);
    if (vt.kind != ir::TypeKind::View) {
      report(DiagId::BadAssignTarget, s.target->range, {describe(view)});
      return;
    }
    for (int64_t e : vt.shape)
      if (!checkTileExtent(e, s.target->range, true, "tile")) return;
    ir::ValueId loaded = b().make(ir::OpKind::Load, {view.id}, ir::Type::tile(vt.dtype, ir::Layout::canonical(vt.shape)),
                                  s.target->range);
    Val result = binaryOp(s.op, Operand{Val::value(loaded), s.target->range}, std::move(rhs), s.opRange, s.range);
    storeValue(view, Operand{result, s.range}, s.range, "store");
    return;
  }
  report(DiagId::BadAssignTarget, s.target->range, {quote(text(s.target->range))});
}

Val Analyzer::callDevice(const ast::FunctionDef& def, const ast::CallExpr& call) {
  auto evalArgs = [&] {
    for (const ast::Argument& a : call.args)
      if (a.value) eval(*a.value);
  };
  if (inlineStack_.size() >= frontend::kMaxDeviceCallDepth) {
    if (Diagnostic* d = report(DiagId::NestingTooDeep, call.callee->range,
                               {"this call of '" + def.name + "'",
                                std::to_string(frontend::kMaxDeviceCallDepth) + " @device calls inside each other"}))
      d->notes.push_back("each @device call is inlined into its caller; call fewer functions inside each other");
    evalArgs();
    return Val::error();
  }
  for (size_t i = 0; i < inlineStack_.size(); ++i) {
    if (inlineStack_[i] != &def) continue;
    std::string chain;
    for (size_t k = i; k < inlineStack_.size(); ++k) chain += inlineStack_[k]->name + " -> ";
    chain += def.name;
    report(DiagId::RecursiveDevice, call.callee->range, {def.name, chain});
    return Val::error();
  }
  std::vector<std::string> names;
  size_t required = 0;
  for (const ast::Param& p : def.params) {
    names.push_back(p.name);
    if (!p.defaultValue && required == names.size() - 1) ++required;
  }
  std::vector<const ast::Argument*> slots;
  if (!bindArguments(call, def.name, names, required, slots)) {
    evalArgs();
    return Val::error();
  }
  std::vector<Val> args(def.params.size());
  bool ok = true;
  for (size_t i = 0; i < def.params.size(); ++i) {
    if (slots[i]) {
      args[i] = eval(*slots[i]->value);
      ok = ok && !args[i].isError();
    } else if (!def.params[i].defaultValue) {
      report(DiagId::MissingArgument, call.parenRange.empty() ? call.range : call.parenRange, {def.name, names[i]});
      ok = false;
    }
  }
  if (!ok) return Val::error();

  inlined_.insert(&def);
  Frame callee;
  callee.def = &def;
  callee.callRange = call.range;
  Frame* caller = frame_;
  frame_ = &callee;
  inlineStack_.push_back(&def);
  callStack_.push_back(call.range);
  for (size_t i = 0; i < def.params.size(); ++i) {
    const ast::Param& p = def.params[i];
    Val v = slots[i] ? args[i] : eval(*p.defaultValue);
    SourceRange argRange = slots[i] ? slots[i]->value->range : p.defaultValue->range;
    if (p.annotation && !v.isError()) {
      const ast::Expr& ann = *p.annotation;
      std::string declared = text(ann.range);
      bool isConst = ann.kind == ast::ExprKind::Name && static_cast<const ast::NameExpr&>(ann).name == "const";
      if (isConst) {
        if (v.kind != Val::Kind::Const) {
          report(DiagId::DeviceArgumentType, argRange, {p.name, def.name, describe(v), declared});
          v = Val::error();
        }
      } else if (ann.kind == ast::ExprKind::Subscript) {
        ir::DType dt;
        std::vector<const ast::Expr*> dims;
        const ir::Type* t = typeOf(v);
        if (parseTensorAnnotation(ann, dt, dims) &&
            (!t || t->kind != ir::TypeKind::Tensor || t->dtype != dt || t->shape.size() != dims.size())) {
          report(DiagId::DeviceArgumentType, argRange, {p.name, def.name, describe(v), declared});
          v = Val::error();
        }
      } else if (std::optional<ir::DType> dt = annotationDType(ann, true)) {
        if (v.kind == Val::Kind::Const && canAdapt(v.c, *dt)) {
          v = Val::constant(*convertConstant(v.c, *dt));
        } else if (!(typeOf(v) && (typeOf(v)->isScalar() || typeOf(v)->isTile()) && typeOf(v)->dtype == *dt)) {
          report(DiagId::DeviceArgumentType, argRange, {p.name, def.name, describe(v), declared});
          v = Val::error();
        }
      }
    }
    bind(p.name, v, p.nameRange, Symbol::Kind::Parameter);
  }
  if (def.hasSyntaxErrors) {
    ++quiet_;
    ++errors_;  // the calling kernel cannot be compiled either
  }
  analyzeBlock(def.body, true);
  if (def.hasSyntaxErrors) --quiet_;
  Val result = callee.returnValue ? *callee.returnValue : Val::none();
  inlineStack_.pop_back();
  callStack_.pop_back();
  frame_ = caller;
  return result;
}

}  // namespace argus::sema::detail
