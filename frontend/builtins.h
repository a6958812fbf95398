// The language's builtins as data (rows of frontend/builtins.def): sema
// recognizes names and checks arity from it; the language server shows its
// signatures, docs and snippets; a test compares it with the editor grammars.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace argus {

// What a builtin is for; editors group and describe it by this.
enum class BuiltinKind { Grid, Memory, Creation, Reduction, Math, Matmul, Sync, Launch, Loop, Checker, Async, Layout };

struct BuiltinSpec {
  std::string_view name;
  BuiltinKind kind;
  std::string_view result;   // "" when a call gives nothing
  std::string_view summary;  // Markdown
  std::vector<std::string_view> params;  // "name" or "name=default", as the signature shows them

  // The parameter names, defaults stripped: what keyword arguments bind to.
  std::vector<std::string> paramNames() const;
  // How many leading parameters have no default.
  size_t requiredCount() const;
  // "load(view, other=0) -> tile"
  std::string signature() const;
  // An LSP snippet (insertTextFormat 2): "load(${1:view})".
  std::string snippet() const;
  std::string_view snippetOverride;  // from the table; empty: derived from the required parameters
};

// Every row of builtins.def: the callable builtins in table order (the order of
// sema's `Builtin` enum), then the layout constructors.
const std::vector<BuiltinSpec>& builtinSpecs();
const BuiltinSpec* findBuiltinSpec(std::string_view name);
const char* builtinKindName(BuiltinKind kind);

}  // namespace argus
