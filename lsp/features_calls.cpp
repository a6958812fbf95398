// Declaration, type definition and the call hierarchy over kernels and device
// functions. Calls are found in the parsed tree (a call by name whose callee
// is a function of the file), so the hierarchy works while sema reports errors.
#include <algorithm>
#include <map>

#include "lsp/features_extra.h"
#include "lsp/syntax_walk.h"

namespace argus::lsp {

namespace {



const ast::FunctionDef* functionNamed(const Snapshot& snapshot, std::string_view name) {
  if (!snapshot.ast || name.empty()) return nullptr;
  for (const auto& fn : snapshot.ast->functions)
    if (fn && fn->name == name) return fn.get();
  return nullptr;
}

json itemFor(const Snapshot& snapshot, const ast::FunctionDef& fn) {
  const SourceFile& file = snapshot.file();
  return json{{"name", fn.name},
              {"kind", kSymbolFunction},
              {"detail", decoratorDetail(fn)},
              {"uri", snapshot.uri},
              {"range", toJson(rangeOf(file, fn.range))},
              {"selectionRange", toJson(rangeOf(file, fn.nameRange))},
              {"data", {{"name", fn.name}}}};
}

// The name a call is made by (`f` in `f(x)`), or "".
const ast::NameExpr* calleeName(const ast::Expr& e) {
  if (e.kind != ast::ExprKind::Call) return nullptr;
  const auto& call = static_cast<const ast::CallExpr&>(e);
  if (!call.callee || call.callee->kind != ast::ExprKind::Name) return nullptr;
  return static_cast<const ast::NameExpr*>(call.callee.get());
}

// Calls of user functions inside `fn`: (callee name expression, callee definition).
std::vector<std::pair<const ast::NameExpr*, const ast::FunctionDef*>> callsIn(const Snapshot& snapshot,
                                                                                const ast::FunctionDef& fn) {
  std::vector<std::pair<const ast::NameExpr*, const ast::FunctionDef*>> calls;
  auto first = std::lower_bound(snapshot.expressions.begin(), snapshot.expressions.end(), fn.range.begin,
                                [](const ast::Expr* e, uint32_t offset) { return e->range.begin < offset; });
  for (auto it = first; it != snapshot.expressions.end() && (*it)->range.begin <= fn.range.end; ++it)
    if (const ast::NameExpr* name = calleeName(**it))
      if (const ast::FunctionDef* callee = functionNamed(snapshot, name->name)) calls.emplace_back(name, callee);
  return calls;
}

std::string itemName(const json& item) {
  if (const json* data = member(item, "data"))
    if (std::optional<std::string> name = stringMember(*data, "name")) return *name;
  return stringMember(item, "name").value_or("");
}

// The expression that gives a symbol its type: a parameter's annotation, the
// value assigned at a local's definition, a loop's iterator.
std::optional<SourceRange> typeSource(const Snapshot& snapshot, const sema::Symbol& symbol) {
  if (!snapshot.ast) return std::nullopt;
  for (const auto& fn : snapshot.ast->functions) {
    if (!fn || symbol.definition.begin < fn->range.begin || symbol.definition.end > fn->range.end) continue;
    for (const ast::Param& p : fn->params) {
      if (!p.annotation) continue;
      if (p.nameRange == symbol.definition) return p.annotation->range;
      // A size named in a tensor's shape is defined inside the annotation.
      if (symbol.definition.begin >= p.annotation->range.begin && symbol.definition.end <= p.annotation->range.end)
        return p.annotation->range;
    }
    for (const StatementVisit& visit : statementsOf(*fn)) {
      const ast::Stmt& s = *visit.stmt;
      if (s.range.begin > symbol.definition.begin || s.range.end < symbol.definition.end) continue;
      if (s.kind == ast::StmtKind::Assign) {
        const auto& a = static_cast<const ast::AssignStmt&>(s);
        if (a.annotation) return a.annotation->range;
        if (a.value) return a.value->range;
      }
      if (s.kind == ast::StmtKind::For) {
        const auto& f = static_cast<const ast::ForStmt&>(s);
        if (f.target && f.target->range.begin <= symbol.definition.begin && symbol.definition.end <= f.target->range.end &&
            f.iter)
          return f.iter->range;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

json declaration(const Snapshot& snapshot, Position position) {
  // Argus has no separate declarations: a name is declared where it is defined.
  return definition(snapshot, position);
}

json typeDefinition(const Snapshot& snapshot, Position position) {
  const sema::Symbol* symbol = symbolAt(snapshot, offsetOf(snapshot.file(), position));
  if (!symbol || symbol->kind == sema::Symbol::Kind::Builtin || symbol->definition.empty()) return nullptr;
  if (symbol->kind == sema::Symbol::Kind::Kernel || symbol->kind == sema::Symbol::Kind::DeviceFunction) {
    const ast::FunctionDef* fn = functionNamed(snapshot, symbol->name);
    if (!fn || !fn->returnAnnotation) return nullptr;
    return toJson(Location{snapshot.uri, rangeOf(snapshot.file(), fn->returnAnnotation->range)});
  }
  std::optional<SourceRange> source = typeSource(snapshot, *symbol);
  if (!source) return nullptr;
  return toJson(Location{snapshot.uri, rangeOf(snapshot.file(), *source)});
}

json prepareCallHierarchy(const Snapshot& snapshot, Position position) {
  if (!snapshot.ast) return nullptr;
  uint32_t offset = offsetOf(snapshot.file(), position);
  auto within = [&](SourceRange r) { return r.begin <= offset && offset <= r.end; };
  // On a definition's name, or on the name of a call.
  for (const auto& fn : snapshot.ast->functions)
    if (fn && within(fn->nameRange)) return json::array({itemFor(snapshot, *fn)});
  const ast::Expr* callee = expressionAt(snapshot, offset, [](const Snapshot& s, const ast::Expr& e) {
    return e.kind == ast::ExprKind::Name && functionNamed(s, static_cast<const ast::NameExpr&>(e).name) != nullptr;
  });
  if (callee)
    return json::array({itemFor(snapshot, *functionNamed(snapshot, static_cast<const ast::NameExpr&>(*callee).name))});
  // Anywhere else inside a function: that function.
  if (const ast::FunctionDef* fn = functionAt(snapshot, offset)) return json::array({itemFor(snapshot, *fn)});
  return nullptr;
}

json incomingCalls(const Snapshot& snapshot, const json& item) {
  json list = json::array();
  std::string target = itemName(item);
  if (!snapshot.ast || target.empty()) return list;
  for (const auto& fn : snapshot.ast->functions) {
    if (!fn) continue;
    json ranges = json::array();
    for (const auto& [name, callee] : callsIn(snapshot, *fn))
      if (callee->name == target) ranges.push_back(toJson(rangeOf(snapshot.file(), name->range)));
    if (!ranges.empty()) list.push_back({{"from", itemFor(snapshot, *fn)}, {"fromRanges", ranges}});
  }
  return list;
}

json outgoingCalls(const Snapshot& snapshot, const json& item) {
  json list = json::array();
  const ast::FunctionDef* fn = functionNamed(snapshot, itemName(item));
  if (!fn) return list;
  // One entry per callee, in the order of first call.
  std::vector<const ast::FunctionDef*> order;
  std::map<const ast::FunctionDef*, json> ranges;
  for (const auto& [name, callee] : callsIn(snapshot, *fn)) {
    if (!ranges.count(callee)) {
      order.push_back(callee);
      ranges[callee] = json::array();
    }
    ranges[callee].push_back(toJson(rangeOf(snapshot.file(), name->range)));
  }
  for (const ast::FunctionDef* callee : order)
    list.push_back({{"to", itemFor(snapshot, *callee)}, {"fromRanges", ranges[callee]}});
  return list;
}

}  // namespace argus::lsp
