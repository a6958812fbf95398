// Internals of the parser (not part of the library's API): the AST builder
// over ANTLR parse trees, and the error strategy that turns ANTLR's syntax
// errors into Argus diagnostics.
#pragma once

#include <cstdint>
#include <typeinfo>
#include <memory>
#include <string>
#include <vector>

#include "ArgusParser.h"
#include "antlr4-runtime.h"
#include "frontend/ast.h"
#include "frontend/lexer_internal.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::frontend {

using P = grammar::ArgusParser;

// `node` as a T when its dynamic type is exactly T. The parse-tree classes
// have key functions, so each has a single type_info and comparing addresses
// is exact; this keeps dynamic_cast's type-name comparisons off the
// builder's hot path (it dispatches on every node of the tree).
template <class T, class U>
T* exactly(U* node) {
  return node && &typeid(*node) == &typeid(T) ? static_cast<T*>(node) : nullptr;
}

// Fast child lookups for the builder's hot paths (the generated accessors run
// two dynamic_casts per child). Terminals are told apart by their exact type.
inline bool isTerminal(antlr4::tree::ParseTree* node) {
  const std::type_info& type = typeid(*node);
  return &type == &typeid(antlr4::tree::TerminalNodeImpl) || &type == &typeid(antlr4::tree::ErrorNodeImpl);
}
// The i-th child that is a rule context of rule `ruleIndex`, or null.
template <class T>
T* childRule(antlr4::ParserRuleContext* ctx, size_t ruleIndex, size_t i = 0) {
  for (antlr4::tree::ParseTree* child : ctx->children) {
    if (isTerminal(child)) continue;
    auto* rule = static_cast<antlr4::ParserRuleContext*>(child);
    if (rule->getRuleIndex() == ruleIndex && i-- == 0) return static_cast<T*>(rule);
  }
  return nullptr;
}
// The i-th child token of type `tokenType`, or null.
inline antlr4::Token* childToken(antlr4::ParserRuleContext* ctx, size_t tokenType, size_t i = 0) {
  for (antlr4::tree::ParseTree* child : ctx->children) {
    if (!isTerminal(child)) continue;
    antlr4::Token* token = static_cast<antlr4::tree::TerminalNode*>(child)->getSymbol();
    if (token->getType() == tokenType && i-- == 0) return token;
  }
  return nullptr;
}
inline bool hasToken(antlr4::ParserRuleContext* ctx, size_t tokenType) { return childToken(ctx, tokenType) != nullptr; }
// Every child rule context of rule `ruleIndex`, in order.
template <class T>
std::vector<T*> childRules(antlr4::ParserRuleContext* ctx, size_t ruleIndex) {
  std::vector<T*> out;
  for (antlr4::tree::ParseTree* child : ctx->children)
    if (!isTerminal(child) && static_cast<antlr4::ParserRuleContext*>(child)->getRuleIndex() == ruleIndex)
      out.push_back(static_cast<T*>(child));
  return out;
}

// Builds AST nodes from parse-tree pieces. Every function accepts partial
// trees (what the parser produced before an error) and puts ErrorExpr where a
// part is missing, so a broken line still yields what it can.
class AstBuilder {
 public:
  AstBuilder(const SourceFile& file, const SourceCharStream& input, DiagnosticSink& diags)
      : file_(file), input_(input), diags_(diags) {}

  uint32_t exprCount() const { return nextId_; }
  // Quiet while building a line that already has a reported error: the
  // builder's own checks (assignment targets, chained comparisons...) would
  // only repeat it.
  void setQuiet(bool quiet) { quiet_ = quiet; }

  // Byte range of a token, and of a rule context without the line-structure
  // tokens (NEWLINE, INDENT, DEDENT) it may end with.
  SourceRange range(const antlr4::Token* token) const;
  SourceRange range(const antlr4::ParserRuleContext* ctx) const;
  // An empty range just after a token (where something is missing).
  SourceRange after(const antlr4::Token* token) const;

  ast::ExprPtr expr(P::ExprContext* ctx, SourceRange missingAt);
  // An expression list: the expression itself, or a tuple when it has commas.
  ast::ExprPtr exprList(P::ExprlistContext* ctx, SourceRange missingAt);
  ast::ExprPtr errorExpr(SourceRange range);

  // One logical line at a time (used by both parsing stages).
  ast::StmtPtr simpleStmt(P::Simple_stmtContext* ctx);
  ast::Decorator decorator(P::DecoratorContext* ctx);
  void defHeader(ast::FunctionDef& fn, P::Def_headerContext* ctx);
  void forHeader(ast::ForStmt& stmt, P::For_headerContext* ctx);
  ast::ExprPtr headerCondition(P::ExprContext* cond, antlr4::Token* keyword);

  // A whole parse tree (the fast path, when the file has no syntax error).
  void file(P::File_Context* ctx, ast::Module& module);

 private:
  template <class T, class... Args>
  std::unique_ptr<T> makeExpr(Args&&... args) {
    auto node = std::make_unique<T>(std::forward<Args>(args)...);
    node->id = ++nextId_;
    return node;
  }

  ast::ExprPtr buildExpr(P::ExprContext* ctx, SourceRange missingAt);  // expr() without the depth limit
  ast::ExprPtr atom(P::ExprContext* ctx, SourceRange range);
  ast::ExprPtr binary(P::BinaryExprContext* ctx, SourceRange missingAt);
  void checkComparisonChain(P::BinaryExprContext* ctx, const ast::BinaryExpr& node);
  ast::ExprPtr subscript(P::SubscriptContext* ctx);
  std::vector<ast::Argument> arguments(P::ArglistContext* ctx);
  ast::StmtPtr exprStmt(P::ExprStmtContext* ctx, SourceRange range);
  void checkTarget(const ast::Expr& target, const char* context);

  std::unique_ptr<ast::FunctionDef> funcdef(P::FuncdefContext* ctx);
  ast::Block suite(P::SuiteContext* ctx);
  ast::StmtPtr stmt(P::StmtContext* ctx);
  ast::StmtPtr ifChain(P::If_stmtContext* ctx);

  const SourceFile& file_;
  const SourceCharStream& input_;
  DiagnosticSink& diags_;
  uint32_t nextId_ = 0;
  bool quiet_ = false;
  size_t exprDepth_ = 0;  // expr() calls on the stack
  bool exprTooDeep_ = false;  // the current outermost expression crossed kMaxExpressionDepth
};

// Range of a block of statements (empty when the block is).
SourceRange blockRange(const ast::Block& block);
// `r` extended to the end of `block` (unchanged when the block is empty).
inline SourceRange extendToBlock(SourceRange r, const ast::Block& block) {
  return block.empty() ? r : joinRanges(r, blockRange(block));
}

// Reports the first syntax error of each logical line with a message in the
// user's terms, then skips to the end of the line: no token is ever invented
// or deleted, so what was parsed before the error is a faithful partial tree.
class SyntaxErrorStrategy : public antlr4::DefaultErrorStrategy {
 public:
  SyntaxErrorStrategy(const SourceFile& file, const SourceCharStream& input, DiagnosticSink& diags)
      : file_(file), input_(input), diags_(diags) {}

  // Starts one logical line; `quiet` when the lexer already reported an error on it.
  void beginUnit(bool quiet) {
    failed_ = quiet;
    reported_ = false;
  }
  bool unitFailed() const { return failed_; }
  bool unitReported() const { return reported_; }

  void reportError(antlr4::Parser* parser, const antlr4::RecognitionException& e) override;
  void recover(antlr4::Parser* parser, std::exception_ptr e) override;
  antlr4::Token* recoverInline(antlr4::Parser* parser) override;
  void sync(antlr4::Parser*) override {}

 private:
  void translate(antlr4::Parser* parser, antlr4::Token* offending, const antlr4::misc::IntervalSet& expected);

  const SourceFile& file_;
  const SourceCharStream& input_;
  DiagnosticSink& diags_;
  bool failed_ = false;
  bool reported_ = false;
};

// parseModule, with a switch for tests: `forceRecovery` skips the fast path so
// that the recovering parser's tree can be compared with the fast one's.
std::unique_ptr<ast::Module> parse(const SourceFile& file, DiagnosticSink& diags, bool forceRecovery);

}  // namespace argus::frontend
