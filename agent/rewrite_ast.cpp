// AST queries and text edits shared by the rewrites (rewrite_internal.h).
#include <algorithm>
#include <functional>

#include "agent/rewrite_internal.h"
#include "frontend/format.h"

namespace argus::agent::detail {

std::optional<ParsedKernel> parseKernel(const std::string& source, std::string& whyNot) {
  ParsedKernel p;
  p.compilation = std::make_unique<Compilation>(SourceFile("kernel.ag", source), CompileOptions{});
  const ast::Module& module = p.compilation->ast();
  p.text = &p.compilation->source().text();
  for (const auto& fn : module.functions)
    if (kernelDecorator(*fn)) {
      if (fn->hasSyntaxErrors) {
        whyNot = "the kernel '" + fn->name + "' has syntax errors; fix them first";
        return std::nullopt;
      }
      p.kernel = fn.get();
      return p;
    }
  whyNot = "the program has no @kernel function";
  return std::nullopt;
}

RewriteResult notApplied(std::string whyNot) {
  RewriteResult r;
  r.whyNot = std::move(whyNot);
  return r;
}

RewriteResult finishRewrite(const std::string& source, std::vector<Edit> edits, std::string description) {
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin > b.begin; });
  std::string text = source;
  uint32_t limit = static_cast<uint32_t>(text.size());
  for (const Edit& e : edits) {
    if (e.end > limit || e.begin > e.end) return notApplied("internal error: overlapping edits (" + description + ")");
    text.replace(e.begin, e.end - e.begin, e.text);
    limit = e.begin;
  }
  std::string why;
  std::optional<std::string> formatted = formatSource(SourceFile("kernel.ag", text), FormatOptions{}, &why);
  if (!formatted) return notApplied("internal error: the rewritten program does not parse (" + why + ")");
  RewriteResult r;
  r.applied = true;
  r.source = std::move(*formatted);
  r.description = std::move(description);
  return r;
}

const ast::NameExpr* asName(const ast::Expr* e) {
  return e && e->kind == ast::ExprKind::Name ? static_cast<const ast::NameExpr*>(e) : nullptr;
}

std::string calleeName(const ast::CallExpr& call) {
  const ast::NameExpr* n = asName(call.callee.get());
  return n ? n->name : "";
}

const ast::CallExpr* asCall(const ast::Expr* e, const std::string& name) {
  if (!e || e->kind != ast::ExprKind::Call) return nullptr;
  const auto* call = static_cast<const ast::CallExpr*>(e);
  if (!name.empty() && calleeName(*call) != name) return nullptr;
  return call;
}

const ast::Argument* keywordArg(const ast::CallExpr& call, const std::string& keyword) {
  for (const ast::Argument& a : call.args)
    if (a.keyword && *a.keyword == keyword && a.value) return &a;
  return nullptr;
}

const ast::Argument* positionalArg(const ast::CallExpr& call, size_t index) {
  size_t i = 0;
  for (const ast::Argument& a : call.args) {
    if (a.keyword || !a.value) continue;
    if (i++ == index) return &a;
  }
  return nullptr;
}

const ast::Decorator* kernelDecorator(const ast::FunctionDef& fn) {
  for (const ast::Decorator& d : fn.decorators)
    if (d.name == "kernel") return &d;
  return nullptr;
}

const ast::Param* constParam(const ast::FunctionDef& fn, const std::string& name) {
  for (const ast::Param& p : fn.params) {
    const ast::NameExpr* ann = asName(p.annotation.get());
    if (p.name == name && ann && ann->name == "const") return &p;
  }
  return nullptr;
}

std::map<std::string, int64_t> constIntDefaults(const ast::FunctionDef& fn) {
  std::map<std::string, int64_t> out;
  // Defaults may refer to earlier constants; a few passes settle them.
  for (int pass = 0; pass < 3; ++pass)
    for (const ast::Param& p : fn.params) {
      const ast::NameExpr* ann = asName(p.annotation.get());
      if (!ann || ann->name != "const" || !p.defaultValue || out.count(p.name)) continue;
      if (std::optional<int64_t> v = evalInt(*p.defaultValue, out)) out[p.name] = *v;
    }
  return out;
}

std::optional<int64_t> evalInt(const ast::Expr& e, const std::map<std::string, int64_t>& consts) {
  switch (e.kind) {
    case ast::ExprKind::Int: return static_cast<const ast::IntExpr&>(e).value;
    case ast::ExprKind::Name: {
      auto it = consts.find(static_cast<const ast::NameExpr&>(e).name);
      if (it == consts.end()) return std::nullopt;
      return it->second;
    }
    case ast::ExprKind::Unary: {
      const auto& u = static_cast<const ast::UnaryExpr&>(e);
      std::optional<int64_t> v = u.operand ? evalInt(*u.operand, consts) : std::nullopt;
      if (!v) return std::nullopt;
      if (u.op == ast::UnaryOp::Neg) return -*v;
      if (u.op == ast::UnaryOp::Pos) return *v;
      return std::nullopt;
    }
    case ast::ExprKind::Binary: {
      const auto& b = static_cast<const ast::BinaryExpr&>(e);
      if (!b.lhs || !b.rhs) return std::nullopt;
      std::optional<int64_t> l = evalInt(*b.lhs, consts), r = evalInt(*b.rhs, consts);
      if (!l || !r) return std::nullopt;
      switch (b.op) {
        case ast::BinaryOp::Add: return *l + *r;
        case ast::BinaryOp::Sub: return *l - *r;
        case ast::BinaryOp::Mul: return *l * *r;
        case ast::BinaryOp::FloorDiv: return *r == 0 ? std::nullopt : std::optional<int64_t>(*l / *r);
        case ast::BinaryOp::Mod: return *r == 0 ? std::nullopt : std::optional<int64_t>(*l % *r);
        default: return std::nullopt;
      }
    }
    default: return std::nullopt;
  }
}

std::optional<std::string> tensorDtype(const ast::FunctionDef& fn, const std::string& param) {
  for (const ast::Param& p : fn.params) {
    if (p.name != param || !p.annotation || p.annotation->kind != ast::ExprKind::Subscript) continue;
    const auto& sub = static_cast<const ast::SubscriptExpr&>(*p.annotation);
    const ast::NameExpr* base = asName(sub.base.get());
    if (!base || base->name != "Tensor" || sub.indices.empty()) return std::nullopt;
    const ast::NameExpr* dtype = asName(sub.indices[0].get());
    if (dtype) return dtype->name;
  }
  return std::nullopt;
}

const ast::CallExpr* sharedDecl(const ast::FunctionDef& fn, const std::string& buffer) {
  for (const ast::StmtPtr& s : fn.body) {
    if (s->kind != ast::StmtKind::Assign) continue;
    const auto& a = static_cast<const ast::AssignStmt&>(*s);
    if (a.targets.size() != 1) continue;
    const ast::NameExpr* target = asName(a.targets[0].get());
    if (target && target->name == buffer) return asCall(a.value.get(), "shared");
  }
  return nullptr;
}

const ast::NameExpr* rootName(const ast::Expr* e) {
  while (e) {
    switch (e->kind) {
      case ast::ExprKind::Name: return static_cast<const ast::NameExpr*>(e);
      case ast::ExprKind::Subscript: e = static_cast<const ast::SubscriptExpr*>(e)->base.get(); break;
      case ast::ExprKind::Attribute: e = static_cast<const ast::AttributeExpr*>(e)->base.get(); break;
      case ast::ExprKind::Call: {
        const auto* c = static_cast<const ast::CallExpr*>(e);
        if (c->callee && c->callee->kind == ast::ExprKind::Attribute) {
          e = c->callee.get();
          break;
        }
        return nullptr;
      }
      default: return nullptr;
    }
  }
  return nullptr;
}

namespace {

// Visits every expression under `e` (itself included), parents first.
void walkExpr(const ast::Expr* e, const std::function<void(const ast::Expr&)>& visit) {
  if (!e) return;
  visit(*e);
  switch (e->kind) {
    case ast::ExprKind::Tuple:
      for (const auto& x : static_cast<const ast::TupleExpr*>(e)->elements) walkExpr(x.get(), visit);
      break;
    case ast::ExprKind::List:
      for (const auto& x : static_cast<const ast::ListExpr*>(e)->elements) walkExpr(x.get(), visit);
      break;
    case ast::ExprKind::Call: {
      const auto* c = static_cast<const ast::CallExpr*>(e);
      walkExpr(c->callee.get(), visit);
      for (const ast::Argument& a : c->args) walkExpr(a.value.get(), visit);
      break;
    }
    case ast::ExprKind::Attribute: walkExpr(static_cast<const ast::AttributeExpr*>(e)->base.get(), visit); break;
    case ast::ExprKind::Subscript: {
      const auto* s = static_cast<const ast::SubscriptExpr*>(e);
      walkExpr(s->base.get(), visit);
      for (const auto& x : s->indices) walkExpr(x.get(), visit);
      break;
    }
    case ast::ExprKind::Slice: {
      const auto* s = static_cast<const ast::SliceExpr*>(e);
      walkExpr(s->lower.get(), visit);
      walkExpr(s->upper.get(), visit);
      walkExpr(s->step.get(), visit);
      break;
    }
    case ast::ExprKind::Binary: {
      const auto* b = static_cast<const ast::BinaryExpr*>(e);
      walkExpr(b->lhs.get(), visit);
      walkExpr(b->rhs.get(), visit);
      break;
    }
    case ast::ExprKind::Unary: walkExpr(static_cast<const ast::UnaryExpr*>(e)->operand.get(), visit); break;
    default: break;
  }
}

void walkBlock(const ast::Block& block, const std::function<void(const ast::Expr&)>& visit) {
  for (const ast::StmtPtr& s : block) {
    switch (s->kind) {
      case ast::StmtKind::Expr: walkExpr(static_cast<const ast::ExprStmt&>(*s).expr.get(), visit); break;
      case ast::StmtKind::Assign: {
        const auto& a = static_cast<const ast::AssignStmt&>(*s);
        for (const auto& t : a.targets) walkExpr(t.get(), visit);
        walkExpr(a.value.get(), visit);
        break;
      }
      case ast::StmtKind::AugAssign: {
        const auto& a = static_cast<const ast::AugAssignStmt&>(*s);
        walkExpr(a.target.get(), visit);
        walkExpr(a.value.get(), visit);
        break;
      }
      case ast::StmtKind::For: {
        const auto& f = static_cast<const ast::ForStmt&>(*s);
        walkExpr(f.target.get(), visit);
        walkExpr(f.iter.get(), visit);
        walkBlock(f.body, visit);
        break;
      }
      case ast::StmtKind::While: {
        const auto& w = static_cast<const ast::WhileStmt&>(*s);
        walkExpr(w.cond.get(), visit);
        walkBlock(w.body, visit);
        break;
      }
      case ast::StmtKind::If: {
        const auto& i = static_cast<const ast::IfStmt&>(*s);
        walkExpr(i.cond.get(), visit);
        walkBlock(i.then, visit);
        walkBlock(i.orelse, visit);
        break;
      }
      case ast::StmtKind::Return: walkExpr(static_cast<const ast::ReturnStmt&>(*s).value.get(), visit); break;
      case ast::StmtKind::Assert: {
        const auto& a = static_cast<const ast::AssertStmt&>(*s);
        walkExpr(a.cond.get(), visit);
        walkExpr(a.message.get(), visit);
        break;
      }
      default: break;
    }
  }
}

}  // namespace

void collectCalls(const ast::Block& block, std::vector<const ast::CallExpr*>& out) {
  walkBlock(block, [&](const ast::Expr& e) {
    if (e.kind == ast::ExprKind::Call) out.push_back(static_cast<const ast::CallExpr*>(&e));
  });
}

void collectCalls(const ast::Expr* e, std::vector<const ast::CallExpr*>& out) {
  walkExpr(e, [&](const ast::Expr& x) {
    if (x.kind == ast::ExprKind::Call) out.push_back(static_cast<const ast::CallExpr*>(&x));
  });
}

void collectNames(const ast::Block& block, std::vector<const ast::NameExpr*>& out) {
  walkBlock(block, [&](const ast::Expr& e) {
    if (e.kind == ast::ExprKind::Name) out.push_back(static_cast<const ast::NameExpr*>(&e));
  });
}

void collectNames(const ast::Expr* e, std::vector<const ast::NameExpr*>& out) {
  walkExpr(e, [&](const ast::Expr& x) {
    if (x.kind == ast::ExprKind::Name) out.push_back(static_cast<const ast::NameExpr*>(&x));
  });
}

void collectLoops(const ast::Block& block, std::vector<const ast::ForStmt*>& out) {
  for (const ast::StmtPtr& s : block) {
    if (s->kind == ast::StmtKind::For) {
      const auto& f = static_cast<const ast::ForStmt&>(*s);
      out.push_back(&f);
      collectLoops(f.body, out);
    } else if (s->kind == ast::StmtKind::If) {
      const auto& i = static_cast<const ast::IfStmt&>(*s);
      collectLoops(i.then, out);
      collectLoops(i.orelse, out);
    }
  }
}

bool hasName(const ast::FunctionDef& fn, const std::string& name) {
  for (const ast::Param& p : fn.params)
    if (p.name == name) return true;
  std::vector<const ast::NameExpr*> names;
  collectNames(fn.body, names);
  for (const ast::NameExpr* n : names)
    if (n->name == name) return true;
  return false;
}

std::string freshName(const ast::FunctionDef& fn, const std::string& base) {
  if (!hasName(fn, base)) return base;
  for (int i = 2;; ++i)
    if (!hasName(fn, base + std::to_string(i))) return base + std::to_string(i);
}

std::vector<const ast::CallExpr*> dotCalls(const ast::FunctionDef& fn) {
  std::vector<const ast::CallExpr*> calls, out;
  collectCalls(fn.body, calls);
  for (const ast::CallExpr* c : calls)
    if (calleeName(*c) == "dot") out.push_back(c);
  return out;
}

std::string indentAt(const std::string& text, uint32_t offset) {
  uint32_t start = lineStartOf(text, offset);
  uint32_t end = start;
  while (end < text.size() && text[end] == ' ') ++end;
  return text.substr(start, end - start);
}

uint32_t lineStartOf(const std::string& text, uint32_t offset) {
  while (offset > 0 && text[offset - 1] != '\n') --offset;
  return offset;
}

Edit addConstParams(const ParsedKernel& p, const std::vector<std::pair<std::string, int64_t>>& params) {
  const std::string& text = *p.text;
  std::string joined;
  for (size_t i = 0; i < params.size(); ++i)
    joined += (i ? ", " : "") + params[i].first + ": const = " + std::to_string(params[i].second);
  if (p.kernel->params.empty()) {
    // `def k():` cannot have const-only kernels in practice; put them in the parens.
    uint32_t at = p.kernel->nameRange.end;
    while (at < text.size() && text[at] != '(') ++at;
    return {at + 1, at + 1, joined};
  }
  uint32_t at = p.kernel->params.back().range.end;
  // Keep lines readable: a long parameter line continues on a new one (the
  // formatter aligns it under the first parameter).
  uint32_t lineStart = lineStartOf(text, at);
  size_t lineEnd = text.find('\n', at);
  if (lineEnd == std::string::npos) lineEnd = text.size();
  bool wrap = (lineEnd - lineStart) + joined.size() + 2 > 100;
  return {at, at, (wrap ? ",\n" : ", ") + joined};
}

uint32_t blockEnd(const ast::Stmt& stmt) {
  uint32_t end = stmt.range.end;
  const ast::Block* body = nullptr;
  if (stmt.kind == ast::StmtKind::For) body = &static_cast<const ast::ForStmt&>(stmt).body;
  if (stmt.kind == ast::StmtKind::While) body = &static_cast<const ast::WhileStmt&>(stmt).body;
  if (stmt.kind == ast::StmtKind::If) {
    const auto& i = static_cast<const ast::IfStmt&>(stmt);
    body = i.orelse.empty() ? &i.then : &i.orelse;
  }
  if (body && !body->empty()) end = blockEnd(*body->back());
  return end;
}

Edit removeStatement(const ParsedKernel& p, const ast::Stmt& stmt) {
  const std::string& text = *p.text;
  uint32_t begin = lineStartOf(text, stmt.range.begin);
  size_t end = text.find('\n', blockEnd(stmt) > 0 ? blockEnd(stmt) - 1 : 0);
  end = end == std::string::npos ? text.size() : end + 1;
  return {begin, static_cast<uint32_t>(end), ""};
}

Edit setKeywordArg(const ParsedKernel& p, const ast::CallExpr& call, const std::string& keyword,
                   const std::string& valueText) {
  if (const ast::Argument* a = keywordArg(call, keyword)) return {a->value->range.begin, a->value->range.end, valueText};
  uint32_t close = call.parenRange.end > 0 ? call.parenRange.end - 1 : call.range.end - 1;
  (void)p;
  return {close, close, (call.args.empty() ? "" : ", ") + keyword + "=" + valueText};
}

}  // namespace argus::agent::detail
