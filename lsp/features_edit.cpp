// Features that help while typing: completion, code actions from fix-its,
// signature help, and the diagnostics notification.
#include <algorithm>
#include <set>

#include "lsp/builtins.h"
#include "lsp/features.h"
#include "lsp/features_extra.h"
#include "support/render.h"

namespace argus::lsp {

namespace {

// LSP CompletionItemKind values.
constexpr int kItemMethod = 2;
constexpr int kItemFunction = 3;
constexpr int kItemVariable = 6;
constexpr int kItemProperty = 10;
constexpr int kItemKeyword = 14;
constexpr int kItemConstant = 21;
constexpr int kItemTypeParameter = 25;

bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int itemKindOf(sema::Symbol::Kind kind) {
  switch (kind) {
    case sema::Symbol::Kind::Kernel:
    case sema::Symbol::Kind::DeviceFunction:
    case sema::Symbol::Kind::Builtin: return kItemFunction;
    case sema::Symbol::Kind::Const:
    case sema::Symbol::Kind::Size: return kItemConstant;
    case sema::Symbol::Kind::Parameter:
    case sema::Symbol::Kind::Local:
    case sema::Symbol::Kind::LoopVar: return kItemVariable;
  }
  return kItemVariable;
}

json builtinItem(const BuiltinDoc& doc, int kind) {
  return json{{"label", doc.name},
              {"kind", kind},
              {"detail", doc.params.empty() && doc.result.empty() ? doc.name : doc.signature()},
              {"documentation", {{"kind", "markdown"}, {"value", doc.summary}}}};
}

// The type of the user name just before `dot` (`x` in `x.`), looked up by
// spelling: the text being typed usually does not parse yet.
const ir::Type* typeOfNameBefore(const Snapshot& snapshot, uint32_t dot) {
  const std::string& text = snapshot.file().text();
  uint32_t begin = dot;
  while (begin > 0 && isIdentChar(text[begin - 1])) --begin;
  if (begin == dot || !snapshot.sema) return nullptr;
  std::string name = text.substr(begin, dot - begin);
  const ast::FunctionDef* fn = functionAt(snapshot, dot);
  for (const sema::Symbol& symbol : snapshot.sema->symbols) {
    if (symbol.name != name || symbol.definition.empty()) continue;
    if (fn && (symbol.definition.begin < fn->range.begin || symbol.definition.end > fn->range.end)) continue;
    if (const ir::Type* type = symbolType(snapshot, symbol)) return type;
  }
  return nullptr;
}

// `tile` splits tensors, shared buffers and views; `shape` has no meaning for a scalar.
bool memberApplies(const std::string& member, const ir::Type& type) {
  if (member == "tile")
    return type.kind == ir::TypeKind::Tensor || type.kind == ir::TypeKind::Shared || type.kind == ir::TypeKind::View;
  if (member == "shape") return type.kind != ir::TypeKind::Scalar;
  return true;
}

}  // namespace

bool clientSupportsSnippets(const json& initializeParams) {
  const json* node = &initializeParams;
  for (const char* key : {"capabilities", "textDocument", "completion", "completionItem", "snippetSupport"}) {
    node = member(*node, key);
    if (!node) return false;
  }
  return node->is_boolean() && node->get<bool>();
}

json completion(const Snapshot& snapshot, Position position, bool snippets) {
  const SourceFile& file = snapshot.file();
  const std::string& text = file.text();
  uint32_t offset = offsetOf(file, position);
  uint32_t start = offset;
  while (start > 0 && isIdentChar(text[start - 1])) --start;
  json items = json::array();
  if (start > 0 && text[start - 1] == '.') {
    const ir::Type* base = typeOfNameBefore(snapshot, start - 1);
    for (const BuiltinDoc& doc : memberDocs())
      if (!base || memberApplies(doc.name, *base))
        items.push_back(builtinItem(doc, doc.params.empty() ? kItemProperty : kItemMethod));
    return json{{"isIncomplete", false}, {"items", items}};
  }
  std::set<std::string> seen;
  auto add = [&](json item) {
    if (seen.insert(item["label"].get<std::string>()).second) items.push_back(std::move(item));
  };
  // Names in scope first: the enclosing function's own names defined before
  // the cursor, then every kernel and device function.
  const ast::FunctionDef* fn = functionAt(snapshot, offset);
  if (snapshot.sema) {
    for (const sema::Symbol& symbol : snapshot.sema->symbols) {
      if (symbol.kind == sema::Symbol::Kind::Builtin || symbol.definition.empty()) continue;
      bool global = symbol.kind == sema::Symbol::Kind::Kernel || symbol.kind == sema::Symbol::Kind::DeviceFunction;
      bool local = fn && symbol.definition.begin >= fn->range.begin && symbol.definition.end <= fn->range.end &&
                   symbol.definition.begin < offset && !(symbol.definition.begin <= offset && offset <= symbol.definition.end);
      if (!global && !local) continue;
      add(json{{"label", symbol.name},
               {"sortText", (local ? "0" : "1") + symbol.name},
               {"kind", itemKindOf(symbol.kind)},
               {"detail", symbol.typeDescription.empty() ? std::string(sema::symbolKindName(symbol.kind))
                                                         : symbol.typeDescription}});
    }
  }
  // Names in scope sort first, then builtins, dtypes and keywords.
  // No snippet where the name is already followed by its '(' (changing a call's callee).
  bool callContext = !(offset < text.size() && text[offset] == '(');
  for (const BuiltinDoc& doc : builtinDocs()) {
    json item = builtinItem(doc, kItemFunction);
    item["sortText"] = "2" + doc.name;
    if (snippets && callContext && !doc.snippet.empty()) {
      item["insertText"] = doc.snippet;
      item["insertTextFormat"] = 2;
    }
    add(std::move(item));
  }
  for (const std::string& name : dtypeNames())
    add(json{{"label", name}, {"sortText", "3" + name}, {"kind", kItemTypeParameter}, {"detail", "dtype"}});
  for (const std::string& word : keywords()) add(json{{"label", word}, {"sortText", "4" + word}, {"kind", kItemKeyword}});
  add(json{{"label", "Tensor"}, {"sortText", "3Tensor"}, {"kind", kItemTypeParameter}, {"detail", "Tensor[dtype, (d0, d1, ...)]"}});
  add(json{{"label", "const"}, {"sortText", "4const"}, {"kind", kItemKeyword}, {"detail", "a compile-time constant parameter"}});
  add(json{{"label", "inf"}, {"sortText", "2inf"}, {"kind", kItemConstant}, {"detail", "f32 infinity"}});
  return json{{"isIncomplete", false}, {"items", items}};
}

json codeActions(const Snapshot& snapshot, Range range) {
  const SourceFile& file = snapshot.file();
  uint32_t begin = offsetOf(file, range.start), end = offsetOf(file, range.end);
  if (end < begin) std::swap(begin, end);
  json actions = json::array();
  for (const Diagnostic& diag : snapshot.currentDiagnostics()) {
    if (diag.fixits.empty()) continue;
    uint32_t dEnd = std::max(diag.range.begin, diag.range.end);
    if (diag.range.begin > end || begin > dEnd) continue;
    json diagnostic = diagnosticToJson(diag, file);
    for (const FixIt& fix : diag.fixits) {
      json edit = json::array({toJson(TextEdit{rangeOf(file, fix.range), fix.replacement})});
      actions.push_back({{"title", fix.message.empty() ? "apply the fix" : fix.message},
                         {"kind", "quickfix"},
                         {"diagnostics", json::array({diagnostic})},
                         {"isPreferred", diag.fixits.size() == 1},
                         {"edit", {{"changes", {{snapshot.uri, edit}}}}}});
    }
  }
  for (json& action : refactorActions(snapshot, range)) actions.push_back(std::move(action));
  return actions;
}

json signatureHelp(const Snapshot& snapshot, Position position) {
  const std::string& text = snapshot.file().text();
  uint32_t offset = offsetOf(snapshot.file(), position);
  // Walk back to the unmatched '(' of the call the cursor is in, counting the
  // commas at its level; works on half-typed calls the parser cannot read.
  int depth = 0, commas = 0;
  uint32_t limit = offset > 4000 ? offset - 4000 : 0;
  for (uint32_t i = offset; i > limit; --i) {
    char c = text[i - 1];
    if (c == ')' || c == ']' || c == '}') ++depth;
    else if (c == '[' || c == '{') { if (depth == 0) return nullptr; --depth; }
    else if (c == ',' && depth == 0) ++commas;
    else if (c == ':' && depth == 0 && i < offset && text[i] == '\n') return nullptr;
    else if (c == '(') {
      if (depth > 0) { --depth; continue; }
      uint32_t nameEnd = i - 1;
      while (nameEnd > 0 && text[nameEnd - 1] == ' ') --nameEnd;
      uint32_t nameBegin = nameEnd;
      while (nameBegin > 0 && isIdentChar(text[nameBegin - 1])) --nameBegin;
      std::string name = text.substr(nameBegin, nameEnd - nameBegin);
      const BuiltinDoc* doc = findBuiltinDoc(name);
      if (!doc && nameBegin > 0 && text[nameBegin - 1] == '.' && name == "tile") doc = &memberDocs()[0];
      BuiltinDoc userFunction;
      if (!doc && snapshot.ast)
        for (const auto& fn : snapshot.ast->functions)
          if (fn && fn->name == name && !name.empty()) {
            userFunction.name = name;
            for (const ast::Param& p : fn->params)
              userFunction.params.push_back(p.annotation ? p.name + ": " + std::string(snapshot.file().slice(p.annotation->range))
                                                         : p.name);
            userFunction.summary = "Device function, inlined at each call.";
            doc = &userFunction;
            break;
          }
      if (!doc) return nullptr;
      json params = json::array();
      for (const std::string& p : doc->params) params.push_back({{"label", p}});
      int active = doc->params.empty() ? 0 : std::min<int>(commas, static_cast<int>(doc->params.size()) - 1);
      return json{{"signatures", json::array({{{"label", doc->signature()},
                                               {"documentation", {{"kind", "markdown"}, {"value", doc->summary}}},
                                               {"parameters", params}}})},
                  {"activeSignature", 0},
                  {"activeParameter", active}};
    }
  }
  return nullptr;
}

json publishDiagnosticsParams(const Snapshot& snapshot) {
  json list = json::array();
  for (const Diagnostic& diag : snapshot.currentDiagnostics()) list.push_back(diagnosticToJson(diag, snapshot.file()));
  return json{{"uri", snapshot.uri}, {"version", snapshot.version}, {"diagnostics", list}};
}

}  // namespace argus::lsp
