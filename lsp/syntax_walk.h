// Iterative walks over the AST for the language features (no recursion: a
// deeply nested file must not overflow the server's stack).
#pragma once

#include <vector>

#include "frontend/ast.h"

namespace argus::lsp {

struct StatementVisit {
  const ast::Stmt* stmt = nullptr;
  const ast::FunctionDef* function = nullptr;  // null for a top-level stray statement
  const ast::Block* block = nullptr;           // the block holding it
  size_t index = 0;                            // its position in `block`
  size_t depth = 0;                            // 0 for a function body's own statements
};

// The bodies of a compound statement (for, while, if: then and else), in order.
std::vector<const ast::Block*> childBlocks(const ast::Stmt& stmt);
// Every statement of the module in source order (pre-order).
std::vector<StatementVisit> allStatements(const ast::Module& module);
// The statements of one function, in source order.
std::vector<StatementVisit> statementsOf(const ast::FunctionDef& function);

// LSP's SymbolKind.Function, which kernels and device functions are shown as.
inline constexpr int kSymbolFunction = 12;
// Whether `fn` carries `@name` (`kernel`, `device`).
bool hasDecorator(const ast::FunctionDef& fn, const char* name);
// A function's detail in symbol lists: "@kernel", "@device" or "".
const char* decoratorDetail(const ast::FunctionDef& fn);

}  // namespace argus::lsp
