// The Argus AST: our own tree (not ANTLR's parse tree), every node with its
// exact source range. The parser always returns a Module; parts it could not
// understand become Error nodes so later stages can still look at the rest.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/source.h"

namespace argus::ast {

enum class ExprKind : uint8_t {
  Name, Int, Float, Bool, String, None, Ellipsis,
  Tuple, List, Call, Attribute, Subscript, Slice, Binary, Unary, Error
};

enum class BinaryOp : uint8_t {
  Add, Sub, Mul, Div, FloorDiv, Mod, Pow, MatMul,
  BitAnd, BitOr, BitXor, Shl, Shr,
  Eq, Ne, Lt, Le, Gt, Ge, And, Or
};

enum class UnaryOp : uint8_t { Neg, Pos, Not, Invert };

const char* binaryOpSpelling(BinaryOp op);
const char* unaryOpSpelling(UnaryOp op);

struct Expr {
  explicit Expr(ExprKind k, SourceRange r) : kind(k), range(r) {}
  virtual ~Expr() = default;
  ExprKind kind;
  SourceRange range;
  // Stable id within a Module, assigned by the parser (sema keys side tables on it).
  uint32_t id = 0;
};
using ExprPtr = std::unique_ptr<Expr>;

struct NameExpr : Expr {
  NameExpr(SourceRange r, std::string n) : Expr(ExprKind::Name, r), name(std::move(n)) {}
  std::string name;
};
struct IntExpr : Expr {
  IntExpr(SourceRange r, int64_t v) : Expr(ExprKind::Int, r), value(v) {}
  int64_t value;
};
struct FloatExpr : Expr {
  FloatExpr(SourceRange r, double v) : Expr(ExprKind::Float, r), value(v) {}
  double value;
};
struct BoolExpr : Expr {
  BoolExpr(SourceRange r, bool v) : Expr(ExprKind::Bool, r), value(v) {}
  bool value;
};
struct StringExpr : Expr {
  StringExpr(SourceRange r, std::string v) : Expr(ExprKind::String, r), value(std::move(v)) {}
  std::string value;  // unescaped contents
};
struct NoneExpr : Expr {
  explicit NoneExpr(SourceRange r) : Expr(ExprKind::None, r) {}
};
struct EllipsisExpr : Expr {
  explicit EllipsisExpr(SourceRange r) : Expr(ExprKind::Ellipsis, r) {}
};
// `(a, b)` or `a, b`; also `()`.
struct TupleExpr : Expr {
  explicit TupleExpr(SourceRange r) : Expr(ExprKind::Tuple, r) {}
  std::vector<ExprPtr> elements;
};
struct ListExpr : Expr {
  explicit ListExpr(SourceRange r) : Expr(ExprKind::List, r) {}
  std::vector<ExprPtr> elements;
};
struct Argument {
  std::optional<std::string> keyword;  // `name=` of a keyword argument
  SourceRange keywordRange;
  ExprPtr value;
  SourceRange range;  // whole argument
};
struct CallExpr : Expr {
  explicit CallExpr(SourceRange r) : Expr(ExprKind::Call, r) {}
  ExprPtr callee;
  std::vector<Argument> args;
  SourceRange parenRange;  // from '(' to ')'
};
struct AttributeExpr : Expr {
  AttributeExpr(SourceRange r) : Expr(ExprKind::Attribute, r) {}
  ExprPtr base;
  std::string name;
  SourceRange nameRange;
};
struct SubscriptExpr : Expr {
  explicit SubscriptExpr(SourceRange r) : Expr(ExprKind::Subscript, r) {}
  ExprPtr base;
  std::vector<ExprPtr> indices;  // `x[i, j]` has two
};
// `a:b:c` inside a subscript; any part may be missing.
struct SliceExpr : Expr {
  explicit SliceExpr(SourceRange r) : Expr(ExprKind::Slice, r) {}
  ExprPtr lower, upper, step;
};
struct BinaryExpr : Expr {
  BinaryExpr(SourceRange r, BinaryOp o) : Expr(ExprKind::Binary, r), op(o) {}
  BinaryOp op;
  SourceRange opRange;
  ExprPtr lhs, rhs;
};
struct UnaryExpr : Expr {
  UnaryExpr(SourceRange r, UnaryOp o) : Expr(ExprKind::Unary, r), op(o) {}
  UnaryOp op;
  ExprPtr operand;
};
// Stands where the parser could not make sense of an expression.
struct ErrorExpr : Expr {
  explicit ErrorExpr(SourceRange r) : Expr(ExprKind::Error, r) {}
};

enum class StmtKind : uint8_t { Expr, Assign, AugAssign, For, While, If, Return, Pass, Break, Continue, Assert, Error };

struct Stmt {
  Stmt(StmtKind k, SourceRange r) : kind(k), range(r) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  SourceRange range;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct ExprStmt : Stmt {
  explicit ExprStmt(SourceRange r) : Stmt(StmtKind::Expr, r) {}
  ExprPtr expr;
};
// `a = b = value`: targets are names, tuples of names, subscripts or attributes.
struct AssignStmt : Stmt {
  explicit AssignStmt(SourceRange r) : Stmt(StmtKind::Assign, r) {}
  std::vector<ExprPtr> targets;
  ExprPtr annotation;  // `x: f32 = ...` (optional)
  ExprPtr value;
};
// `a += b`
struct AugAssignStmt : Stmt {
  explicit AugAssignStmt(SourceRange r) : Stmt(StmtKind::AugAssign, r) {}
  BinaryOp op;
  SourceRange opRange;
  ExprPtr target;
  ExprPtr value;
};
struct ForStmt : Stmt {
  explicit ForStmt(SourceRange r) : Stmt(StmtKind::For, r) {}
  ExprPtr target;  // usually a NameExpr
  ExprPtr iter;    // `range(...)`, `unroll(...)`, `pipelined(...)`
  Block body;
};
struct WhileStmt : Stmt {
  explicit WhileStmt(SourceRange r) : Stmt(StmtKind::While, r) {}
  ExprPtr cond;
  Block body;
};
// `elif` chains are nested IfStmts in `orelse`.
struct IfStmt : Stmt {
  explicit IfStmt(SourceRange r) : Stmt(StmtKind::If, r) {}
  ExprPtr cond;
  Block then;
  Block orelse;
  bool isElif = false;
};
struct ReturnStmt : Stmt {
  explicit ReturnStmt(SourceRange r) : Stmt(StmtKind::Return, r) {}
  ExprPtr value;  // may be null
};
struct SimpleStmt : Stmt {  // pass, break, continue
  SimpleStmt(StmtKind k, SourceRange r) : Stmt(k, r) {}
};
// `assert cond, "message"`: reserved for tag assertions (checker).
struct AssertStmt : Stmt {
  explicit AssertStmt(SourceRange r) : Stmt(StmtKind::Assert, r) {}
  ExprPtr cond;
  ExprPtr message;
};
struct ErrorStmt : Stmt {
  explicit ErrorStmt(SourceRange r) : Stmt(StmtKind::Error, r) {}
};

struct Decorator {
  SourceRange range;  // from '@' to the end of the line
  std::string name;
  SourceRange nameRange;
  std::optional<std::vector<Argument>> args;  // present when written as a call
};

struct Param {
  std::string name;
  SourceRange nameRange;
  ExprPtr annotation;  // may be null
  ExprPtr defaultValue;  // may be null
  SourceRange range;
};

struct FunctionDef {
  SourceRange range;  // whole definition including decorators
  std::vector<Decorator> decorators;
  std::string name;
  SourceRange nameRange;
  std::vector<Param> params;
  ExprPtr returnAnnotation;
  Block body;
  // Set by the parser when a lexical or syntax error lies inside this
  // definition: its tree is partial (Error nodes), so later stages may want to
  // stay quiet about it rather than report follow-on errors.
  bool hasSyntaxErrors = false;
};

struct Module {
  std::vector<std::unique_ptr<FunctionDef>> functions;
  // Top-level statements that are not function definitions (reported by sema).
  Block strayStatements;
  uint32_t exprCount = 0;  // ids are 1..exprCount
};

// A readable, indented dump used by `--emit=ast` and golden tests.
std::string dumpAst(const Module& module, const SourceFile& file);

}  // namespace argus::ast
