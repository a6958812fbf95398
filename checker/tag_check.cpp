// Tag assertions: at each Assert of the final tag-flow walk, the elements that
// reach it become Z3 terms (a symbolic thread and value index through the
// tile's distribution, or a symbolic slot of shared memory), the condition is
// compiled over their tags, and Z3 looks for an element where it is false.
#include "checker/tag_check.h"
#include "checker/layout_encode.h"
#include "checker/scalar_semantics.h"
#include "checker/solver_budget.h"


#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

namespace {

// One value whose tags the assertion reads, at one symbolic element.
struct Subject {
  ir::ValueId id = ir::kNoValue;
  std::string text;
  std::vector<z3::expr> coords;
  std::optional<z3::expr> thread, value;
  TagMap tags;  // substituted: terms over the element's coordinates
};

// One tag read of the condition, for the report.
struct Read {
  std::string text;
  z3::expr value, known, present;
};

class AssertionChecker {
 public:
  AssertionChecker(TagFlow& flow, z3::context& ctx, const ir::Function& fn, DiagnosticSink& diags,
                   const SourceFile* file, const Options& options)
      : flow_(flow), ctx_(ctx), fn_(fn), diags_(diags), file_(file), options_(options) {
    // The walk is path-insensitive: a read under an `if` may run only where its slots were
    // written, so the built-in "reads written slots" (AG2041) leaves those reads alone.
    std::vector<std::pair<const ir::Block*, bool>> work{{&fn.body, false}};
    while (!work.empty()) {
      auto [block, underIf] = work.back();
      work.pop_back();
      for (size_t i = 0; i < block->ops.size(); ++i) {
        const auto& op = block->ops[i];
        if (underIf) underIf_.insert(op.get());
        position_[op.get()] = {block, i};
        for (const ir::Block& region : op->regions) work.emplace_back(&region, underIf || op->kind == ir::OpKind::If);
      }
    }
  }

  void check(const ir::Op& op) {
    if (op.kind == ir::OpKind::Dot) {  // built-in: an error when definitely violated, "cannot prove" when undecided
      try {
        flow_.budget().setTraceLabel("tags:dot-k");
        checkDotOperandsAgreeInK(flow_, fn_, diags_, options_, op);
        flow_.budget().setTraceLabel("tags:dot-batch");
        checkDotOperandsShareBatch(flow_, fn_, diags_, op);
        flow_.budget().setTraceLabel("tags:dot-accumulator");
        checkDotAccumulatorAgrees(flow_, fn_, diags_, op);
        flow_.budget().setTraceLabel("tags:dot-covers-k");
        checkDotCoversK(flow_, fn_, diags_, op);
        flow_.budget().setTraceLabel("tags:read-written");
        for (size_t i = 0; i < 2 && i < op.operands.size(); ++i)
          if (readsWritten(op, op.operands[i])) break;
        flow_.budget().setTraceLabel("tags");
      } catch (const z3::exception& e) {
        diags_.report(DiagId::CheckerCannotProve, op.range,
                      {"the operands of this dot agree in K", std::string("the solver failed: ") + e.msg()});
      }
      return;
    }
    if (op.kind == ir::OpKind::Binary || op.kind == ir::OpKind::Fma) {
      flow_.budget().setTraceLabel("tags:epilogue");
      try {
        checkEpilogueOperandsAgree(flow_, fn_, diags_, op);
      } catch (const z3::exception& e) {
        diags_.report(DiagId::CheckerCannotProve, op.range,
                      {"this operation combines each element of a dot() result with the elements it belongs with",
                       std::string("the solver failed: ") + e.msg()});
      }
      flow_.budget().setTraceLabel("tags");
      return;
    }
    if (op.kind == ir::OpKind::Load) {
      flow_.budget().setTraceLabel("tags:read-written");
      try {
        readsWritten(op, ir::LoadOp(op).view());
      } catch (const z3::exception& e) {
        diags_.report(DiagId::CheckerCannotProve, op.range,
                      {"this load reads only written elements", std::string("the solver failed: ") + e.msg()});
      }
      flow_.budget().setTraceLabel("tags");
      return;
    }
    if (flow_.budget().spent()) {
      cannotProve(op, flow_.budget().spentReason(), {});
      return;
    }
    try {
      flow_.budget().setTraceLabel(op.kind == ir::OpKind::Store ? "tags:store" : "tags:assert");
      if (op.kind == ir::OpKind::Store) checkStoreLandsAtOrigin(flow_, fn_, diags_, options_, op);
      else checkOne(op);
      flow_.budget().setTraceLabel("tags");
    } catch (const z3::exception& e) {
      cannotProve(op, std::string("the solver failed: ") + e.msg(), {});
    }
  }

 private:
  // AG2041 for one shared view the op reads; true when it reported (one report per op).
  bool readsWritten(const ir::Op& op, ir::ValueId view) {
    const ir::Op* def = view < fn_.values.size() ? fn_.values[view].def : nullptr;
    if (underIf_.count(&op) || !def || def->kind != ir::OpKind::View || def->operands.empty() ||
        fn_.values[ir::ViewOp(*def).base()].type.kind != ir::TypeKind::Shared || flow_.budget().spent())
      return false;
    if (wholeBufferWrittenBefore(op, ir::ViewOp(*def).base())) return false;  // no query needed
    size_t before = diags_.diagnostics().size();
    checkSharedReadWritten(flow_, fn_, diags_, op, view);
    return diags_.diagnostics().size() > before;
  }
  // A store or copy into the whole buffer earlier in the read's own block, under no `if`:
  // every element is written in the same iteration before the read (gemm's copy, a
  // pipelined loop's copies as written), so AG2041's query would be unsatisfiable.
  bool wholeBufferWrittenBefore(const ir::Op& read, ir::ValueId buffer) const {
    auto at = position_.find(&read);
    if (at == position_.end()) return false;
    const auto& [block, index] = at->second;
    const std::vector<int64_t>& shape = fn_.values[buffer].type.shape;
    for (size_t i = 0; i < index; ++i) {
      const ir::Op& w = *block->ops[i];
      bool writes = ir::writesOperand(w.kind, 0);
      const ir::Op* view = writes ? fn_.values[writtenView(w)].def : nullptr;
      if (!view || view->kind != ir::OpKind::View || view->operands.empty() || ir::ViewOp(*view).base() != buffer ||
          fn_.values[writtenView(w)].type.shape != shape)
        continue;
      bool atZero = true;
      for (size_t d = 1; d < view->operands.size(); ++d) {
        atZero = atZero && ir::constantInt(fn_, view->operands[d]) == 0;
      }
      if (atZero) return true;
    }
    return false;
  }
  std::set<const ir::Op*> underIf_;
  std::map<const ir::Op*, std::pair<const ir::Block*, size_t>> position_;

  std::string conditionText(const ir::Op& op) const {
    return file_ ? std::string(file_->slice(op.range)) : std::string("assertion");
  }

  Subject subjectOf(ir::ValueId id, size_t index, std::vector<z3::expr>& constraints) {
    Subject s;
    s.id = id;
    s.text = flow_.valueName(id);
    const ir::Type& type = fn_.values[id].type;
    std::string suffix = "_" + std::to_string(index);
    std::vector<z3::expr> from;
    if (type.isTile()) {
      if (const TagMap* t = flow_.tilesTags(id)) s.tags = *t;
      ir::Distribution dist = ir::Distribution::of(type.layout, fn_.numWarps);
      z3::expr t = ctx_.bv_const(("thread" + suffix).c_str(), 32), v = ctx_.bv_const(("value" + suffix).c_str(), 32);
      s.thread = t;
      s.value = v;
      constraints.push_back(z3::ult(t, flow_.bv(fn_.numThreads())) && z3::ult(v, flow_.bv(dist.valuesPerThread)));
      // The distribution's mixed radix (ir/types.h), digit by digit.
      s.coords = encodeDistribution(ctx_, type.layout, dist, t, v, /*withPrimaryOwner=*/false).coordinate;
      for (size_t d = 0; d < type.shape.size(); ++d) from.push_back(flow_.coordVar(d));
    } else {
      bool buffer = type.kind == ir::TypeKind::Shared;
      if (buffer) {
        if (const TagMap* t = flow_.bufferTags(id)) s.tags = *t;
      } else {
        s.tags = flow_.viewTags(id);
      }
      for (size_t d = 0; d < type.shape.size(); ++d) {
        z3::expr q = ctx_.bv_const(("element" + suffix + "_" + std::to_string(d)).c_str(), 32);
        constraints.push_back(z3::ult(q, flow_.bv(type.shape[d])));
        s.coords.push_back(q);
        from.push_back(buffer ? flow_.slotVar(d) : flow_.coordVar(d));
      }
    }
    mapTerms(s.tags, [&](const z3::expr& e) { return substitute(e, from, s.coords); });
    return s;
  }

  // True when the next dot() after `op` reads the two subjects as its a and b.
  bool pairedByDot(const ir::Op& op, ir::ValueId x, ir::ValueId y) const {
    auto storage = [&](ir::ValueId v) {
      const ir::Op* def = fn_.values[v].def;
      return def && def->kind == ir::OpKind::View && !def->operands.empty() ? ir::ViewOp(*def).base() : v;
    };
    bool after = false;
    std::optional<bool> found;
    std::function<void(const ir::Block&)> scan = [&](const ir::Block& block) {
      for (const auto& o : block.ops) {
        if (found) return;
        if (o.get() == &op) after = true;
        else if (after && o->kind == ir::OpKind::Dot && o->operands.size() == 3)
          found = storage(ir::DotOp(*o).a()) == storage(x) && storage(ir::DotOp(*o).b()) == storage(y);
        for (const ir::Block& region : o->regions) scan(region);
      }
    };
    scan(fn_.body);
    return found.value_or(false);
  }

  void checkOne(const ir::Op& op) {
    const ir::AssertOp assertion(op);
    const std::vector<int64_t>& code = assertion.code();
    const std::vector<std::string>& names = assertion.names();
    std::vector<z3::expr> constraints;
    std::vector<Subject> subjects;
    for (size_t k = 0; k < op.operands.size(); ++k) {
      const ir::Type& t = fn_.values[op.operands[k]].type;
      if (t.isScalar()) break;
      subjects.push_back(subjectOf(op.operands[k], k, constraints));
    }
    bool dot = false;
    if (subjects.size() == 2) {
      const auto& xs = fn_.values[subjects[0].id].type.shape;
      const auto& ys = fn_.values[subjects[1].id].type.shape;
      bool dotShapes = xs.size() == 2 && ys.size() == 2 && xs[1] == ys[0];
      dot = dotShapes && (xs != ys || pairedByDot(op, subjects[0].id, subjects[1].id));
      if (dot) {
        constraints.push_back(subjects[0].coords[1] == subjects[1].coords[0]);
      } else {
        for (size_t d = 0; d < subjects[0].coords.size() && d < subjects[1].coords.size(); ++d)
          constraints.push_back(subjects[0].coords[d] == subjects[1].coords[d]);
      }
    }
    // The condition, with the text of every tag read.
    std::vector<z3::expr> stack;
    std::vector<Read> reads;
    std::vector<std::string> missing;
    z3::expr allKnown = ctx_.bool_val(true);
    std::vector<Label> why;
    bool lastWasCompare = false, malformed = false;
    for (size_t pc = 0; pc < code.size();) {
      auto arg = [&](size_t i) { return pc + i < code.size() ? code[pc + i] : int64_t{0}; };
      auto pop = [&] {
        if (stack.empty()) {  // malformed code (the verifier rejects it): prove nothing
          malformed = true;
          return flow_.bv(0);
        }
        z3::expr top = stack.back();
        stack.pop_back();
        return top;
      };
      int64_t k = arg(1), n = arg(2);
      bool badOperand = k < 0 || static_cast<size_t>(k) >= op.operands.size();
      if (static_cast<ir::AssertCode>(code[pc]) == ir::AssertCode::Tag &&
          (static_cast<size_t>(k) >= subjects.size() || n < 0 || static_cast<size_t>(n) >= names.size()))
        badOperand = true;
      bool readsOperand = static_cast<ir::AssertCode>(code[pc]) == ir::AssertCode::Tag ||
                          static_cast<ir::AssertCode>(code[pc]) == ir::AssertCode::Scalar;
      if (readsOperand && badOperand) return;
      switch (static_cast<ir::AssertCode>(code[pc])) {
        case ir::AssertCode::Const: stack.push_back(flow_.bv(arg(1))); pc += 2; break;
        case ir::AssertCode::Scalar: stack.push_back(flow_.scalar(op.operands[static_cast<size_t>(arg(1))])); pc += 2; break;
        case ir::AssertCode::Tag: {
          const Subject& s = subjects[static_cast<size_t>(arg(1))];
          const std::string& name = names[static_cast<size_t>(arg(2))];
          std::string key = name == "origin" ? originKey(arg(3)) : name;
          std::string text = s.text + "." + name;
          if (name == "origin") {
            bool rank2 = fn_.values[s.id].type.shape.size() == 2 && arg(3) < 2;
            text += rank2 ? (arg(3) == 0 ? ".row" : ".col") : "[" + std::to_string(arg(3)) + "]";
          }
          auto it = s.tags.tags.find(key);
          if (it == s.tags.tags.end()) {
            missing.push_back("'" + s.text + "' carries no tag " + (name == "origin" ? "'origin' with coordinate " + std::to_string(arg(3)) : "'" + name + "'") + " here");
            stack.push_back(flow_.bv(0));
          } else {
            stack.push_back(it->second.value);
            allKnown = allKnown && it->second.present && it->second.known;
            addLabels(why, it->second.why, 3);
            reads.push_back(Read{text, it->second.value, it->second.known, it->second.present});
          }
          pc += 4;
          break;
        }
        case ir::AssertCode::Binary: {
          z3::expr y = pop(), x = pop();
          if (!x.is_bv() || !y.is_bv()) return;  // malformed
          switch (static_cast<ir::BinaryKind>(arg(1))) {
            case ir::BinaryKind::Add: stack.push_back(x + y); break;
            case ir::BinaryKind::Sub: stack.push_back(x - y); break;
            case ir::BinaryKind::Mul: stack.push_back(x * y); break;
            case ir::BinaryKind::Div: stack.push_back(truncatingDivide(x, y, false)); break;
            default: stack.push_back(truncatingDivide(x, y, true)); break;
          }
          pc += 2;
          break;
        }
        case ir::AssertCode::Compare: {
          z3::expr y = pop(), x = pop();
          if (!x.is_bv() || !y.is_bv()) return;  // malformed
          stack.push_back(encodeI32Compare(static_cast<ir::CmpKind>(arg(1)), x, y));
          compared_ = {x, y};
          pc += 2;
          lastWasCompare = pc >= code.size();
          break;
        }
        case ir::AssertCode::And:
        case ir::AssertCode::Or: {
          z3::expr y = pop(), x = pop();
          if (!x.is_bool() || !y.is_bool()) return;  // malformed
          stack.push_back(static_cast<ir::AssertCode>(code[pc]) == ir::AssertCode::And ? (x && y) : (x || y));
          pc += 1;
          break;
        }
        case ir::AssertCode::Not: {
          z3::expr x = pop();
          if (!x.is_bool()) return;
          stack.push_back(!x);
          pc += 1;
          break;
        }
        case ir::AssertCode::Neg: {
          z3::expr x = pop();
          if (!x.is_bv()) return;
          stack.push_back(-x);
          pc += 1;
          break;
        }
        default: return;  // not an instruction (the verifier rejects it)
      }
    }
    if (stack.size() != 1 || malformed || !stack.back().is_bool()) return;  // the verifier rejects such code
    if (!lastWasCompare) compared_.clear();
    if (!missing.empty()) {
      cannotProve(op, missing.front(), {});
      return;
    }
    z3::expr cond = stack.back();
    z3::expr context = flow_.assumptions();
    for (const z3::expr& c : constraints) context = context && c;

    // The common case first: one query proves the assertion outright.
    if (flow_.check(context && (!allKnown || !cond))) return;
    SolverBudget& budget = flow_.budget();
    z3::solver solver(ctx_, "QF_BV");
    budget.limit(solver);
    solver.add(context && allKnown && !cond);
    z3::check_result violated = flow_.preferSmall(solver);  // small launches first: found fastest there
    if (violated == z3::sat) {
      report(op, solver, subjects, reads, dot);
      return;
    }
    if (violated == z3::unknown) {
      cannotProve(op, "the solver gave up (" + budget.unknownReason(solver) + ")", {});
      return;
    }
    z3::solver unknown(ctx_, "QF_BV");
    budget.limit(unknown);
    unknown.add(context && !allKnown);
    z3::check_result somewhereUnknown = budget.check(unknown);
    if (somewhereUnknown == z3::unsat) return;  // proven
    std::string where;
    std::optional<z3::model> unknownModel;
    bool absent = false;
    if (somewhereUnknown == z3::sat) {
      flow_.preferSmall(unknown);
      z3::model model = unknown.get_model();
      unknownModel = model;
      for (const Read& r : reads) {
        if (!modelValue(model, z3::ite(r.present, flow_.bv(1), flow_.bv(0)))) {
          where = elementText(model, subjects) + " carries no tag for " + r.text;
          why.clear();
          absent = true;
          break;
        }
        if (!modelValue(model, z3::ite(r.known, flow_.bv(1), flow_.bv(0)))) {
          where = "the checker cannot tell " + r.text + " for " + elementText(model, subjects);
          break;
        }
      }
    } else {
      where = "the solver gave up (" + budget.unknownReason(unknown) + ")";
    }
    std::string launch = flow_.launchText(unknownModel);
    if (!launch.empty() && somewhereUnknown == z3::sat) where += " (launch: " + launch + ")";
    cannotProve(op, where.empty() ? "a tag it reads is unknown here" : where, why, absent);
  }

  std::string elementText(const z3::model& model, const std::vector<Subject>& subjects) const {
    std::string s;
    for (const Subject& subject : subjects) {
      if (!s.empty()) s += " and ";
      if (subject.thread) {
        int64_t t = modelValue(model, *subject.thread);
        s += "thread " + std::to_string(t) + " (warp " + std::to_string(t / 32) + ", lane " + std::to_string(t % 32) +
             "), value " + std::to_string(modelValue(model, *subject.value)) + ", ";
      }
      s += subject.text + "[";
      for (size_t d = 0; d < subject.coords.size(); ++d) s += (d ? ", " : "") + std::to_string(modelValue(model, subject.coords[d]));
      s += "]";
    }
    std::string iteration = iterationText(model);
    if (!iteration.empty()) s += " in iteration " + iteration;
    return s;
  }

  std::string iterationText(const z3::model& model) const {
    std::string s;
    for (const LoopFrame& l : flow_.loops()) s += (s.empty() ? "" : ", ") + l.name + " = " + std::to_string(modelValue(model, l.iv));
    return s;
  }

  void report(const ir::Op& op, z3::solver& solver, const std::vector<Subject>& subjects, const std::vector<Read>& reads,
              bool dot) {
    z3::model model = solver.get_model();
    std::string found;
    for (const Read& r : reads) found += (found.empty() ? "" : ", ") + r.text + " = " + std::to_string(modelValue(model, r.value));
    std::string summary = elementText(model, subjects) + ": " + found;
    Diagnostic& d = diags_.report(DiagId::TagAssertionFails, op.range, {conditionText(op), summary});
    Counterexample cx;
    for (const Subject& s : subjects)
      if (s.thread) {
        cx.thread = modelValue(model, *s.thread);
        cx.warp = *cx.thread / 32;
        cx.lane = *cx.thread % 32;
        cx.value = modelValue(model, *s.value);
        break;
      }
    for (const LoopFrame& l : flow_.loops()) cx.iteration.emplace_back(l.name, modelValue(model, l.iv));
    for (const Subject& s : subjects) {
      std::string element = s.text + "[";
      for (size_t i = 0; i < s.coords.size(); ++i) element += (i ? ", " : "") + std::to_string(modelValue(model, s.coords[i]));
      cx.facts.emplace_back("element", element + "]");
      if (s.tags.originTensor >= 0)
        cx.facts.emplace_back("origin tensor", s.text + ".origin indexes '" + fn_.params[static_cast<size_t>(s.tags.originTensor)].name + "'");
      for (const Label& l : s.tags.trace) cx.trace.push_back(l);
    }
    cx.facts.emplace_back("tags found", found);
    if (compared_.size() == 2)
      cx.facts.emplace_back("expected", conditionText(op) + ", but the two sides are " +
                                            std::to_string(modelValue(model, compared_[0])) + " and " +
                                            std::to_string(modelValue(model, compared_[1])));
    if (dot) cx.facts.emplace_back("pairing", "as the operands of dot(): " + subjects[0].text + "[m, k] meets " + subjects[1].text + "[k, n]");
    std::string launch = flow_.launchText(model);
    if (!launch.empty()) cx.facts.emplace_back("launch", launch);
    d.counterexample = std::move(cx);
    if (const std::string& message = ir::AssertOp(op).message(); !message.empty())
      d.notes.push_back("the assertion says: " + message);
    d.notes.push_back("the assertion must hold for every element, thread and loop iteration that reaches it");
  }

  void cannotProve(const ir::Op& op, const std::string& reason, const std::vector<Label>& why, bool absent = false) {
    Diagnostic& d = diags_.report(DiagId::CheckerCannotProve, op.range, {"the assertion '" + conditionText(op) + "' holds", reason});
    for (const Label& l : why) d.labels.push_back(l);
    if (absent)
      d.notes.push_back("on some path the element was never given the tag: a loop that may run zero times, a branch "
                        "that does not set it, or a shared slot stored without it");
    else
      d.notes.push_back("a tag is unknown after a merge of disagreeing values, a reduction along its axis, or a loop the "
                        "checker cannot summarize; see docs/checker.md, \"Tags\"");
  }

  TagFlow& flow_;
  z3::context& ctx_;
  const ir::Function& fn_;
  DiagnosticSink& diags_;
  const SourceFile* file_;
  const Options& options_;
  std::vector<z3::expr> compared_;
};

}  // namespace

void checkTagAssertions(const ir::Function& rewritten, DiagnosticSink& diags, const SourceFile* file,
                        const Options& options) {
  // What data goes where is a property of the loops as written: a pipelined
  // loop computes what its plain loop does once the mbarrier and async checks
  // hold, and there the tag flow sees no ring of stages (ir::Function::asWritten).
  const ir::Function& fn = rewritten.asWritten ? *rewritten.asWritten : rewritten;
  if (!tagFlowNeeded(fn, fn.body)) return;
  try {
    std::unique_ptr<z3::context> own;
    z3::context& ctx = SolverBudget::contextFor(options, own);
    TagFlow flow(ctx, fn, options, file);
    if (!tagFlowNeeded(fn, fn.body, false)) {  // only the dots, their epilogues and the stores of their results to check
      std::map<int, std::set<int64_t>> origins = kOrigins(fn, fn.body);
      addEpilogueOrigins(fn, fn.body, origins);
      flow.trackOnly(std::move(origins),
                     storesDotResult(fn, fn.body) || readsDotResult(fn, fn.body) || hasEpilogue(fn, fn.body));
    }
    AssertionChecker checker(flow, ctx, fn, diags, file, options);
    flow.run([&](const ir::Op& op) { checker.check(op); });
  } catch (const z3::exception& e) {
    // A failure outside one assertion's query proves none of them.
    std::function<void(const ir::Block&)> each = [&](const ir::Block& block) {
      for (const auto& op : block.ops) {
        if (op->kind == ir::OpKind::Assert)
          diags.report(DiagId::CheckerCannotProve, op->range,
                       {"the assertion '" + (file ? std::string(file->slice(op->range)) : std::string("assert")) + "' holds",
                        std::string("the solver failed: ") + e.msg()});
        for (const ir::Block& region : op->regions) each(region);
      }
    };
    each(fn.body);
  }
}

}  // namespace argus::checker
