// What the editor shows about the language's fixed vocabulary: keywords,
// builtins with their signatures (from the library's table,
// frontend/builtins.def), dtypes and the methods of tensors and tiles.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace argus::lsp {

struct BuiltinDoc {
  std::string name;
  std::vector<std::string> params;  // as written in the signature, e.g. "other=0"
  std::string result;               // e.g. "tile", empty when nothing is returned
  std::string summary;
  std::string snippet;              // LSP snippet syntax; empty: insert the name
  std::string kind;                 // "elementwise", "layout", ... (builtins only)
  std::string signature() const;    // "load(view, other=0) -> tile"
};

const std::vector<BuiltinDoc>& builtinDocs();
const BuiltinDoc* findBuiltinDoc(std::string_view name);
const std::vector<std::string>& keywords();
const std::vector<std::string>& dtypeNames();
// `x.<method>` completions: attributes of tensors, shared buffers, views and tiles.
const std::vector<BuiltinDoc>& memberDocs();
// True for a name the user may not rename to or from: keyword, builtin, dtype.
bool isReservedName(std::string_view name);
bool isIdentifier(std::string_view name);

}  // namespace argus::lsp
