// Refactorings offered as code actions (kind "refactor.*"): extract the
// selected statements into a device function, and inline a device function at
// a call. Each is offered only when the result means the same program; when in
// doubt (a `return` inside the selection, more than one value flowing out, a
// name the inlined body would clash with) it is simply not offered.
#include <algorithm>
#include <set>

#include "lsp/features_extra.h"
#include "lsp/syntax_walk.h"

namespace argus::lsp {

namespace {

bool within(SourceRange inner, SourceRange outer) { return inner.begin >= outer.begin && inner.end <= outer.end; }

uint32_t lineStart(const std::string& text, uint32_t offset) {
  while (offset > 0 && text[offset - 1] != '\n') --offset;
  return offset;
}

// The lines of text[begin, end) with `strip` leading columns removed and `indent` added.
std::string reindent(std::string_view text, size_t strip, const std::string& indent) {
  std::string out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    size_t blank = line.find_first_not_of(" \t");
    if (blank == std::string_view::npos) {
      out += "\n";
    } else {
      size_t cut = std::min(strip, blank);
      out += indent + std::string(line.substr(cut)) + "\n";
    }
    at = end + 1;
  }
  return out;
}

bool isUserValue(const sema::Symbol& symbol) {
  switch (symbol.kind) {
    case sema::Symbol::Kind::Parameter:
    case sema::Symbol::Kind::Const:
    case sema::Symbol::Kind::Size:
    case sema::Symbol::Kind::Local:
    case sema::Symbol::Kind::LoopVar: return true;
    default: return false;
  }
}

json actionWithEdits(const Snapshot& snapshot, const std::string& title, const char* kind, json edits) {
  return json{{"title", title}, {"kind", kind}, {"edit", {{"changes", {{snapshot.uri, std::move(edits)}}}}}};
}

std::optional<json> extractDeviceFunction(const Snapshot& snapshot, SourceRange selection) {
  if (!snapshot.ast || !snapshot.sema || selection.empty()) return std::nullopt;
  const SourceFile& file = snapshot.file();
  const std::string& text = file.text();
  const ast::FunctionDef* fn = functionAt(snapshot, selection.begin);
  if (!fn || fn->hasSyntaxErrors || !within(selection, fn->range)) return std::nullopt;
  // The statements of one block that the selection covers whole; none cut in part.
  std::vector<StatementVisit> all = statementsOf(*fn);
  const ast::Block* block = nullptr;
  size_t first = 0, last = 0;
  for (const StatementVisit& v : all) {
    SourceRange r = v.stmt->range;
    bool inside = within(r, selection);
    bool overlaps = r.begin < selection.end && selection.begin < r.end;
    if (overlaps && !inside && !within(selection, r)) return std::nullopt;  // cut in part
    if (!inside) continue;
    if (!block) {
      block = v.block;
      first = last = v.index;
    } else if (v.block == block) {
      if (v.index != last + 1) return std::nullopt;
      last = v.index;
    } else if (!within(r, (*block)[last]->range)) {
      return std::nullopt;  // neither a sibling nor nested in a selected statement
    }
  }
  if (!block) return std::nullopt;
  SourceRange span{(*block)[first]->range.begin, (*block)[last]->range.end};
  // Control flow that leaves the selection cannot move into a function.
  std::set<std::string> assigned;
  for (const StatementVisit& v : all) {
    if (!within(v.stmt->range, span)) continue;
    ast::StmtKind k = v.stmt->kind;
    if (k == ast::StmtKind::Return || k == ast::StmtKind::Error) return std::nullopt;
    if (k == ast::StmtKind::Break || k == ast::StmtKind::Continue) {
      // Allowed only inside a loop that is itself selected.
      bool loopInside = false;
      for (const StatementVisit& loop : all)
        if ((loop.stmt->kind == ast::StmtKind::For || loop.stmt->kind == ast::StmtKind::While) &&
            within(loop.stmt->range, span) && within(v.stmt->range, loop.stmt->range))
          loopInside = true;
      if (!loopInside) return std::nullopt;
    }
    if (k == ast::StmtKind::Assign)
      for (const auto& t : static_cast<const ast::AssignStmt&>(*v.stmt).targets)
        if (t && t->kind == ast::ExprKind::Name) assigned.insert(static_cast<const ast::NameExpr&>(*t).name);
    if (k == ast::StmtKind::AugAssign) {
      const auto& a = static_cast<const ast::AugAssignStmt&>(*v.stmt);
      if (a.target && a.target->kind == ast::ExprKind::Name) assigned.insert(static_cast<const ast::NameExpr&>(*a.target).name);
    }
  }
  // Inputs: values defined before the selection and read in it, in order of first use.
  // Output: the one value assigned in it and read after it.
  std::vector<std::pair<uint32_t, std::string>> inputs;
  std::vector<std::string> outputs;
  for (const sema::Symbol& symbol : snapshot.sema->symbols) {
    if (!isUserValue(symbol) || !within(symbol.definition, fn->range)) continue;
    bool definedBefore = symbol.definition.end <= span.begin || !within(symbol.definition, fn->range);
    std::optional<uint32_t> firstUse;
    bool usedAfter = false;
    for (SourceRange r : symbol.references) {
      if (within(r, span)) firstUse = std::min(firstUse.value_or(r.begin), r.begin);
      if (r.begin >= span.end && within(r, fn->range)) usedAfter = true;
    }
    if (definedBefore && firstUse) inputs.emplace_back(*firstUse, symbol.name);
    bool definedInside = within(symbol.definition, span) || assigned.count(symbol.name);
    if (definedInside && usedAfter && within(symbol.definition, fn->range)) outputs.push_back(symbol.name);
  }
  std::sort(outputs.begin(), outputs.end());
  outputs.erase(std::unique(outputs.begin(), outputs.end()), outputs.end());
  if (outputs.size() > 1) return std::nullopt;
  std::sort(inputs.begin(), inputs.end());
  std::string params;
  std::set<std::string> seen;
  for (const auto& [offset, name] : inputs)
    if (seen.insert(name).second) params += (params.empty() ? "" : ", ") + name;
  // A fresh name.
  std::string name = "extracted";
  for (int n = 2; snapshot.ast && [&] {
         for (const auto& f : snapshot.ast->functions)
           if (f && f->name == name) return true;
         for (const sema::Symbol& s : snapshot.sema->symbols)
           if (s.name == name) return true;
         return false;
       }(); ++n)
    name = "extracted" + std::to_string(n);

  uint32_t from = lineStart(text, span.begin);
  size_t column = span.begin - from;
  std::string indent(column, ' ');
  std::string body = reindent(std::string_view(text).substr(from, span.end - from), column, "    ");
  std::string call = name + "(" + params + ")";
  std::string definitionText = "@device\ndef " + name + "(" + params + "):\n" + body;
  if (!outputs.empty()) definitionText += "    return " + outputs[0] + "\n";
  definitionText += "\n\n";
  uint32_t insertAt = lineStart(text, fn->range.begin);
  json edits = json::array({toJson(TextEdit{rangeOf(file, SourceRange{insertAt, insertAt}), definitionText}),
                            toJson(TextEdit{rangeOf(file, span), outputs.empty() ? call : outputs[0] + " = " + call})});
  return actionWithEdits(snapshot, "Extract into device function '" + name + "'", "refactor.extract.function", edits);
}

// The call of a device function under the cursor, as the whole value of
// `x = f(...)` or as a statement `f(...)`: inline its body there.
std::optional<json> inlineDeviceFunction(const Snapshot& snapshot, uint32_t offset) {
  if (!snapshot.ast || !snapshot.sema) return std::nullopt;
  const SourceFile& file = snapshot.file();
  const std::string& text = file.text();
  const ast::FunctionDef* caller = functionAt(snapshot, offset);
  if (!caller || caller->hasSyntaxErrors) return std::nullopt;
  const ast::Stmt* stmt = nullptr;
  const ast::CallExpr* call = nullptr;
  std::string target;
  for (const StatementVisit& v : statementsOf(*caller)) {
    if (v.stmt->range.begin > offset || v.stmt->range.end < offset) continue;
    const ast::Expr* value = nullptr;
    if (v.stmt->kind == ast::StmtKind::Assign) {
      const auto& a = static_cast<const ast::AssignStmt&>(*v.stmt);
      if (a.targets.size() != 1 || !a.targets[0] || a.targets[0]->kind != ast::ExprKind::Name || a.annotation) continue;
      target = static_cast<const ast::NameExpr&>(*a.targets[0]).name;
      value = a.value.get();
    } else if (v.stmt->kind == ast::StmtKind::Expr) {
      target.clear();
      value = static_cast<const ast::ExprStmt&>(*v.stmt).expr.get();
    }
    if (value && value->kind == ast::ExprKind::Call) {
      stmt = v.stmt;
      call = static_cast<const ast::CallExpr*>(value);
    }
  }
  if (!call || !call->callee || call->callee->kind != ast::ExprKind::Name) return std::nullopt;
  const std::string& calleeName = static_cast<const ast::NameExpr&>(*call->callee).name;
  const ast::FunctionDef* callee = nullptr;
  for (const auto& f : snapshot.ast->functions)
    if (f && f->name == calleeName) callee = f.get();
  if (!callee || callee == caller || callee->hasSyntaxErrors || callee->body.empty()) return std::nullopt;
  for (const auto& s : callee->body)
    if (!s) return std::nullopt;
  bool device = false;
  for (const ast::Decorator& d : callee->decorators) device = device || d.name == "device";
  if (!device) return std::nullopt;
  // Arguments to parameters, by position then keyword; defaults fill the rest.
  std::vector<std::string> argument(callee->params.size());
  std::vector<bool> given(callee->params.size(), false);
  size_t positional = 0;
  for (const ast::Argument& a : call->args) {
    if (!a.value) return std::nullopt;
    size_t i = positional;
    if (a.keyword) {
      i = 0;
      while (i < callee->params.size() && callee->params[i].name != *a.keyword) ++i;
    } else {
      ++positional;
    }
    if (i >= callee->params.size() || given[i]) return std::nullopt;
    std::string value(file.slice(a.value->range));
    bool atomic = a.value->kind == ast::ExprKind::Name || a.value->kind == ast::ExprKind::Int ||
                  a.value->kind == ast::ExprKind::Float || a.value->kind == ast::ExprKind::Call ||
                  a.value->kind == ast::ExprKind::Attribute || a.value->kind == ast::ExprKind::Subscript;
    argument[i] = atomic ? value : "(" + value + ")";
    given[i] = true;
  }
  for (size_t i = 0; i < callee->params.size(); ++i) {
    if (given[i]) continue;
    if (!callee->params[i].defaultValue) return std::nullopt;
    argument[i] = "(" + std::string(file.slice(callee->params[i].defaultValue->range)) + ")";
  }
  // The body: only a final `return` (or none), no parameter reassigned, and no
  // local of its own that the caller also names.
  std::vector<StatementVisit> body = statementsOf(*callee);
  const ast::ReturnStmt* result = nullptr;
  std::set<std::string> callerNames;
  for (const sema::Symbol& s : snapshot.sema->symbols)
    if (within(s.definition, caller->range)) callerNames.insert(s.name);
  for (const StatementVisit& v : body) {
    if (v.stmt->kind == ast::StmtKind::Return) {
      if (v.block != &callee->body || v.index + 1 != callee->body.size()) return std::nullopt;
      result = static_cast<const ast::ReturnStmt*>(v.stmt);
    }
    if (v.stmt->kind == ast::StmtKind::Error) return std::nullopt;
    if (v.stmt->kind == ast::StmtKind::Assign)
      for (const auto& t : static_cast<const ast::AssignStmt&>(*v.stmt).targets) {
        if (!t || t->kind != ast::ExprKind::Name) return std::nullopt;
        const std::string& local = static_cast<const ast::NameExpr&>(*t).name;
        for (const ast::Param& p : callee->params)
          if (p.name == local) return std::nullopt;
        if (callerNames.count(local) && local != target) return std::nullopt;
      }
    if (v.stmt->kind == ast::StmtKind::AugAssign || v.stmt->kind == ast::StmtKind::For) return std::nullopt;
  }
  if (!target.empty() && (!result || !result->value)) return std::nullopt;
  // Substitute the arguments for the parameters' names in the body's text.
  SourceRange bodySpan{callee->body.front()->range.begin, callee->body.back()->range.end};
  std::vector<std::pair<SourceRange, std::string>> replacements;
  for (const ast::Expr* e : snapshot.expressions) {
    if (e->kind != ast::ExprKind::Name || !within(e->range, bodySpan)) continue;
    const auto& n = static_cast<const ast::NameExpr&>(*e);
    for (size_t i = 0; i < callee->params.size(); ++i)
      if (callee->params[i].name == n.name && argument[i] != n.name) replacements.emplace_back(e->range, argument[i]);
  }
  auto substituted = [&](SourceRange span) {
    std::string out(file.slice(span));
    for (auto it = replacements.rbegin(); it != replacements.rend(); ++it)
      if (within(it->first, span)) out.replace(it->first.begin - span.begin, it->first.end - it->first.begin, it->second);
    return out;
  };
  uint32_t stmtLine = lineStart(text, stmt->range.begin);
  std::string indent(stmt->range.begin - stmtLine, ' ');
  std::string inlined;
  if (!(result && callee->body.size() == 1)) {
    SourceRange before{bodySpan.begin, result ? callee->body[callee->body.size() - 2]->range.end : bodySpan.end};
    uint32_t from = lineStart(text, before.begin);
    std::string shifted = std::string(text.substr(from, before.begin - from)) + substituted(before);
    inlined = reindent(shifted, before.begin - from, indent);
  }
  if (result && result->value && !target.empty()) inlined += indent + target + " = " + substituted(result->value->range) + "\n";
  if (inlined.empty()) return std::nullopt;
  inlined = inlined.substr(indent.size());  // the statement's own line keeps its indentation
  if (!inlined.empty() && inlined.back() == '\n') inlined.pop_back();
  json edits = json::array({toJson(TextEdit{rangeOf(file, stmt->range), inlined})});
  return actionWithEdits(snapshot, "Inline device function '" + calleeName + "' here", "refactor.inline", edits);
}

}  // namespace

json refactorActions(const Snapshot& snapshot, Range range) {
  json actions = json::array();
  const SourceFile& file = snapshot.file();
  uint32_t begin = offsetOf(file, range.start), end = offsetOf(file, range.end);
  if (end < begin) std::swap(begin, end);
  if (end > begin)
    if (std::optional<json> extract = extractDeviceFunction(snapshot, SourceRange{begin, end})) actions.push_back(*extract);
  if (std::optional<json> inlined = inlineDeviceFunction(snapshot, begin)) actions.push_back(*inlined);
  return actions;
}

}  // namespace argus::lsp
