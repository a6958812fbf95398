#include "lsp/builtins.h"

#include <algorithm>

namespace argus::lsp {

std::string BuiltinDoc::signature() const {
  std::string text = name + "(";
  for (size_t i = 0; i < params.size(); ++i) text += (i ? ", " : "") + params[i];
  text += ")";
  if (!result.empty()) text += " -> " + result;
  return text;
}

const std::vector<BuiltinDoc>& builtinDocs() {
  static const std::vector<BuiltinDoc> docs = {
      {"program_id", {"axis"}, "i32", "Index of this block in the grid along `axis`."},
      {"num_programs", {"axis"}, "i32", "Extent of the grid along `axis`."},
      {"cdiv", {"a", "b"}, "int", "Ceiling division: `(a + b - 1) // b`."},
      {"load", {"view", "other=0"}, "tile", "Read a view into registers; elements past the edge read `other`."},
      {"store", {"view", "value"}, "", "Write a tile (or scalar) into a view; elements past the edge are skipped."},
      {"copy", {"dst", "src"}, "", "`store(dst, load(src))`."},
      {"shared", {"dtype", "shape"}, "shared buffer", "Allocate a buffer in the block's shared memory."},
      {"zeros", {"dtype", "shape"}, "tile", "A tile of zeros."},
      {"full", {"shape", "value", "dtype"}, "tile", "A tile filled with `value`."},
      {"arange", {"n"}, "i32 tile (n,)", "`0, 1, ..., n-1`."},
      {"iota", {"shape", "axis"}, "i32 tile", "Each element's coordinate on `axis`."},
      {"sum", {"x", "axis=None"}, "tile | scalar", "Sum along `axis` (kept with extent 1), or of everything."},
      {"max", {"x", "axis=None"}, "tile | scalar", "Maximum along `axis` (kept with extent 1), or of everything."},
      {"min", {"x", "axis=None"}, "tile | scalar", "Minimum along `axis` (kept with extent 1), or of everything."},
      {"prod", {"x", "axis=None"}, "tile | scalar", "Product along `axis` (kept with extent 1), or of everything."},
      {"maximum", {"a", "b"}, "tile", "Elementwise maximum."},
      {"minimum", {"a", "b"}, "tile", "Elementwise minimum."},
      {"exp", {"x"}, "tile", "Elementwise e^x (float)."},
      {"exp2", {"x"}, "tile", "Elementwise 2^x (float)."},
      {"log", {"x"}, "tile", "Elementwise natural logarithm (float)."},
      {"log2", {"x"}, "tile", "Elementwise base-2 logarithm (float)."},
      {"sqrt", {"x"}, "tile", "Elementwise square root (float)."},
      {"rsqrt", {"x"}, "tile", "Elementwise reciprocal square root (float)."},
      {"tanh", {"x"}, "tile", "Elementwise hyperbolic tangent (float)."},
      {"erf", {"x"}, "tile", "Elementwise error function (float)."},
      {"sin", {"x"}, "tile", "Elementwise sine (float)."},
      {"cos", {"x"}, "tile", "Elementwise cosine (float)."},
      {"abs", {"x"}, "tile", "Elementwise absolute value."},
      {"floor", {"x"}, "tile", "Elementwise floor (float)."},
      {"ceil", {"x"}, "tile", "Elementwise ceiling (float)."},
      {"fma", {"a", "b", "c"}, "tile", "`a*b+c` with one rounding (float)."},
      {"where", {"cond", "a", "b"}, "tile", "`a` where `cond`, else `b`."},
      {"cast", {"x", "dtype"}, "tile", "Convert to `dtype`."},
      {"dot", {"a", "b", "acc"}, "tile (M, N)", "`acc + a @ b`; `a` (M, K) and `b` (K, N) are views in shared memory."},
      {"barrier", {}, "", "All threads of the block wait; shared-memory writes before it are visible after it."},
      {"require", {"cond", "message"}, "", "A launch-time requirement over runtime sizes and constants."},
      {"range", {"start", "stop", "step"}, "", "`range(stop)`, `range(start, stop[, step])`: a loop over scalars."},
  };
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
      {"tile", {"shape"}, "tiling", "Split a tensor, shared buffer or view into tiles of `shape`; index it to pick one: `x.tile((B0, B1))[i, j]`."},
      {"shape", {}, "", "The extents, a tuple (runtime sizes for tensor extents written as names)."},
      {"dtype", {}, "", "The element type."},
  };
  return docs;
}

bool isReservedName(std::string_view name) {
  auto in = [&](const std::vector<std::string>& list) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  static const std::vector<std::string> reserved = {"import", "class", "lambda", "with", "try", "yield",
                                                    "global", "tag", "inf", "Tensor", "const", "kernel", "device"};
  return in(keywords()) || in(dtypeNames()) || in(reserved) || findBuiltinDoc(name) != nullptr;
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
