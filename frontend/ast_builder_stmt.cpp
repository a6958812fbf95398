// AST building, part 2: statements, functions and whole parse trees.
#include "frontend/parser_internal.h"

namespace argus::frontend {

using antlr4::Token;

namespace {

std::optional<ast::BinaryOp> augmentedOpOf(size_t type) {
  switch (type) {
    case P::PLUS_ASSIGN: return ast::BinaryOp::Add;
    case P::MINUS_ASSIGN: return ast::BinaryOp::Sub;
    case P::STAR_ASSIGN: return ast::BinaryOp::Mul;
    case P::SLASH_ASSIGN: return ast::BinaryOp::Div;
    case P::DOUBLE_SLASH_ASSIGN: return ast::BinaryOp::FloorDiv;
    case P::PERCENT_ASSIGN: return ast::BinaryOp::Mod;
    case P::POWER_ASSIGN: return ast::BinaryOp::Pow;
    case P::AT_ASSIGN: return ast::BinaryOp::MatMul;
    case P::AMP_ASSIGN: return ast::BinaryOp::BitAnd;
    case P::PIPE_ASSIGN: return ast::BinaryOp::BitOr;
    case P::CARET_ASSIGN: return ast::BinaryOp::BitXor;
    case P::SHL_ASSIGN: return ast::BinaryOp::Shl;
    case P::SHR_ASSIGN: return ast::BinaryOp::Shr;
    default: return std::nullopt;
  }
}

// How a target that cannot be assigned reads in a message.
std::string describeTarget(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::Call: return "a function call";
    case ast::ExprKind::Int: case ast::ExprKind::Float: case ast::ExprKind::Bool:
    case ast::ExprKind::String: case ast::ExprKind::None: case ast::ExprKind::Ellipsis:
      return "a literal";
    case ast::ExprKind::Binary:
      return std::string("the result of '") + ast::binaryOpSpelling(static_cast<const ast::BinaryExpr&>(e).op) + "'";
    case ast::ExprKind::Unary:
      return std::string("the result of '") + ast::unaryOpSpelling(static_cast<const ast::UnaryExpr&>(e).op) + "'";
    case ast::ExprKind::List: return "a list";
    case ast::ExprKind::Tuple: return "a tuple";
    case ast::ExprKind::Subscript: return "an element 'x[i]'";
    case ast::ExprKind::Attribute: return "an attribute 'x.a'";
    default: return "this expression";
  }
}

}  // namespace

void AstBuilder::checkTarget(const ast::Expr& target, const char* context) {
  if (quiet_) return;
  std::string where(context);
  bool loop = where == "for";
  bool augmented = where == "augmented";
  switch (target.kind) {
    case ast::ExprKind::Name:
    case ast::ExprKind::Error:
      return;
    case ast::ExprKind::Subscript:
    case ast::ExprKind::Attribute:
      if (!loop) return;
      break;
    case ast::ExprKind::Tuple:
      if (augmented) break;
      for (const ast::ExprPtr& element : static_cast<const ast::TupleExpr&>(target).elements) checkTarget(*element, context);
      return;
    default:
      break;
  }
  Diagnostic& d = diags_.report(DiagId::InvalidAssignTarget, target.range, {describeTarget(target)});
  if (loop) {
    d.notes.push_back("the variable after 'for' must be a name (or a tuple of names), as in 'for i in range(n):'");
  } else if (augmented) {
    d.notes.push_back("an augmented assignment ('+=' ...) updates one name, element 'x[i]' or attribute 'x.a'");
  } else {
    d.notes.push_back("the left side of '=' must be a name, a tuple of names, an element 'x[i]' or an attribute 'x.a'");
    if (target.kind == ast::ExprKind::Call)
      d.notes.push_back("to store into a tensor, assign to a view: 'C.tile((BM, BN))[i, j] = value'");
  }
}

// ---------------------------------------------------------------- simple statements

ast::StmtPtr AstBuilder::simpleStmt(P::Simple_stmtContext* ctx) {
  P::Small_stmtContext* small = ctx ? childRule<P::Small_stmtContext>(ctx, P::RuleSmall_stmt) : nullptr;
  if (!small || small->children.empty()) return std::make_unique<ast::ErrorStmt>(range(ctx));
  SourceRange r = range(small);

  if (exactly<P::PassStmtContext>(small)) return std::make_unique<ast::SimpleStmt>(ast::StmtKind::Pass, r);
  if (exactly<P::BreakStmtContext>(small)) return std::make_unique<ast::SimpleStmt>(ast::StmtKind::Break, r);
  if (exactly<P::ContinueStmtContext>(small)) return std::make_unique<ast::SimpleStmt>(ast::StmtKind::Continue, r);
  if (auto* ret = exactly<P::ReturnStmtContext>(small)) {
    auto stmt = std::make_unique<ast::ReturnStmt>(r);
    if (ret->exprlist()) stmt->value = exprList(ret->exprlist(), after(ret->RETURN()->getSymbol()));
    return stmt;
  }
  if (auto* assertCtx = exactly<P::AssertStmtContext>(small)) {
    auto stmt = std::make_unique<ast::AssertStmt>(r);
    stmt->cond = expr(assertCtx->cond, after(assertCtx->ASSERT()->getSymbol()));
    if (assertCtx->COMMA()) stmt->message = expr(assertCtx->msg, after(assertCtx->COMMA()->getSymbol()));
    return stmt;
  }
  if (auto* exprCtx = exactly<P::ExprStmtContext>(small)) return exprStmt(exprCtx, r);
  return std::make_unique<ast::ErrorStmt>(r);
}

ast::StmtPtr AstBuilder::exprStmt(P::ExprStmtContext* ctx, SourceRange r) {
  std::vector<P::ExprlistContext*> lists = childRules<P::ExprlistContext>(ctx, P::RuleExprlist);
  SourceRange end{r.end, r.end};
  if (lists.empty()) return std::make_unique<ast::ErrorStmt>(r);

  if (ctx->COLON()) {  // `x: f32 = value`
    auto stmt = std::make_unique<ast::AssignStmt>(r);
    ast::ExprPtr target = exprList(lists[0], r);
    if (!quiet_ && target->kind != ast::ExprKind::Name && target->kind != ast::ExprKind::Error) {
      Diagnostic& d = diags_.report(DiagId::AnnotatedNonName, target->range);
      d.notes.push_back("annotate one name at a time: 'x: f32 = value'");
    }
    stmt->targets.push_back(std::move(target));
    stmt->annotation = expr(ctx->ann, after(ctx->COLON()->getSymbol()));
    if (lists.size() > 1) {
      stmt->value = exprList(lists[1], after(ctx->ASSIGN(0)->getSymbol()));
    } else {
      stmt->value = errorExpr(end);
      if (!quiet_ && !ctx->ASSIGN(0)) {
        Diagnostic& d = diags_.report(DiagId::AnnotationWithoutValue, r);
        d.notes.push_back("give it its first value here: '" + std::string(file_.slice(r)) + " = ...'");
      }
    }
    return stmt;
  }

  if (P::AugopContext* augop = ctx->augop()) {  // `x += value`
    auto stmt = std::make_unique<ast::AugAssignStmt>(r);
    stmt->op = augmentedOpOf(augop->getStart()->getType()).value_or(ast::BinaryOp::Add);
    stmt->opRange = range(augop);
    stmt->target = exprList(lists[0], r);
    checkTarget(*stmt->target, "augmented");
    stmt->value = lists.size() > 1 ? exprList(lists[1], after(augop->getStart())) : errorExpr(after(augop->getStart()));
    return stmt;
  }

  std::vector<antlr4::tree::TerminalNode*> equals = ctx->ASSIGN();
  if (equals.empty()) {  // an expression statement
    auto stmt = std::make_unique<ast::ExprStmt>(r);
    stmt->expr = exprList(lists[0], r);
    return stmt;
  }
  // `a = b = value`: every list but the last is a target.
  auto stmt = std::make_unique<ast::AssignStmt>(r);
  size_t targets = std::min(lists.size(), equals.size());
  for (size_t i = 0; i < targets; ++i) {
    stmt->targets.push_back(exprList(lists[i], r));
    checkTarget(*stmt->targets.back(), "assign");
  }
  stmt->value = lists.size() > equals.size() ? exprList(lists.back(), after(equals.back()->getSymbol()))
                                              : errorExpr(after(equals.back()->getSymbol()));
  return stmt;
}

// ---------------------------------------------------------------- headers

ast::Decorator AstBuilder::decorator(P::DecoratorContext* ctx) {
  ast::Decorator d;
  d.range = range(ctx);
  if (P::Dotted_nameContext* name = ctx->dotted_name()) {
    for (antlr4::tree::TerminalNode* part : name->NAME()) d.name += (d.name.empty() ? "" : ".") + part->getText();
    d.nameRange = range(name);
  }
  if (ctx->open) d.args = arguments(ctx->arglist());
  return d;
}

void AstBuilder::defHeader(ast::FunctionDef& fn, P::Def_headerContext* ctx) {
  if (!ctx) return;
  if (ctx->NAME()) {
    fn.name = ctx->NAME()->getText();
    fn.nameRange = range(ctx->NAME()->getSymbol());
  }
  if (P::ParamsContext* params = ctx->params()) {
    for (P::ParamContext* p : params->param()) {
      if (!p->NAME()) continue;
      ast::Param param;
      param.name = p->NAME()->getText();
      param.nameRange = range(p->NAME()->getSymbol());
      param.range = range(p);
      if (p->COLON()) param.annotation = expr(p->ann, after(p->COLON()->getSymbol()));
      if (p->ASSIGN()) param.defaultValue = expr(p->dflt, after(p->ASSIGN()->getSymbol()));
      fn.params.push_back(std::move(param));
    }
  }
  if (ctx->ARROW()) fn.returnAnnotation = expr(ctx->ret, after(ctx->ARROW()->getSymbol()));
}

void AstBuilder::forHeader(ast::ForStmt& stmt, P::For_headerContext* ctx) {
  SourceRange keyword = ctx->FOR() ? range(ctx->FOR()->getSymbol()) : range(ctx->getStart());
  stmt.target = exprList(ctx->target, {keyword.end, keyword.end});
  checkTarget(*stmt.target, "for");
  SourceRange in = ctx->IN() ? after(ctx->IN()->getSymbol()) : SourceRange{stmt.target->range.end, stmt.target->range.end};
  stmt.iter = exprList(ctx->iter, in);
}

ast::ExprPtr AstBuilder::headerCondition(P::ExprContext* cond, Token* keyword) { return expr(cond, after(keyword)); }

// ---------------------------------------------------------------- whole trees

void AstBuilder::file(P::File_Context* ctx, ast::Module& module) {
  for (antlr4::tree::ParseTree* child : ctx->children) {
    if (auto* fn = exactly<P::FuncdefContext>(child)) module.functions.push_back(funcdef(fn));
    else if (auto* s = exactly<P::StmtContext>(child)) module.strayStatements.push_back(stmt(s));
  }
}

std::unique_ptr<ast::FunctionDef> AstBuilder::funcdef(P::FuncdefContext* ctx) {
  auto fn = std::make_unique<ast::FunctionDef>();
  for (P::DecoratorContext* d : ctx->decorator()) fn->decorators.push_back(decorator(d));
  defHeader(*fn, ctx->def_header());
  fn->body = suite(ctx->suite());
  fn->range = extendToBlock(joinRanges(range(ctx->getStart()), range(ctx->def_header())), fn->body);
  return fn;
}

ast::Block AstBuilder::suite(P::SuiteContext* ctx) {
  ast::Block block;
  if (!ctx) return block;
  if (P::Simple_stmtContext* single = ctx->simple_stmt()) {
    block.push_back(simpleStmt(single));
    return block;
  }
  for (P::StmtContext* s : ctx->stmt()) block.push_back(stmt(s));
  return block;
}

ast::StmtPtr AstBuilder::stmt(P::StmtContext* ctx) {
  if (P::Simple_stmtContext* simple = ctx->simple_stmt()) return simpleStmt(simple);
  P::Compound_stmtContext* compound = ctx->compound_stmt();
  if (P::For_stmtContext* f = compound->for_stmt()) {
    auto node = std::make_unique<ast::ForStmt>(range(f->for_header()));
    forHeader(*node, f->for_header());
    node->body = suite(f->suite());
    node->range = extendToBlock(node->range, node->body);
    return node;
  }
  if (P::While_stmtContext* w = compound->while_stmt()) {
    auto node = std::make_unique<ast::WhileStmt>(range(w->while_header()));
    node->cond = headerCondition(w->while_header()->expr(), w->while_header()->WHILE()->getSymbol());
    node->body = suite(w->suite());
    node->range = extendToBlock(node->range, node->body);
    return node;
  }
  return ifChain(compound->if_stmt());
}

ast::StmtPtr AstBuilder::ifChain(P::If_stmtContext* ctx) {
  auto top = std::make_unique<ast::IfStmt>(range(ctx->if_header()));
  top->cond = headerCondition(ctx->if_header()->expr(), ctx->if_header()->IF()->getSymbol());
  top->then = suite(ctx->suite());
  std::vector<ast::IfStmt*> chain{top.get()};
  for (P::Elif_clauseContext* clause : ctx->elif_clause()) {
    auto elif = std::make_unique<ast::IfStmt>(range(clause->elif_header()));
    elif->isElif = true;
    elif->cond = headerCondition(clause->elif_header()->expr(), clause->elif_header()->ELIF()->getSymbol());
    elif->then = suite(clause->suite());
    ast::IfStmt* raw = elif.get();
    chain.back()->orelse.push_back(std::move(elif));
    chain.push_back(raw);
  }
  if (P::Else_clauseContext* otherwise = ctx->else_clause()) chain.back()->orelse = suite(otherwise->suite());
  // Each `if`/`elif` spans to the end of the whole chain after it.
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    (*it)->range = extendToBlock(extendToBlock((*it)->range, (*it)->then), (*it)->orelse);
  }
  return top;
}

}  // namespace argus::frontend
