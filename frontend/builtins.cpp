#include "frontend/builtins.h"

#include <unordered_map>

namespace argus {

const std::vector<BuiltinSpec>& builtinSpecs() {
  static const std::vector<BuiltinSpec> specs = {
#define ARGUS_BUILTIN(Id, name, kind, result, summary, snippet, ...) \
  BuiltinSpec{name, BuiltinKind::kind, result, summary, {__VA_ARGS__}, snippet},
#define ARGUS_LAYOUT_BUILTIN(Id, name, summary, snippet, ...) \
  BuiltinSpec{name, BuiltinKind::Layout, "layout", summary, {__VA_ARGS__}, snippet},
#include "frontend/builtins.def"
  };
  return specs;
}

const BuiltinSpec* findBuiltinSpec(std::string_view name) {
  static const std::unordered_map<std::string_view, const BuiltinSpec*> index = [] {
    std::unordered_map<std::string_view, const BuiltinSpec*> m;
    for (const BuiltinSpec& spec : builtinSpecs()) m.emplace(spec.name, &spec);
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

std::vector<std::string> BuiltinSpec::paramNames() const {
  std::vector<std::string> names;
  for (std::string_view p : params) names.emplace_back(p.substr(0, p.find('=')));
  return names;
}

size_t BuiltinSpec::requiredCount() const {
  size_t n = 0;
  while (n < params.size() && params[n].find('=') == std::string_view::npos) ++n;
  return n;
}

std::string BuiltinSpec::signature() const {
  std::string text(name);
  text += "(";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i) text += ", ";
    text += params[i];
  }
  text += ")";
  if (!result.empty()) {
    text += " -> ";
    text += result;
  }
  return text;
}

std::string BuiltinSpec::snippet() const {
  if (!snippetOverride.empty()) return std::string(snippetOverride);
  std::string text(name);
  text += "(";
  size_t required = requiredCount();
  for (size_t i = 0; i < required; ++i) {
    if (i) text += ", ";
    text += "${" + std::to_string(i + 1) + ":" + std::string(params[i]) + "}";
  }
  text += ")";
  return text;
}

const char* builtinKindName(BuiltinKind kind) {
  switch (kind) {
    case BuiltinKind::Grid: return "grid";
    case BuiltinKind::Memory: return "memory";
    case BuiltinKind::Creation: return "tile creation";
    case BuiltinKind::Reduction: return "reduction";
    case BuiltinKind::Math: return "elementwise";
    case BuiltinKind::Matmul: return "matrix multiply";
    case BuiltinKind::Sync: return "synchronization";
    case BuiltinKind::Launch: return "launch requirement";
    case BuiltinKind::Loop: return "loop iterator";
    case BuiltinKind::Checker: return "checker";
    case BuiltinKind::Async: return "asynchronous copy";
    case BuiltinKind::Layout: return "layout";
  }
  return "builtin";
}

}  // namespace argus
