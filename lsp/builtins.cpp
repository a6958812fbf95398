#include "lsp/builtins.h"

#include <algorithm>

#include "frontend/builtins.h"

namespace argus::lsp {

std::string BuiltinDoc::signature() const {
  std::string text = name + "(";
  for (size_t i = 0; i < params.size(); ++i) text += (i ? ", " : "") + params[i];
  text += ")";
  if (!result.empty()) text += " -> " + result;
  return text;
}

const std::vector<BuiltinDoc>& builtinDocs() {
  static const std::vector<BuiltinDoc> docs = [] {
    std::vector<BuiltinDoc> list;
    for (const BuiltinSpec& spec : builtinSpecs()) {
      BuiltinDoc doc;
      doc.name = spec.name;
      for (std::string_view p : spec.params) doc.params.emplace_back(p);
      doc.result = spec.result;
      doc.summary = spec.summary;
      doc.snippet = spec.snippet();
      doc.kind = builtinKindName(spec.kind);
      list.push_back(std::move(doc));
    }
    return list;
  }();
  return docs;
}

const BuiltinDoc* findBuiltinDoc(std::string_view name) {
  for (const BuiltinDoc& doc : builtinDocs())
    if (doc.name == name) return &doc;
  return nullptr;
}

const std::vector<std::string>& keywords() {
  static const std::vector<std::string> words = {"def", "for", "in", "if", "elif", "else", "while",
                                                 "return", "pass", "break", "continue", "assert",
                                                 "and", "or", "not", "True", "False", "None"};
  return words;
}

const std::vector<std::string>& dtypeNames() {
  static const std::vector<std::string> names = {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
                                                 "u64", "f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2"};
  return names;
}

const std::vector<BuiltinDoc>& memberDocs() {
  static const std::vector<BuiltinDoc> docs = {
      {"tile", {"shape"}, "tiling", "Split a tensor, shared buffer or view into tiles of `shape`; index it to pick one: `x.tile((B0, B1))[i, j]`.", "", "member"},
      {"shape", {}, "", "The extents, a tuple (runtime sizes for tensor extents written as names).", "", "member"},
      {"dtype", {}, "", "The element type.", "", "member"},
  };
  return docs;
}

bool isReservedName(std::string_view name) {
  auto in = [&](const std::vector<std::string>& list) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  static const std::vector<std::string> reserved = {"import", "class", "lambda", "with", "try", "yield",
                                                    "global", "tag", "inf", "Tensor", "const", "kernel", "device"};
  const BuiltinSpec* builtin = findBuiltinSpec(name);
  // Layout constructors (mma, wgmma) are only names inside `layout=`: a variable may take them.
  return in(keywords()) || in(dtypeNames()) || in(reserved) || (builtin && builtin->kind != BuiltinKind::Layout);
}

bool isIdentifier(std::string_view name) {
  if (name.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(name[0])) return false;
  for (char c : name)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

}  // namespace argus::lsp
