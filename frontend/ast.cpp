// Operator spellings and the readable AST dump (`argusc --emit=ast`, golden tests).
//
// Dump format, one node per line, children indented by two spaces:
//   <role>: <Kind> <details> @<line>:<col>-<line>:<col>
// The range is [begin, end) as 1-based line and byte column. The format is
// stable: golden files depend on it.
#include <charconv>

#include "frontend/ast.h"

namespace argus::ast {

const char* binaryOpSpelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::FloorDiv: return "//";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Pow: return "**";
    case BinaryOp::MatMul: return "@";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
  }
  return "?";
}

const char* unaryOpSpelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Pos: return "+";
    case UnaryOp::Not: return "not";
    case UnaryOp::Invert: return "~";
  }
  return "?";
}

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\0"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string shortestDouble(double v) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  std::string s = ec == std::errc() ? std::string(buffer, end) : "?";
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keep floats recognisable: 1.0, not 1
  return s;
}

class Dumper {
 public:
  explicit Dumper(const SourceFile& file) : file_(file) {}
  std::string take() { return std::move(out_); }

  void module(const Module& m) {
    out_ += "Module\n";
    for (const std::unique_ptr<FunctionDef>& fn : m.functions) function(*fn, 1);
    if (!m.strayStatements.empty()) block(m.strayStatements, 1, "top level");
  }

 private:
  void line(int depth, const std::string& role, const std::string& text, SourceRange r) {
    out_.append(static_cast<size_t>(depth) * 2, ' ');
    if (!role.empty()) out_ += role + ": ";
    out_ += text + " @" + at(r) + "\n";
  }
  std::string at(SourceRange r) const {
    LineCol b = file_.lineCol(r.begin), e = file_.lineCol(r.end);
    return std::to_string(b.line) + ":" + std::to_string(b.column) + "-" + std::to_string(e.line) + ":" + std::to_string(e.column);
  }

  void arguments(const std::vector<Argument>& args, int depth) {
    for (const Argument& a : args) {
      if (a.keyword) {
        line(depth, "arg", *a.keyword + "=", a.range);
        expr(a.value.get(), depth + 1, "value");
      } else {
        expr(a.value.get(), depth, "arg");
      }
    }
  }

  void function(const FunctionDef& fn, int depth) {
    line(depth, "", "Function " + fn.name + (fn.hasSyntaxErrors ? " (has syntax errors)" : ""), fn.range);
    for (const Decorator& d : fn.decorators) {
      line(depth + 1, "decorator", "@" + d.name + (d.args ? "(...)" : ""), d.range);
      if (d.args) arguments(*d.args, depth + 2);
    }
    for (const Param& p : fn.params) {
      line(depth + 1, "param", p.name, p.range);
      if (p.annotation) expr(p.annotation.get(), depth + 2, "annotation");
      if (p.defaultValue) expr(p.defaultValue.get(), depth + 2, "default");
    }
    if (fn.returnAnnotation) expr(fn.returnAnnotation.get(), depth + 1, "returns");
    block(fn.body, depth + 1, "body");
  }

  void block(const Block& b, int depth, const std::string& role) {
    out_.append(static_cast<size_t>(depth) * 2, ' ');
    out_ += role + ":" + (b.empty() ? " (empty)" : "") + "\n";
    for (const StmtPtr& s : b) stmt(*s, depth + 1);
  }

  void stmt(const Stmt& s, int depth) {
    switch (s.kind) {
      case StmtKind::Expr:
        line(depth, "", "ExprStmt", s.range);
        expr(static_cast<const ExprStmt&>(s).expr.get(), depth + 1, "expr");
        return;
      case StmtKind::Assign: {
        const auto& a = static_cast<const AssignStmt&>(s);
        line(depth, "", "Assign", s.range);
        for (const ExprPtr& t : a.targets) expr(t.get(), depth + 1, "target");
        if (a.annotation) expr(a.annotation.get(), depth + 1, "annotation");
        expr(a.value.get(), depth + 1, "value");
        return;
      }
      case StmtKind::AugAssign: {
        const auto& a = static_cast<const AugAssignStmt&>(s);
        line(depth, "", std::string("AugAssign ") + binaryOpSpelling(a.op) + "=", s.range);
        expr(a.target.get(), depth + 1, "target");
        expr(a.value.get(), depth + 1, "value");
        return;
      }
      case StmtKind::For: {
        const auto& f = static_cast<const ForStmt&>(s);
        line(depth, "", "For", s.range);
        expr(f.target.get(), depth + 1, "target");
        expr(f.iter.get(), depth + 1, "iter");
        block(f.body, depth + 1, "body");
        return;
      }
      case StmtKind::While: {
        const auto& w = static_cast<const WhileStmt&>(s);
        line(depth, "", "While", s.range);
        expr(w.cond.get(), depth + 1, "cond");
        block(w.body, depth + 1, "body");
        return;
      }
      case StmtKind::If: {
        const auto& i = static_cast<const IfStmt&>(s);
        line(depth, "", i.isElif ? "If (elif)" : "If", s.range);
        expr(i.cond.get(), depth + 1, "cond");
        block(i.then, depth + 1, "then");
        if (!i.orelse.empty()) block(i.orelse, depth + 1, "else");
        return;
      }
      case StmtKind::Return: {
        const auto& r = static_cast<const ReturnStmt&>(s);
        line(depth, "", "Return", s.range);
        if (r.value) expr(r.value.get(), depth + 1, "value");
        return;
      }
      case StmtKind::Assert: {
        const auto& a = static_cast<const AssertStmt&>(s);
        line(depth, "", "Assert", s.range);
        expr(a.cond.get(), depth + 1, "cond");
        if (a.message) expr(a.message.get(), depth + 1, "message");
        return;
      }
      case StmtKind::Pass: line(depth, "", "Pass", s.range); return;
      case StmtKind::Break: line(depth, "", "Break", s.range); return;
      case StmtKind::Continue: line(depth, "", "Continue", s.range); return;
      case StmtKind::Error: line(depth, "", "ErrorStmt", s.range); return;
    }
  }

  void expr(const Expr* e, int depth, const std::string& role) {
    if (!e) {
      out_.append(static_cast<size_t>(depth) * 2, ' ');
      out_ += role + ": (null)\n";
      return;
    }
    switch (e->kind) {
      case ExprKind::Name: line(depth, role, "Name " + static_cast<const NameExpr*>(e)->name, e->range); return;
      case ExprKind::Int: line(depth, role, "Int " + std::to_string(static_cast<const IntExpr*>(e)->value), e->range); return;
      case ExprKind::Float: line(depth, role, "Float " + shortestDouble(static_cast<const FloatExpr*>(e)->value), e->range); return;
      case ExprKind::Bool: line(depth, role, static_cast<const BoolExpr*>(e)->value ? "True" : "False", e->range); return;
      case ExprKind::String: line(depth, role, "String " + quoted(static_cast<const StringExpr*>(e)->value), e->range); return;
      case ExprKind::None: line(depth, role, "None", e->range); return;
      case ExprKind::Ellipsis: line(depth, role, "Ellipsis", e->range); return;
      case ExprKind::Error: line(depth, role, "ErrorExpr", e->range); return;
      case ExprKind::Tuple:
        line(depth, role, "Tuple", e->range);
        for (const ExprPtr& x : static_cast<const TupleExpr*>(e)->elements) expr(x.get(), depth + 1, "element");
        return;
      case ExprKind::List:
        line(depth, role, "List", e->range);
        for (const ExprPtr& x : static_cast<const ListExpr*>(e)->elements) expr(x.get(), depth + 1, "element");
        return;
      case ExprKind::Call: {
        const auto* c = static_cast<const CallExpr*>(e);
        line(depth, role, "Call", e->range);
        expr(c->callee.get(), depth + 1, "callee");
        arguments(c->args, depth + 1);
        return;
      }
      case ExprKind::Attribute: {
        const auto* a = static_cast<const AttributeExpr*>(e);
        line(depth, role, "Attribute ." + a->name, e->range);
        expr(a->base.get(), depth + 1, "base");
        return;
      }
      case ExprKind::Subscript: {
        const auto* s = static_cast<const SubscriptExpr*>(e);
        line(depth, role, "Subscript", e->range);
        expr(s->base.get(), depth + 1, "base");
        for (const ExprPtr& i : s->indices) expr(i.get(), depth + 1, "index");
        return;
      }
      case ExprKind::Slice: {
        const auto* s = static_cast<const SliceExpr*>(e);
        line(depth, role, "Slice", e->range);
        if (s->lower) expr(s->lower.get(), depth + 1, "lower");
        if (s->upper) expr(s->upper.get(), depth + 1, "upper");
        if (s->step) expr(s->step.get(), depth + 1, "step");
        return;
      }
      case ExprKind::Binary: {
        const auto* b = static_cast<const BinaryExpr*>(e);
        line(depth, role, std::string("Binary ") + binaryOpSpelling(b->op), e->range);
        expr(b->lhs.get(), depth + 1, "lhs");
        expr(b->rhs.get(), depth + 1, "rhs");
        return;
      }
      case ExprKind::Unary: {
        const auto* u = static_cast<const UnaryExpr*>(e);
        line(depth, role, std::string("Unary ") + unaryOpSpelling(u->op), e->range);
        expr(u->operand.get(), depth + 1, "operand");
        return;
      }
    }
  }

  const SourceFile& file_;
  std::string out_;
};

}  // namespace

std::string dumpAst(const Module& module, const SourceFile& file) {
  Dumper dumper(file);
  dumper.module(module);
  return dumper.take();
}

}  // namespace argus::ast
