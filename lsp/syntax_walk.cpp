#include "lsp/syntax_walk.h"

namespace argus::lsp {

std::vector<const ast::Block*> childBlocks(const ast::Stmt& stmt) {
  switch (stmt.kind) {
    case ast::StmtKind::For: return {&static_cast<const ast::ForStmt&>(stmt).body};
    case ast::StmtKind::While: return {&static_cast<const ast::WhileStmt&>(stmt).body};
    case ast::StmtKind::If: {
      const auto& s = static_cast<const ast::IfStmt&>(stmt);
      return {&s.then, &s.orelse};
    }
    default: return {};
  }
}

namespace {

void walkBlock(const ast::Block& root, const ast::FunctionDef* function, std::vector<StatementVisit>& out) {
  // Blocks still to visit, each with the next statement's index; pre-order.
  struct Frame {
    const ast::Block* block;
    size_t next;
    size_t depth;
  };
  std::vector<Frame> stack{{&root, 0, 0}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next >= top.block->size()) {
      stack.pop_back();
      continue;
    }
    size_t index = top.next++;
    const ast::Stmt* stmt = (*top.block)[index].get();
    if (!stmt) continue;
    size_t depth = top.depth;
    out.push_back({stmt, function, top.block, index, depth});
    std::vector<const ast::Block*> children = childBlocks(*stmt);
    // Pushed in reverse so that the first child block is visited first.
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back({*it, 0, depth + 1});
  }
}

}  // namespace

std::vector<StatementVisit> statementsOf(const ast::FunctionDef& function) {
  std::vector<StatementVisit> out;
  walkBlock(function.body, &function, out);
  return out;
}

std::vector<StatementVisit> allStatements(const ast::Module& module) {
  std::vector<StatementVisit> out;
  for (const auto& fn : module.functions)
    if (fn) walkBlock(fn->body, fn.get(), out);
  walkBlock(module.strayStatements, nullptr, out);
  return out;
}

bool hasDecorator(const ast::FunctionDef& fn, const char* name) {
  for (const ast::Decorator& d : fn.decorators)
    if (d.name == name) return true;
  return false;
}

const char* decoratorDetail(const ast::FunctionDef& fn) {
  return hasDecorator(fn, "kernel") ? "@kernel" : hasDecorator(fn, "device") ? "@device" : "";
}

}  // namespace argus::lsp
