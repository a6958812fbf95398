// Semantic analysis: one pass over the AST that resolves names, computes
// types, folds constants, reports diagnostics and builds the Tile IR (like
// Carbon's "check" phase). Device functions are inlined at each call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/ast.h"
#include "ir/ir.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::sema {

struct Options {
  std::vector<std::pair<std::string, std::string>> defines;  // -D NAME=VALUE
};

// A named entity of the program, for hover, go-to-definition, references and rename.
struct Symbol {
  enum class Kind { Kernel, DeviceFunction, Parameter, Const, Size, Local, LoopVar, Builtin };
  Kind kind;
  std::string name;
  SourceRange definition;  // empty for builtins
  std::vector<SourceRange> references;
  std::string typeDescription;  // e.g. "f32 tile (64, 64)"
};

struct Result {
  // A Function for every kernel that had no errors; each passes ir::verify.
  std::unique_ptr<ir::Module> module;
  // Types of value expressions (scalars, tiles, tensors, shared buffers, views), keyed by ast::Expr::id.
  std::unordered_map<uint32_t, ir::Type> exprTypes;
  std::vector<Symbol> symbols;
};

Result analyze(const ast::Module& module, const SourceFile& file, const Options& options,
               DiagnosticSink& diags);

const char* symbolKindName(Symbol::Kind kind);

}  // namespace argus::sema
