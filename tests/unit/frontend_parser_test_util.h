// Helpers shared by the parser tests: parse a string, print expressions with
// explicit parentheses, walk every expression, format ranges.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "frontend/ast.h"
#include "frontend/parser.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::testing {

struct Parsed {
  std::unique_ptr<SourceFile> file;
  DiagnosticSink diags;
  std::unique_ptr<ast::Module> module;

  std::string at(SourceRange r) const {
    LineCol b = file->lineCol(r.begin), e = file->lineCol(r.end);
    return std::to_string(b.line) + ":" + std::to_string(b.column) + "-" + std::to_string(e.line) + ":" +
           std::to_string(e.column);
  }
  std::string text(SourceRange r) const { return std::string(file->slice(r)); }
  std::string dump() const { return ast::dumpAst(*module, *file); }
  std::string diagnosticsText() const {
    std::string out;
    for (const Diagnostic& d : diags.diagnostics()) out += std::string(d.code()) + " " + at(d.range) + " " + d.message + "\n";
    return out;
  }
};

inline Parsed parseText(const std::string& text) {
  Parsed p;
  p.file = std::make_unique<SourceFile>("test.ag", text);
  p.module = parseModule(*p.file, p.diags);
  return p;
}

// An expression with every operator parenthesized: `(a + (b * c))`.
inline std::string sexpr(const ast::Expr* e) {
  using namespace ast;
  if (!e) return "<null>";
  switch (e->kind) {
    case ExprKind::Name: return static_cast<const NameExpr*>(e)->name;
    case ExprKind::Int: return std::to_string(static_cast<const IntExpr*>(e)->value);
    case ExprKind::Float: {
      std::string s = std::to_string(static_cast<const FloatExpr*>(e)->value);
      while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
      return s;
    }
    case ExprKind::Bool: return static_cast<const BoolExpr*>(e)->value ? "True" : "False";
    case ExprKind::String: return "'" + static_cast<const StringExpr*>(e)->value + "'";
    case ExprKind::None: return "None";
    case ExprKind::Ellipsis: return "...";
    case ExprKind::Error: return "<error>";
    case ExprKind::Tuple: {
      std::string out = "tuple(";
      for (const ExprPtr& x : static_cast<const TupleExpr*>(e)->elements) out += (out.back() == '(' ? "" : ", ") + sexpr(x.get());
      return out + ")";
    }
    case ExprKind::List: {
      std::string out = "[";
      for (const ExprPtr& x : static_cast<const ListExpr*>(e)->elements) out += (out.back() == '[' ? "" : ", ") + sexpr(x.get());
      return out + "]";
    }
    case ExprKind::Call: {
      const auto* c = static_cast<const CallExpr*>(e);
      std::string out = sexpr(c->callee.get()) + "(";
      bool first = true;
      for (const Argument& a : c->args) {
        out += (first ? "" : ", ") + (a.keyword ? *a.keyword + "=" : std::string()) + sexpr(a.value.get());
        first = false;
      }
      return out + ")";
    }
    case ExprKind::Attribute: {
      const auto* a = static_cast<const AttributeExpr*>(e);
      return sexpr(a->base.get()) + "." + a->name;
    }
    case ExprKind::Subscript: {
      const auto* s = static_cast<const SubscriptExpr*>(e);
      std::string out = sexpr(s->base.get()) + "[";
      bool first = true;
      for (const ExprPtr& i : s->indices) {
        out += (first ? "" : ", ") + sexpr(i.get());
        first = false;
      }
      return out + "]";
    }
    case ExprKind::Slice: {
      const auto* s = static_cast<const SliceExpr*>(e);
      auto part = [](const ExprPtr& p) { return p ? sexpr(p.get()) : std::string(); };
      return part(s->lower) + ":" + part(s->upper) + (s->step ? ":" + part(s->step) : "");
    }
    case ExprKind::Binary: {
      const auto* b = static_cast<const BinaryExpr*>(e);
      return "(" + sexpr(b->lhs.get()) + " " + binaryOpSpelling(b->op) + " " + sexpr(b->rhs.get()) + ")";
    }
    case ExprKind::Unary: {
      const auto* u = static_cast<const UnaryExpr*>(e);
      std::string op = unaryOpSpelling(u->op);
      return "(" + op + (op == "not" ? " " : "") + sexpr(u->operand.get()) + ")";
    }
  }
  return "?";
}

// Calls `visit` on every expression of the module, parents before children.
inline void forEachExpr(const ast::Module& m, const std::function<void(const ast::Expr&)>& visit) {
  using namespace ast;
  std::function<void(const Expr*)> expr = [&](const Expr* e) {
    if (!e) return;
    visit(*e);
    switch (e->kind) {
      case ExprKind::Tuple: for (const ExprPtr& x : static_cast<const TupleExpr*>(e)->elements) expr(x.get()); break;
      case ExprKind::List: for (const ExprPtr& x : static_cast<const ListExpr*>(e)->elements) expr(x.get()); break;
      case ExprKind::Call:
        expr(static_cast<const CallExpr*>(e)->callee.get());
        for (const Argument& a : static_cast<const CallExpr*>(e)->args) expr(a.value.get());
        break;
      case ExprKind::Attribute: expr(static_cast<const AttributeExpr*>(e)->base.get()); break;
      case ExprKind::Subscript:
        expr(static_cast<const SubscriptExpr*>(e)->base.get());
        for (const ExprPtr& i : static_cast<const SubscriptExpr*>(e)->indices) expr(i.get());
        break;
      case ExprKind::Slice: {
        const auto* s = static_cast<const SliceExpr*>(e);
        expr(s->lower.get());
        expr(s->upper.get());
        expr(s->step.get());
        break;
      }
      case ExprKind::Binary:
        expr(static_cast<const BinaryExpr*>(e)->lhs.get());
        expr(static_cast<const BinaryExpr*>(e)->rhs.get());
        break;
      case ExprKind::Unary: expr(static_cast<const UnaryExpr*>(e)->operand.get()); break;
      default: break;
    }
  };
  std::function<void(const Block&)> block = [&](const Block& b) {
    for (const StmtPtr& s : b) {
      switch (s->kind) {
        case StmtKind::Expr: expr(static_cast<const ExprStmt*>(s.get())->expr.get()); break;
        case StmtKind::Assign: {
          const auto* a = static_cast<const AssignStmt*>(s.get());
          for (const ExprPtr& t : a->targets) expr(t.get());
          expr(a->annotation.get());
          expr(a->value.get());
          break;
        }
        case StmtKind::AugAssign:
          expr(static_cast<const AugAssignStmt*>(s.get())->target.get());
          expr(static_cast<const AugAssignStmt*>(s.get())->value.get());
          break;
        case StmtKind::For:
          expr(static_cast<const ForStmt*>(s.get())->target.get());
          expr(static_cast<const ForStmt*>(s.get())->iter.get());
          block(static_cast<const ForStmt*>(s.get())->body);
          break;
        case StmtKind::While:
          expr(static_cast<const WhileStmt*>(s.get())->cond.get());
          block(static_cast<const WhileStmt*>(s.get())->body);
          break;
        case StmtKind::If:
          expr(static_cast<const IfStmt*>(s.get())->cond.get());
          block(static_cast<const IfStmt*>(s.get())->then);
          block(static_cast<const IfStmt*>(s.get())->orelse);
          break;
        case StmtKind::Return: expr(static_cast<const ReturnStmt*>(s.get())->value.get()); break;
        case StmtKind::Assert:
          expr(static_cast<const AssertStmt*>(s.get())->cond.get());
          expr(static_cast<const AssertStmt*>(s.get())->message.get());
          break;
        default: break;
      }
    }
  };
  for (const auto& fn : m.functions) {
    for (const Decorator& d : fn->decorators)
      if (d.args)
        for (const Argument& a : *d.args) expr(a.value.get());
    for (const Param& p : fn->params) {
      expr(p.annotation.get());
      expr(p.defaultValue.get());
    }
    expr(fn->returnAnnotation.get());
    block(fn->body);
  }
  block(m.strayStatements);
}

}  // namespace argus::testing
