// async_pipeline: a loop that copies global tiles into shared buffers with
// copy() and barrier() becomes a software pipeline (language.md §6, "Software
// pipelining"):
//
//     for kt in range(n):                     for kt in pipelined(n, stages=STAGES):
//         copy(a_s, A.tile(...)[.., kt])          copy_async(a_s, A.tile(...)[.., kt])
//         copy(b_s, B.tile(...)[kt, ..])          copy_async(b_s, B.tile(...)[kt, ..])
//         barrier()                               acc = dot(a_s, b_s, acc)
//         acc = dot(a_s, b_s, acc)
//         barrier()
//
// with a new `STAGES: const = S` parameter. pipelined() places every wait and
// barrier itself and rejects the author's (AG4034), so the loop's barriers go;
// its copies must lead the body (AG4032), fill whole buffers (AG4035) and the
// buffers must not be used outside the loop (AG4037): this rewrite checks the
// same conditions up front and says which one fails.
#include "agent/rewrite_internal.h"

namespace argus::agent::detail {

namespace {

const ast::CallExpr* statementCall(const ast::Stmt& s, const std::string& name) {
  if (s.kind != ast::StmtKind::Expr) return nullptr;
  return asCall(static_cast<const ast::ExprStmt&>(s).expr.get(), name);
}

bool isTensorParam(const ast::FunctionDef& fn, const std::string& name) { return tensorDtype(fn, name).has_value(); }

struct Candidate {
  const ast::ForStmt* loop = nullptr;
  std::vector<const ast::CallExpr*> copies;
  std::vector<const ast::Stmt*> barriers;
};

// Why `loop` cannot be pipelined, or empty when it can (filling `c`).
std::string examineLoop(const ParsedKernel& p, const ast::ForStmt& loop, Candidate& c) {
  const ast::CallExpr* range = asCall(loop.iter.get(), "range");
  if (!range) return "the loop does not iterate over range(...)";
  if (range->args.size() != 1) return "the loop is range(" + p.slice(range->parenRange) + "), not range(n)";
  c.loop = &loop;
  bool computeSeen = false;
  for (const ast::StmtPtr& s : loop.body) {
    if (statementCall(*s, "barrier")) {
      c.barriers.push_back(s.get());
      continue;
    }
    if (const ast::CallExpr* copy = statementCall(*s, "copy")) {
      const ast::NameExpr* dst = copy->args.size() == 2 ? asName(copy->args[0].value.get()) : nullptr;
      const ast::NameExpr* srcRoot = copy->args.size() == 2 ? rootName(copy->args[1].value.get()) : nullptr;
      if (dst && sharedDecl(*p.kernel, dst->name) && srcRoot && isTensorParam(*p.kernel, srcRoot->name)) {
        if (computeSeen)
          return "the copy into '" + dst->name + "' comes after the computation; pipelined() overlaps only the "
                 "copies that start the loop body";
        c.copies.push_back(copy);
        continue;
      }
      if (copy->args.size() == 2 && copy->args[0].value->kind == ast::ExprKind::Subscript)
        return "'" + p.slice(*copy->args[0].value) + "' fills part of a buffer; pipelined() needs copies that fill "
               "whole buffers (it adds the stages itself)";
    }
    std::vector<const ast::CallExpr*> nested;
    if (s->kind == ast::StmtKind::Expr) collectCalls(static_cast<const ast::ExprStmt&>(*s).expr.get(), nested);
    for (const ast::CallExpr* call : nested) {
      std::string name = calleeName(*call);
      if (name == "commit_group" || name == "wait_group" || name == "copy_async")
        return "the loop already manages asynchronous copies itself (" + name + ")";
    }
    computeSeen = true;
  }
  if (c.copies.empty()) return "the loop copies no global tile into a shared buffer";
  // Barriers nested deeper than the body (in an inner loop or branch) would stay.
  std::vector<const ast::CallExpr*> calls;
  collectCalls(loop.body, calls);
  size_t barriers = 0;
  for (const ast::CallExpr* call : calls) {
    std::string name = calleeName(*call);
    if (name == "barrier") ++barriers;
    if (name == "commit_group" || name == "wait_group" || name == "copy_async")
      return "the loop already manages asynchronous copies itself (" + name + ")";
  }
  if (barriers != c.barriers.size()) return "the loop has barrier() calls inside nested blocks; pipelined() forbids them";
  // A pipelined buffer has one stage per copy in flight: it is used only inside the loop.
  for (const ast::CallExpr* copy : c.copies) {
    const std::string buffer = asName(copy->args[0].value.get())->name;
    const ast::CallExpr* decl = sharedDecl(*p.kernel, buffer);
    std::vector<const ast::NameExpr*> names;
    collectNames(p.kernel->body, names);
    for (const ast::NameExpr* n : names) {
      if (n->name != buffer) continue;
      bool inLoop = n->range.begin >= loop.range.begin && n->range.end <= blockEnd(loop);
      // `buffer = shared(...)`: the target sits on the declaration's line, before the call.
      bool isDeclaration = n->range.end <= decl->range.begin && n->range.begin >= lineStartOf(*p.text, decl->range.begin);
      if (!inLoop && !isDeclaration)
        return "shared buffer '" + buffer + "' is also used outside the loop; a pipelined buffer lives in the loop";
    }
  }
  return "";
}

}  // namespace

RewriteResult asyncPipeline(const std::string& source, const nlohmann::json& args) {
  int64_t stages = 3;
  if (args.is_object() && args.contains("stages")) {
    if (!args["stages"].is_number_integer()) return notApplied("async_pipeline: \"stages\" must be an integer");
    stages = args["stages"].get<int64_t>();
  }
  if (stages < 2 || stages > 8) return notApplied("a pipeline has 2 to 8 stages, not " + std::to_string(stages));
  std::string why;
  std::optional<ParsedKernel> p = parseKernel(source, why);
  if (!p) return notApplied(why);
  std::vector<const ast::ForStmt*> loops;
  collectLoops(p->kernel->body, loops);
  std::string reasons;
  Candidate chosen;
  for (const ast::ForStmt* loop : loops) {
    if (asCall(loop->iter.get(), "pipelined")) return notApplied("the kernel is already pipelined; use set_stages to change its depth");
    Candidate c;
    std::string reason = examineLoop(*p, *loop, c);
    if (reason.empty() && !chosen.loop) chosen = c;
    else if (!reason.empty() && reasons.empty()) reasons = reason;
  }
  if (!chosen.loop) return notApplied(reasons.empty() ? "the kernel has no loop" : reasons);
  if (hasName(*p->kernel, "STAGES")) return notApplied("the kernel already uses the name STAGES");

  std::vector<Edit> edits;
  const ast::CallExpr& range = *asCall(chosen.loop->iter.get(), "range");
  edits.push_back({range.range.begin, range.range.end, "pipelined(" + p->slice(*range.args[0].value) + ", stages=STAGES)"});
  for (const ast::CallExpr* copy : chosen.copies)
    edits.push_back({copy->callee->range.begin, copy->callee->range.end, "copy_async"});
  for (const ast::Stmt* barrier : chosen.barriers) edits.push_back(removeStatement(*p, *barrier));
  edits.push_back(addConstParams(*p, {{"STAGES", stages}}));
  return finishRewrite(source, std::move(edits),
                       "copy_async in a pipelined loop of " + std::to_string(stages) + " stages (" +
                           std::to_string(chosen.barriers.size()) + " barriers left to the pipeline)");
}

}  // namespace argus::agent::detail
