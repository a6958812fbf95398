// Structured control flow: `for ... in range(...)` and `for ... in
// pipelined(n, stages=S)` with loop-carried values, and `if/elif/else` (folded
// when the condition is a constant, else an IR If that yields the variables
// its branches assign).
#include <unordered_set>

#include "frontend/sema_internal.h"
#include "ir/pipeline.h"

namespace argus::sema::detail {

namespace {

// Where `name` is first assigned in `block` (for messages about carried values).
const ast::Expr* findAssignment(const ast::Block& block, const std::string& name) {
  std::vector<const ast::Expr*> stack;
  for (const ast::StmtPtr& s : block) {
    if (!s) continue;
    stack.clear();
    if (s->kind == ast::StmtKind::Assign)
      for (const ast::ExprPtr& t : static_cast<const ast::AssignStmt&>(*s).targets) stack.push_back(t.get());
    if (s->kind == ast::StmtKind::AugAssign) stack.push_back(static_cast<const ast::AugAssignStmt&>(*s).target.get());
    while (!stack.empty()) {
      const ast::Expr* e = stack.back();
      stack.pop_back();
      if (!e) continue;
      if (e->kind == ast::ExprKind::Name && static_cast<const ast::NameExpr*>(e)->name == name) return e;
      if (e->kind == ast::ExprKind::Tuple)
        for (const ast::ExprPtr& x : static_cast<const ast::TupleExpr*>(e)->elements) stack.push_back(x.get());
    }
    const ast::Expr* found = nullptr;
    if (s->kind == ast::StmtKind::For) found = findAssignment(static_cast<const ast::ForStmt&>(*s).body, name);
    if (s->kind == ast::StmtKind::If) {
      const auto& i = static_cast<const ast::IfStmt&>(*s);
      found = findAssignment(i.then, name);
      if (!found) found = findAssignment(i.orelse, name);
    }
    if (found) return found;
  }
  return nullptr;
}

std::vector<std::string> uniqueNames(std::vector<std::string> names) {
  std::unordered_set<std::string> seen;
  std::vector<std::string> out;
  for (std::string& n : names)
    if (seen.insert(n).second) out.push_back(std::move(n));
  return out;
}

bool sameConstant(const Constant& a, const Constant& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.weak == b.weak && a.i == b.i &&
         (a.kind != Constant::Kind::Float || a.f == b.f);
}

}  // namespace

bool Analyzer::checkCondition(const Val& cond, SourceRange range, const char* keyword) {
  if (cond.isError()) return false;
  const ir::Type* t = typeOf(cond);
  if (t && t->isTile()) {
    report(DiagId::TileCondition, range, {keyword, describe(cond)});
    return false;
  }
  if (!isValueLike(cond) || dtypeOf(cond) != ir::DType::Bool) {
    report(DiagId::ExpectedBool, range, {std::string("the condition of '") + keyword + "'", describe(cond),
                                         isValueLike(cond) ? "; compare explicitly, e.g. x != 0" : ""});
    return false;
  }
  return true;
}

std::optional<ir::ValueId> Analyzer::carriedValue(const std::string& name, const Val& v, const ir::Type* want,
                                                  SourceRange range, bool loop) {
  if (v.isError()) return std::nullopt;
  if (v.kind == Val::Kind::Const && want->isScalar() && canAdapt(v.c, want->dtype))
    return materialize(v, want->dtype, range);
  if (v.kind == Val::Kind::Value) {
    ir::ValueId id = coerceTo(v.id, *want, range);
    if (id != ir::kNoValue) return id;
  }
  if (loop) report(DiagId::LoopCarriedType, range, {name, describeType(*want), describe(v)});
  else report(DiagId::BranchTypeMismatch, range, {name, describeType(*want), describe(v)});
  return std::nullopt;
}

void Analyzer::analyzeFor(const ast::ForStmt& s) {
  if (!s.target || !s.iter) return;
  if (s.target->kind != ast::ExprKind::Name) {
    report(DiagId::BadAssignTarget, s.target->range, {quote(text(s.target->range)) + " in a for loop; use one name"});
    return;
  }
  const ast::CallExpr* call = s.iter->kind == ast::ExprKind::Call ? static_cast<const ast::CallExpr*>(s.iter.get()) : nullptr;
  auto isCallTo = [&](const char* name) {
    return call && call->callee && call->callee->kind == ast::ExprKind::Name &&
           static_cast<const ast::NameExpr&>(*call->callee).name == name && !findBinding(name);
  };
  bool isRange = isCallTo("range");
  // Triton's `for i in tl.range(...)` / `tl.static_range(...)`: reported (AG3070), then a range loop.
  if (call && call->callee && call->callee->kind == ast::ExprKind::Attribute) {
    const auto& attr = static_cast<const ast::AttributeExpr&>(*call->callee);
    if (attr.name == "range" || attr.name == "static_range") isRange = tritonQualifiedName(attr).has_value();
  }
  if (isCallTo("pipelined")) {
    std::optional<PipelinedIterator> pipelined = analyzePipelinedIterator(*call);
    if (pipelined) analyzeLoopBody(s, pipelined->bounds, pipelined->stages, pipelined->specialize);
    return;
  }
  if (!isRange) {
    if (call && call->callee && call->callee->kind == ast::ExprKind::Name) {
      const std::string& callee = static_cast<const ast::NameExpr&>(*call->callee).name;
      if (!findBinding(callee) && !devices_.count(callee) && !findBuiltin(callee)) {
        reportUnknownName(callee, call->callee->range, {}, true);
        return;
      }
    }
    Val v = eval(*s.iter);
    if (!v.isError()) report(DiagId::ForNeedsRange, s.iter->range, {describe(v)});
    return;
  }
  addReference(builtinSymbol("range", findBuiltin("range")->signature), call->callee->range);
  size_t given = 0;
  for (const ast::Argument& a : call->args) {
    if (a.keyword) {
      report(DiagId::UnknownKeyword, a.keywordRange, {"range", *a.keyword, ""});
      return;
    }
    ++given;
  }
  if (given < 1 || given > 3) {
    report(DiagId::ArgumentCount, given ? call->args[3].range : call->range,
           {"range", "1 to 3 arguments", std::to_string(given) + (given == 1 ? " was" : " were")});
    return;
  }
  const char* names1[] = {"stop"};
  const char* names3[] = {"start", "stop", "step"};
  std::vector<Val> bounds;
  bool ok = true;
  for (size_t i = 0; i < given; ++i) {
    const ast::Expr& e = *call->args[i].value;
    Val v = eval(e);
    const char* pname = given == 1 ? names1[0] : names3[i];
    if (v.isError()) { ok = false; continue; }
    bool good = (v.kind == Val::Kind::Const && v.c.kind == Constant::Kind::Int && canAdapt(v.c, ir::DType::I32)) ||
                (typeOf(v) && *typeOf(v) == ir::Type::scalar(ir::DType::I32));
    if (!good) {
      report(DiagId::BadArgument, e.range, {pname, "range", "an i32 scalar", describe(v)});
      ok = false;
      continue;
    }
    if (i == 2 && v.kind == Val::Kind::Const && v.c.i <= 0) {
      report(DiagId::RangeStep, e.range, {v.c.str()});
      ok = false;
    }
    bounds.push_back(v);
  }
  if (!ok) return;
  Val zero = Val::constant(Constant::ofInt(0)), one = Val::constant(Constant::ofInt(1));
  Val lb = given >= 2 ? bounds[0] : zero, ub = given >= 2 ? bounds[1] : bounds[0], step = given == 3 ? bounds[2] : one;
  analyzeLoopBody(s, {lb, ub, step}, 0);
}

// `pipelined(n, stages=S)`: a loop from 0 to n with step 1 whose leading
// copy_async statements the policy pass (ir/pipeline.h) overlaps with the rest.
std::optional<Analyzer::PipelinedIterator> Analyzer::analyzePipelinedIterator(const ast::CallExpr& call) {
  const BuiltinInfo& info = builtinTable()[static_cast<size_t>(Builtin::Pipelined)];
  addReference(builtinSymbol(info.name, info.signature), call.callee->range);
  std::vector<const ast::Argument*> slots;
  if (!bindArguments(call, info.name, info.params, info.required, slots)) return std::nullopt;
  bool specialize = false;
  if (slots.size() > 2 && slots[2]) {
    Val flag = eval(*slots[2]->value);
    if (flag.isError()) return std::nullopt;
    if (flag.kind != Val::Kind::Const || flag.c.kind != Constant::Kind::Bool) {
      report(DiagId::BadArgument, slots[2]->value->range, {"specialize", "pipelined", "True or False", describe(flag)});
      return std::nullopt;
    }
    specialize = flag.c.i != 0;
  }
  Val n = eval(*slots[0]->value);
  std::optional<int64_t> stages = constIntArg(*slots[1]->value, "pipelined", "stages");
  if (n.isError() || !stages) return std::nullopt;
  bool good = (n.kind == Val::Kind::Const && n.c.kind == Constant::Kind::Int && canAdapt(n.c, ir::DType::I32)) ||
              (typeOf(n) && *typeOf(n) == ir::Type::scalar(ir::DType::I32));
  if (!good) {
    report(DiagId::BadArgument, slots[0]->value->range, {"n", "pipelined", "an i32 scalar", describe(n)});
    return std::nullopt;
  }
  if (*stages < 2 || *stages > 8) {
    report(DiagId::PipelineStages, slots[1]->value->range, {std::to_string(*stages)});
    return std::nullopt;
  }
  return PipelinedIterator{{Val::constant(Constant::ofInt(0)), n, Val::constant(Constant::ofInt(1))}, *stages, specialize};
}

// Reports why a pipelined loop cannot be rewritten, with fix-its where there is one.
void Analyzer::reportPipeliningProblems(const ast::ForStmt& s, const ir::Op& loop) {
  const auto& call = static_cast<const ast::CallExpr&>(*s.iter);
  std::string n = "n";
  for (const ast::Argument& a : call.args)
    if (a.value && (!a.keyword || *a.keyword == "n")) {
      n = text(a.value->range);
      break;
    }
  std::string byHand = "range(" + n + ")";
  for (const ir::PipelineProblem& problem : ir::findPipeliningProblems(*fn_, loop)) {
    ir::PipelineMessage m = ir::describe(*fn_, problem, &file_);
    Diagnostic* d = report(m.id, m.range, m.args);
    if (!d) continue;
    d->labels.insert(d->labels.end(), m.labels.begin(), m.labels.end());
    std::string written = text(problem.range);
    if (problem.kind == ir::PipelineProblem::Kind::NoLeadingCopy && written.rfind("copy(", 0) == 0)
      addFixIt(d, {problem.range.begin, problem.range.begin + 4}, "copy_async", "copy asynchronously");
    else if (problem.kind == ir::PipelineProblem::Kind::NoLeadingCopy ||
             problem.kind == ir::PipelineProblem::Kind::ExplicitSync)
      addFixIt(d, s.iter->range, byHand, "loop over " + byHand + " and synchronize by hand");
  }
}

void Analyzer::analyzeLoopBody(const ast::ForStmt& s, const std::vector<Val>& bounds, int64_t stages, bool specialize) {
  SourceRange forKeyword{s.range.begin, s.range.begin + 3};
  const auto& loopVar = static_cast<const ast::NameExpr&>(*s.target);
  std::vector<ir::ValueId> operands{materialize(bounds[0], ir::DType::I32, s.iter->range),
                                    materialize(bounds[1], ir::DType::I32, s.iter->range),
                                    materialize(bounds[2], ir::DType::I32, s.iter->range)};

  // Variables assigned in the body: those defined before the loop are carried.
  std::vector<std::string> assigned;
  collectAssigned(s.body, assigned);
  assigned.push_back(loopVar.name);
  assigned = uniqueNames(std::move(assigned));
  std::unordered_map<std::string, std::optional<Binding>> saved;
  struct Carried {
    std::string name;
    ir::Type type;
    SourceRange range;  // first assignment in the body
  };
  std::vector<Carried> carried;
  std::vector<ir::Type> types;
  for (const std::string& name : assigned) {
    Binding* bnd = findBinding(name);
    saved[name] = bnd ? std::optional<Binding>(*bnd) : std::nullopt;
    if (name == loopVar.name || !bnd || bnd->state != Binding::State::Defined) continue;
    if (frame_->isKernel && bnd->kind != Symbol::Kind::Local && bnd->kind != Symbol::Kind::LoopVar) continue;
    const ast::Expr* where = findAssignment(s.body, name);
    SourceRange range = where ? where->range : forKeyword;
    if (bnd->val.isError()) continue;
    if (!isValueLike(bnd->val)) {
      report(DiagId::CannotCarry, range, {name, describe(bnd->val)});
      continue;
    }
    ir::ValueId init = materialize(bnd->val, std::nullopt, range);
    operands.push_back(init);
    carried.push_back({name, fn_->values[init].type, range});
    types.push_back(fn_->values[init].type);
  }

  ir::Attrs loopAttrs;
  ir::ForAttrs(loopAttrs).stages(stages).specialize(specialize);
  ir::Op& op = b().create(ir::OpKind::For, operands, types, s.range, loopAttrs);
  size_t errorsBefore = errors_, poisonedBefore = poisonedReads_;
  ir::Block* body = &op.regions[0];
  ir::ValueId iv = b().addBlockArg(*body, ir::Type::scalar(ir::DType::I32), loopVar.name, loopVar.range);
  std::vector<ir::ValueId> iterArgs;
  for (const Carried& c : carried) iterArgs.push_back(b().addBlockArg(*body, c.type, c.name, c.range));

  ir::Block* outer = b().block();
  b().setBlock(body);
  ++controlDepth_;
  {
    Binding lv;
    lv.kind = Symbol::Kind::LoopVar;
    lv.symbol = defineSymbol(Symbol::Kind::LoopVar, loopVar.name, loopVar.range, "i32 loop variable");
    lv.version = nextVersion_++;
    lv.val = Val::value(iv);
    frame_->env[loopVar.name] = std::move(lv);
  }
  for (size_t i = 0; i < carried.size(); ++i) {
    Binding& bnd = frame_->env[carried[i].name];
    bnd.val = Val::value(iterArgs[i]);
    bnd.version = nextVersion_++;
  }
  const bool outerSpecialized = inSpecializedPipeline_;
  if (stages > 0) {
    ++pipelinedDepth_;
    inSpecializedPipeline_ = specialize;
  }
  analyzeBlock(s.body, false);
  if (stages > 0) --pipelinedDepth_;
  inSpecializedPipeline_ = outerSpecialized;
  std::vector<ir::ValueId> yields;
  for (size_t i = 0; i < carried.size(); ++i) {
    Binding* bnd = findBinding(carried[i].name);
    std::optional<ir::ValueId> v;
    if (bnd && bnd->state == Binding::State::Defined)
      v = carriedValue(carried[i].name, bnd->val, &carried[i].type, carried[i].range, true);
    yields.push_back(v ? *v : iterArgs[i]);
  }
  b().create(ir::OpKind::Yield, yields, {}, s.range);
  --controlDepth_;
  b().setBlock(outer);
  // Checked once the body is complete; uses of a staged buffer after the loop
  // are found when the pass runs (driver/compilation.cpp).
  // A statement that uses a value whose definition failed is missing from the IR:
  // judging the loop's shape without it would be judging a program nobody wrote.
  if (stages > 0 && errors_ == errorsBefore && poisonedReads_ == poisonedBefore) reportPipeliningProblems(s, op);

  // After the loop: carried names hold the loop's results; names first
  // assigned in the body (and the loop variable) are out of scope.
  uint32_t line = lineOf(s.range);
  for (auto& [name, before] : saved) {
    Binding* now = findBinding(name);
    if (before) {
      frame_->env[name] = *before;
    } else if (now) {
      now->state = Binding::State::OnlyInLoop;
      now->line = line;
    }
  }
  for (size_t i = 0; i < carried.size(); ++i) {
    Binding& bnd = frame_->env[carried[i].name];
    bnd.val = Val::value(op.results[i]);
    bnd.version = nextVersion_++;
    fn_->values[op.results[i]].name = carried[i].name;
  }
}

void Analyzer::analyzeIf(const ast::IfStmt& s) {
  const char* keyword = s.isElif ? "elif" : "if";
  SourceRange kw{s.range.begin, s.range.begin + static_cast<uint32_t>(s.isElif ? 4 : 2)};
  Val cond = s.cond ? eval(*s.cond) : Val::error();
  bool condOk = s.cond && checkCondition(cond, s.cond->range, keyword);
  if (condOk && cond.kind == Val::Kind::Const) {
    // A compile-time condition selects its branch; the other is not analysed.
    analyzeBlock(cond.c.i ? s.then : s.orelse, false);
    return;
  }
  ir::ValueId condId = condOk ? cond.id : b().constBool(false, kw);

  std::vector<std::string> assigned;
  collectAssigned(s.then, assigned);
  collectAssigned(s.orelse, assigned);
  assigned = uniqueNames(std::move(assigned));
  std::vector<std::optional<Binding>> before, afterThen, afterElse;
  for (const std::string& n : assigned) {
    Binding* bnd = findBinding(n);
    before.push_back(bnd ? std::optional<Binding>(*bnd) : std::nullopt);
  }
  auto snapshot = [&](std::vector<std::optional<Binding>>& out) {
    for (const std::string& n : assigned) {
      Binding* bnd = findBinding(n);
      out.push_back(bnd ? std::optional<Binding>(*bnd) : std::nullopt);
    }
  };
  auto restore = [&] {
    for (size_t i = 0; i < assigned.size(); ++i) {
      if (before[i]) frame_->env[assigned[i]] = *before[i];
      else frame_->env.erase(assigned[i]);
    }
  };
  ir::Block thenBlock, elseBlock;
  ir::Block* outer = b().block();
  ++controlDepth_;
  b().setBlock(&thenBlock);
  analyzeBlock(s.then, false);
  snapshot(afterThen);
  restore();
  b().setBlock(&elseBlock);
  analyzeBlock(s.orelse, false);
  snapshot(afterElse);
  restore();
  --controlDepth_;

  struct Merged {
    std::string name;
    ir::ValueId thenValue, elseValue;
    Binding binding;
  };
  std::vector<Merged> merged;
  std::vector<ir::Type> types;
  uint32_t line = lineOf(s.range);
  for (size_t i = 0; i < assigned.size(); ++i) {
    const std::string& name = assigned[i];
    auto changed = [&](const std::optional<Binding>& x) {
      return x && (!before[i] || x->version != before[i]->version);
    };
    bool tChanged = changed(afterThen[i]), eChanged = changed(afterElse[i]);
    if (!tChanged && !eChanged) continue;
    const std::optional<Binding>& t = tChanged ? afterThen[i] : before[i];
    const std::optional<Binding>& e = eChanged ? afterElse[i] : before[i];
    const Binding& any = tChanged ? *afterThen[i] : *afterElse[i];
    if (!t || !e || t->state != Binding::State::Defined || e->state != Binding::State::Defined) {
      Binding partial = any;
      partial.state = Binding::State::OnlyInBranch;
      partial.line = line;
      frame_->env[name] = partial;
      continue;
    }
    const Val& tv = t->val;
    const Val& ev = e->val;
    Binding result = any;
    result.state = Binding::State::Defined;
    result.version = nextVersion_++;
    if (tv.isError() || ev.isError()) {
      result.val = Val::error();
      frame_->env[name] = result;
      continue;
    }
    if (tv.kind == Val::Kind::Const && ev.kind == Val::Kind::Const && sameConstant(tv.c, ev.c)) {
      result.val = tv;
      frame_->env[name] = result;
      continue;
    }
    if (tv.kind == Val::Kind::Value && ev.kind == Val::Kind::Value && tv.id == ev.id) {
      result.val = tv;
      frame_->env[name] = result;
      continue;
    }
    if (!isValueLike(tv) || !isValueLike(ev)) {
      result.val = isValueLike(tv) ? ev : tv;
      result.state = Binding::State::Unmergeable;
      frame_->env[name] = result;
      continue;
    }
    // The result type: the typed side's, or the constants' common dtype.
    ir::Type want;
    if (tv.kind == Val::Kind::Value) want = fn_->values[tv.id].type;
    else if (ev.kind == Val::Kind::Value) want = fn_->values[ev.id].type;
    else if (tv.c.dtype == ev.c.dtype || canAdapt(ev.c, tv.c.dtype)) want = ir::Type::scalar(tv.c.dtype);
    else want = ir::Type::scalar(ev.c.dtype);
    const ast::Expr* where = findAssignment(s.then, name);
    if (!where) where = findAssignment(s.orelse, name);
    SourceRange range = where ? where->range : kw;
    b().setBlock(&thenBlock);
    std::optional<ir::ValueId> tid = carriedValue(name, tv, &want, range, false);
    b().setBlock(&elseBlock);
    std::optional<ir::ValueId> eid = tid ? carriedValue(name, ev, &want, range, false) : std::nullopt;
    if (!tid || !eid) {
      result.val = Val::error();
      frame_->env[name] = result;
      continue;
    }
    merged.push_back({name, *tid, *eid, result});
    types.push_back(want);
  }
  std::vector<ir::ValueId> thenYield, elseYield;
  for (const Merged& m : merged) {
    thenYield.push_back(m.thenValue);
    elseYield.push_back(m.elseValue);
  }
  b().setBlock(&thenBlock);
  b().create(ir::OpKind::Yield, thenYield, {}, s.range);
  b().setBlock(&elseBlock);
  b().create(ir::OpKind::Yield, elseYield, {}, s.range);
  b().setBlock(outer);
  ir::Op& op = b().create(ir::OpKind::If, {condId}, types, s.range);
  op.regions[0] = std::move(thenBlock);
  op.regions[1] = std::move(elseBlock);
  for (size_t i = 0; i < merged.size(); ++i) {
    Binding bnd = merged[i].binding;
    bnd.val = Val::value(op.results[i]);
    fn_->values[op.results[i]].name = merged[i].name;
    frame_->env[merged[i].name] = std::move(bnd);
  }
}

}  // namespace argus::sema::detail
