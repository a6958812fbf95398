// Go to definition, references, rename and the document outline, all from
// sema's symbol table (definitions and references as exact name ranges).
#include <algorithm>

#include "lsp/builtins.h"
#include "lsp/features.h"
#include "lsp/syntax_walk.h"

namespace argus::lsp {

namespace {

// LSP SymbolKind values.
constexpr int kSymbolVariable = 13;
constexpr int kSymbolConstant = 14;

bool isUserSymbol(const sema::Symbol& symbol) {
  return symbol.kind != sema::Symbol::Kind::Builtin && !symbol.definition.empty();
}

// Every occurrence of a symbol that spells its name (sizes may also be
// mentioned in shapes; anything else is not ours to rewrite).
std::vector<SourceRange> occurrences(const Snapshot& snapshot, const sema::Symbol& symbol, bool withDefinition) {
  std::vector<SourceRange> ranges;
  if (withDefinition && !symbol.definition.empty()) ranges.push_back(symbol.definition);
  for (SourceRange r : symbol.references) ranges.push_back(r);
  std::sort(ranges.begin(), ranges.end(),
            [](SourceRange a, SourceRange b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
  ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
  std::vector<SourceRange> named;
  for (SourceRange r : ranges)
    if (snapshot.file().slice(r) == symbol.name) named.push_back(r);
  return named;
}

json locations(const Snapshot& snapshot, const std::vector<SourceRange>& ranges) {
  json list = json::array();
  for (SourceRange r : ranges) list.push_back(toJson(Location{snapshot.uri, rangeOf(snapshot.file(), r)}));
  return list;
}


bool isConstParam(const ast::Param& p) {
  return p.annotation && p.annotation->kind == ast::ExprKind::Name &&
         static_cast<const ast::NameExpr&>(*p.annotation).name == "const";
}

}  // namespace

json definition(const Snapshot& snapshot, Position position) {
  const sema::Symbol* symbol = symbolAt(snapshot, offsetOf(snapshot.file(), position));
  if (!symbol || !isUserSymbol(*symbol)) return nullptr;
  return toJson(Location{snapshot.uri, rangeOf(snapshot.file(), symbol->definition)});
}

json references(const Snapshot& snapshot, Position position, bool includeDeclaration) {
  const sema::Symbol* symbol = symbolAt(snapshot, offsetOf(snapshot.file(), position));
  if (!symbol) return nullptr;
  return locations(snapshot, occurrences(snapshot, *symbol, includeDeclaration && isUserSymbol(*symbol)));
}

json documentHighlights(const Snapshot& snapshot, Position position) {
  constexpr int kRead = 2, kWrite = 3;
  const sema::Symbol* symbol = symbolAt(snapshot, offsetOf(snapshot.file(), position));
  json list = json::array();
  if (!symbol) return list;
  for (SourceRange r : occurrences(snapshot, *symbol, isUserSymbol(*symbol)))
    list.push_back({{"range", toJson(rangeOf(snapshot.file(), r))}, {"kind", r == symbol->definition ? kWrite : kRead}});
  return list;
}

json prepareRename(const Snapshot& snapshot, Position position) {
  SourceRange range;
  const sema::Symbol* symbol = symbolAt(snapshot, offsetOf(snapshot.file(), position), &range);
  if (!symbol || !isUserSymbol(*symbol) || snapshot.file().slice(range) != symbol->name) return nullptr;
  return json{{"range", toJson(rangeOf(snapshot.file(), range))}, {"placeholder", symbol->name}};
}

FeatureResult rename(const Snapshot& snapshot, Position position, const std::string& newName) {
  const sema::Symbol* symbol = symbolAt(snapshot, offsetOf(snapshot.file(), position));
  if (!symbol) return FeatureResult::fail(error_code::kInvalidParams, "there is no name to rename here");
  if (!isUserSymbol(*symbol))
    return FeatureResult::fail(error_code::kInvalidParams, "'" + symbol->name + "' is a builtin and cannot be renamed");
  if (!isIdentifier(newName))
    return FeatureResult::fail(error_code::kInvalidParams, "'" + newName + "' is not a valid name: use letters, digits and '_', not starting with a digit");
  if (isReservedName(newName))
    return FeatureResult::fail(error_code::kInvalidParams, "'" + newName + "' is a keyword, builtin or dtype; pick another name");
  json edits = json::array();
  for (SourceRange r : occurrences(snapshot, *symbol, true))
    edits.push_back(toJson(TextEdit{rangeOf(snapshot.file(), r), newName}));
  return FeatureResult::ok(json{{"changes", {{snapshot.uri, edits}}}});
}

json documentSymbols(const Snapshot& snapshot) {
  json list = json::array();
  if (!snapshot.ast) return list;
  const SourceFile& file = snapshot.file();
  for (const auto& fn : snapshot.ast->functions) {
    if (!fn || fn->name.empty()) continue;
    json children = json::array();
    for (const ast::Param& p : fn->params) {
      if (p.name.empty()) continue;
      bool constant = isConstParam(p);
      std::string detail = p.annotation ? std::string(file.slice(p.annotation->range)) : "";
      children.push_back({{"name", p.name},
                          {"detail", detail},
                          {"kind", constant ? kSymbolConstant : kSymbolVariable},
                          {"range", toJson(rangeOf(file, p.range.empty() ? p.nameRange : p.range))},
                          {"selectionRange", toJson(rangeOf(file, p.nameRange))}});
    }
    list.push_back({{"name", fn->name},
                    {"detail", decoratorDetail(*fn)},
                    {"kind", kSymbolFunction},
                    {"range", toJson(rangeOf(file, fn->range))},
                    {"selectionRange", toJson(rangeOf(file, fn->nameRange))},
                    {"children", children}});
  }
  return list;
}

}  // namespace argus::lsp
