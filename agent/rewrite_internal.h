// Shared machinery of the deterministic rewrites (agent/rewrite*.cpp): parse a
// program once, find things in its AST, express the change as text edits at
// the AST's source ranges, apply them and run the canonical formatter. Every
// rewrite reads the parse, never raw text alone.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/rewrite.h"
#include "driver/compilation.h"
#include "frontend/ast.h"

namespace argus::agent::detail {

// One replacement of the bytes [begin, end) of the original text.
struct Edit {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string text;
};

// A parsed program and its (first) kernel.
struct ParsedKernel {
  std::unique_ptr<Compilation> compilation;
  const ast::FunctionDef* kernel = nullptr;
  const std::string* text = nullptr;

  std::string slice(SourceRange r) const { return text->substr(r.begin, r.end - r.begin); }
  std::string slice(const ast::Expr& e) const { return slice(e.range); }
};

// Parses `source`; nullopt (with `whyNot`) when it has syntax errors or no kernel.
std::optional<ParsedKernel> parseKernel(const std::string& source, std::string& whyNot);

// Applies the edits (which must not overlap), formats the result and wraps it
// in an applied RewriteResult; a result that no longer parses is reported as
// not applied rather than handed on.
RewriteResult finishRewrite(const std::string& source, std::vector<Edit> edits, std::string description);
RewriteResult notApplied(std::string whyNot);

// --- AST queries -----------------------------------------------------------------

// The call when `e` is `name(...)` (any callee name when `name` is empty).
const ast::CallExpr* asCall(const ast::Expr* e, const std::string& name = "");
std::string calleeName(const ast::CallExpr& call);
const ast::NameExpr* asName(const ast::Expr* e);
const ast::Argument* keywordArg(const ast::CallExpr& call, const std::string& keyword);
const ast::Argument* positionalArg(const ast::CallExpr& call, size_t index);
const ast::Decorator* kernelDecorator(const ast::FunctionDef& fn);

// `NAME: const = V` parameters.
const ast::Param* constParam(const ast::FunctionDef& fn, const std::string& name);
std::map<std::string, int64_t> constIntDefaults(const ast::FunctionDef& fn);
bool hasName(const ast::FunctionDef& fn, const std::string& name);  // a parameter or any name used
std::string freshName(const ast::FunctionDef& fn, const std::string& base);

// Integer value of an expression over literals and const defaults.
std::optional<int64_t> evalInt(const ast::Expr& e, const std::map<std::string, int64_t>& consts);

// The dtype word of a `Tensor[dtype, shape]` parameter.
std::optional<std::string> tensorDtype(const ast::FunctionDef& fn, const std::string& param);
// The top-level `NAME = shared(dtype, shape, ...)` of a buffer.
const ast::CallExpr* sharedDecl(const ast::FunctionDef& fn, const std::string& buffer);
// The buffer a view of shared memory starts from: `a_s`, `a_s[s]`, `a_s.tile(..)[..]`.
const ast::NameExpr* rootName(const ast::Expr* e);

// Every call in a block, nested blocks included, in source order.
void collectCalls(const ast::Block& block, std::vector<const ast::CallExpr*>& out);
void collectCalls(const ast::Expr* e, std::vector<const ast::CallExpr*>& out);
// Every name read anywhere in a block.
void collectNames(const ast::Block& block, std::vector<const ast::NameExpr*>& out);
void collectNames(const ast::Expr* e, std::vector<const ast::NameExpr*>& out);

// The kernel's `for` loops, outermost first (nested loops follow their parent).
void collectLoops(const ast::Block& block, std::vector<const ast::ForStmt*>& out);

// --- edits ---------------------------------------------------------------------

// Appends `NAME: const = V` parameters after the last parameter.
Edit addConstParams(const ParsedKernel& p, const std::vector<std::pair<std::string, int64_t>>& params);
// Removes the whole line(s) of a statement that stands alone on its lines.
Edit removeStatement(const ParsedKernel& p, const ast::Stmt& stmt);
// The indentation (spaces) of the line holding `offset`.
std::string indentAt(const std::string& text, uint32_t offset);
// Start of the line holding `offset`.
uint32_t lineStartOf(const std::string& text, uint32_t offset);
// Inserts `arg` (e.g. "swizzle=(2, 3, 3)") as the last argument of a call,
// or replaces the keyword argument of that name.
Edit setKeywordArg(const ParsedKernel& p, const ast::CallExpr& call, const std::string& keyword,
                   const std::string& valueText);

// End of the last statement of a block, nested blocks included (a ForStmt's
// own range may or may not cover its body's line ending; this does not).
uint32_t blockEnd(const ast::Stmt& stmt);

// The dot(a, b, acc) calls of the kernel.
std::vector<const ast::CallExpr*> dotCalls(const ast::FunctionDef& fn);

// Per-family entry points (rewrite.cpp dispatches on the id).
RewriteResult setParams(const std::string& source, const nlohmann::json& args);
RewriteResult setStages(const std::string& source, const nlohmann::json& args);
RewriteResult stageOperandsInShared(const std::string& source, const nlohmann::json& args);
RewriteResult asyncPipeline(const std::string& source, const nlohmann::json& args);
RewriteResult tensorCoreMma(const std::string& source, const nlohmann::json& args);
RewriteResult swizzleShared(const std::string& source, const nlohmann::json& args);
RewriteResult rasterizeGrid(const std::string& source, const nlohmann::json& args);
RewriteResult tmaWgmma(const std::string& source, const nlohmann::json& args);
RewriteResult persistentTiles(const std::string& source, const nlohmann::json& args);

// The swizzle (B, M, S) that keeps ldmatrix reads of a shared buffer of this
// shape and dtype free of bank conflicts; nullopt when a row has one chunk.
std::optional<std::array<int, 3>> autoSwizzle(const std::vector<int64_t>& shape, const std::string& dtype);

// The outer-product loop of a naive GEMM (see rewrite_staging.cpp).
struct OuterProductLoop {
  const ast::ForStmt* outer = nullptr;  // for kt in range(...)
  const ast::ForStmt* inner = nullptr;  // for kk in range(BK)
  std::string tensorA, tensorB, rowIndex, colIndex, tileM, tileN, tileK, accName;
  bool transB = false;  // B stored (N, K): loaded as a column and made a row in the product
};
std::optional<OuterProductLoop> findOuterProductLoop(const ParsedKernel& p, std::string& whyNot);

}  // namespace argus::agent::detail
