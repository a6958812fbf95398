// Semantic tokens (from the lexer's tokens, names classified by sema's symbols)
// and inlay hints (the inferred type of each local where it is first bound).
#include <algorithm>
#include <unordered_map>

#include "lsp/builtins.h"
#include "lsp/features.h"
#include "lsp/features_extra.h"

namespace argus::lsp {

namespace {

enum TokenType { kKeyword, kFunction, kParameter, kVariable, kType, kNumber, kString, kOperator, kDecorator };
enum TokenModifier { kDeclaration = 1, kReadonly = 2, kDefaultLibrary = 4 };

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::string shortType(const ir::Type& type) {
  switch (type.kind) {
    case ir::TypeKind::Scalar: return ir::dtypeName(type.dtype);
    case ir::TypeKind::Tile: return std::string(ir::dtypeName(type.dtype)) + " " + shapeText(type.shape);
    case ir::TypeKind::Tensor: return std::string("Tensor ") + ir::dtypeName(type.dtype) + " " + shapeText(type.shape);
    case ir::TypeKind::Shared: return std::string("shared ") + ir::dtypeName(type.dtype) + " " + shapeText(type.shape);
    case ir::TypeKind::View:
      return std::string(type.space == ir::MemSpace::Shared ? "shared view " : "view ") + ir::dtypeName(type.dtype) +
             " " + shapeText(type.shape);
    case ir::TypeKind::Void: return "";
  }
  return "";
}

}  // namespace

json semanticTokensLegend() {
  return json{{"tokenTypes", {"keyword", "function", "parameter", "variable", "type", "number", "string", "operator", "decorator"}},
              {"tokenModifiers", {"declaration", "readonly", "defaultLibrary"}}};
}

json semanticTokens(const Snapshot& snapshot) {
  const SourceFile& file = snapshot.file();
  std::unordered_map<uint32_t, std::pair<const sema::Symbol*, bool>> symbolAtOffset;  // bool: is definition
  if (snapshot.sema)
    for (const sema::Symbol& symbol : snapshot.sema->symbols) {
      if (!symbol.definition.empty()) symbolAtOffset[symbol.definition.begin] = {&symbol, true};
      for (SourceRange r : symbol.references) symbolAtOffset.emplace(r.begin, std::make_pair(&symbol, false));
    }
  json data = json::array();
  uint32_t lastLine = 0, lastChar = 0;
  bool afterAt = false;
  for (const TokenInfo& token : snapshot.tokens) {
    if (token.range.empty() || token.kind == "INDENT" || token.kind == "NEWLINE") continue;
    int type = -1, modifiers = 0;
    if (token.kind == "NAME") {
      auto it = symbolAtOffset.find(token.range.begin);
      if (afterAt) type = kDecorator;
      else if (std::find(dtypeNames().begin(), dtypeNames().end(), token.text) != dtypeNames().end() ||
               token.text == "Tensor" || token.text == "const")
        type = kType;
      else if (it != symbolAtOffset.end()) {
        const sema::Symbol& symbol = *it->second.first;
        if (it->second.second) modifiers |= kDeclaration;
        switch (symbol.kind) {
          case sema::Symbol::Kind::Kernel:
          case sema::Symbol::Kind::DeviceFunction: type = kFunction; break;
          case sema::Symbol::Kind::Builtin: type = kFunction; modifiers |= kDefaultLibrary; break;
          case sema::Symbol::Kind::Parameter: type = kParameter; break;
          case sema::Symbol::Kind::Const:
          case sema::Symbol::Kind::Size: type = kVariable; modifiers |= kReadonly; break;
          case sema::Symbol::Kind::Local:
          case sema::Symbol::Kind::LoopVar: type = kVariable; break;
        }
      }
    } else if (token.kind == "INT" || token.kind == "FLOAT") {
      type = kNumber;
    } else if (token.kind == "STRING") {
      type = kString;
    } else if (token.kind.size() > 2 && token.kind.front() == '\'') {
      char first = token.kind[1];
      if ((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z')) type = kKeyword;
      else if (token.text == "@") type = kDecorator;
      else if (token.text != "(" && token.text != ")" && token.text != "[" && token.text != "]" &&
               token.text != "," && token.text != ":" && token.text != ".")
        type = kOperator;
    }
    afterAt = token.text == "@";
    if (type < 0) continue;
    Position start = positionOf(file, token.range.begin), end = positionOf(file, token.range.end);
    if (end.line != start.line || end.character <= start.character) continue;
    uint32_t deltaLine = start.line - lastLine;
    uint32_t deltaChar = deltaLine == 0 ? start.character - lastChar : start.character;
    data.insert(data.end(), {deltaLine, deltaChar, end.character - start.character, static_cast<uint32_t>(type),
                             static_cast<uint32_t>(modifiers)});
    lastLine = start.line;
    lastChar = start.character;
  }
  return json{{"data", data}};
}

json semanticTokensEdits(const std::vector<uint32_t>& previous, const std::vector<uint32_t>& current) {
  size_t prefix = 0;
  while (prefix < previous.size() && prefix < current.size() && previous[prefix] == current[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < previous.size() - prefix && suffix < current.size() - prefix &&
         previous[previous.size() - 1 - suffix] == current[current.size() - 1 - suffix])
    ++suffix;
  json edits = json::array();
  if (prefix == previous.size() && prefix == current.size()) return edits;
  json data(std::vector<uint32_t>(current.begin() + static_cast<long>(prefix),
                                  current.end() - static_cast<long>(suffix)));
  edits.push_back({{"start", prefix}, {"deleteCount", previous.size() - prefix - suffix}, {"data", data}});
  return edits;
}

json inlayHints(const Snapshot& snapshot, Range range) {
  const SourceFile& file = snapshot.file();
  uint32_t begin = offsetOf(file, range.start), end = offsetOf(file, range.end);
  json hints = json::array();
  if (!snapshot.sema) return hints;
  for (const sema::Symbol& symbol : snapshot.sema->symbols) {
    if (symbol.kind != sema::Symbol::Kind::Local || symbol.definition.empty()) continue;
    if (symbol.definition.end < begin || symbol.definition.begin > end) continue;
    const ir::Type* type = symbolType(snapshot, symbol);
    std::string label;
    if (type) label = shortType(*type);
    if (label.empty()) continue;
    json hint = {{"position", toJson(positionOf(file, symbol.definition.end))},
                 {"label", ": " + label},
                 {"kind", 1},
                 {"paddingLeft", false}};
    if (type->isTile()) hint["tooltip"] = ir::layoutStr(type->layout);
    hints.push_back(std::move(hint));
  }
  for (json& hint : memoryInlayHints(snapshot, range)) hints.push_back(std::move(hint));
  std::stable_sort(hints.begin(), hints.end(), [](const json& a, const json& b) {
    return std::make_pair(a["position"]["line"].get<uint32_t>(), a["position"]["character"].get<uint32_t>()) <
           std::make_pair(b["position"]["line"].get<uint32_t>(), b["position"]["character"].get<uint32_t>());
  });
  return hints;
}

}  // namespace argus::lsp
