// AST building, part 1: ranges and expressions.
#include <algorithm>

#include "frontend/limits.h"
#include "frontend/parser_internal.h"

namespace argus::frontend {

using antlr4::Token;

namespace {

bool isLineStructure(size_t type) {
  return type == P::NEWLINE || type == P::INDENT || type == P::DEDENT || type == Token::EOF;
}

bool isComparison(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::Eq: case ast::BinaryOp::Ne: case ast::BinaryOp::Lt:
    case ast::BinaryOp::Le: case ast::BinaryOp::Gt: case ast::BinaryOp::Ge:
      return true;
    default:
      return false;
  }
}

std::optional<ast::BinaryOp> binaryOpOf(size_t type) {
  switch (type) {
    case P::PLUS: return ast::BinaryOp::Add;
    case P::MINUS: return ast::BinaryOp::Sub;
    case P::STAR: return ast::BinaryOp::Mul;
    case P::SLASH: return ast::BinaryOp::Div;
    case P::DOUBLE_SLASH: return ast::BinaryOp::FloorDiv;
    case P::PERCENT: return ast::BinaryOp::Mod;
    case P::POWER: return ast::BinaryOp::Pow;
    case P::AT: return ast::BinaryOp::MatMul;
    case P::AMP: return ast::BinaryOp::BitAnd;
    case P::PIPE: return ast::BinaryOp::BitOr;
    case P::CARET: return ast::BinaryOp::BitXor;
    case P::SHL: return ast::BinaryOp::Shl;
    case P::SHR: return ast::BinaryOp::Shr;
    case P::EQ: return ast::BinaryOp::Eq;
    case P::NE: return ast::BinaryOp::Ne;
    case P::LT: return ast::BinaryOp::Lt;
    case P::LE: return ast::BinaryOp::Le;
    case P::GT: return ast::BinaryOp::Gt;
    case P::GE: return ast::BinaryOp::Ge;
    case P::AND: return ast::BinaryOp::And;
    case P::OR: return ast::BinaryOp::Or;
    default: return std::nullopt;
  }
}

}  // namespace

// ---------------------------------------------------------------- ranges

SourceRange AstBuilder::range(const Token* token) const {
  if (!token || token->getTokenIndex() == INVALID_INDEX) return {};
  return tokenRange(input_, *token);
}

SourceRange AstBuilder::after(const Token* token) const {
  SourceRange r = range(token);
  return {r.end, r.end};
}

SourceRange AstBuilder::range(const antlr4::ParserRuleContext* constCtx) const {
  // ANTLR's accessors are not const-qualified.
  auto* ctx = const_cast<antlr4::ParserRuleContext*>(constCtx);
  if (!ctx || !ctx->getStart()) return {};
  const Token* start = ctx->getStart();
  SourceRange r = range(start);
  const Token* stop = ctx->getStop();
  if (!stop || stop->getTokenIndex() == INVALID_INDEX || stop->getTokenIndex() < start->getTokenIndex())
    return {r.begin, r.begin};  // nothing was matched
  if (isLineStructure(start->getType())) r.end = r.begin;
  // Drop line-structure tokens at the end (a simple statement's NEWLINE).
  if (!isLineStructure(stop->getType())) return {r.begin, std::max(r.end, range(stop).end)};
  // Find the last real token by walking the context's children.
  const Token* last = nullptr;
  std::vector<antlr4::tree::ParseTree*> work{ctx};
  while (!work.empty()) {
    antlr4::tree::ParseTree* node = work.back();
    work.pop_back();
    if (auto* terminal = dynamic_cast<antlr4::tree::TerminalNode*>(node)) {
      const Token* t = terminal->getSymbol();
      if (!isLineStructure(t->getType()) && t->getTokenIndex() != INVALID_INDEX &&
          (!last || t->getTokenIndex() > last->getTokenIndex()))
        last = t;
      continue;
    }
    for (antlr4::tree::ParseTree* child : node->children) work.push_back(child);
  }
  if (!last) return {r.begin, r.begin};
  return {r.begin, std::max(r.end, range(last).end)};
}

SourceRange blockRange(const ast::Block& block) {
  if (block.empty()) return {};
  return joinRanges(block.front()->range, block.back()->range);
}

// ---------------------------------------------------------------- expressions

ast::ExprPtr AstBuilder::errorExpr(SourceRange r) { return makeExpr<ast::ErrorExpr>(r); }

ast::ExprPtr AstBuilder::exprList(P::ExprlistContext* ctx, SourceRange missingAt) {
  if (!ctx) return errorExpr(missingAt);
  std::vector<P::ExprContext*> items = childRules<P::ExprContext>(ctx, P::RuleExpr);
  if (items.empty()) return errorExpr(missingAt);
  if (items.size() == 1 && !hasToken(ctx, P::COMMA)) return expr(items[0], missingAt);
  auto tuple = makeExpr<ast::TupleExpr>(range(ctx));
  for (P::ExprContext* item : items) tuple->elements.push_back(expr(item, after(ctx->getStop())));
  return tuple;
}

// The parse tree of a left-associative chain (`a * b * c ...`, `x.y.y ...`) is
// as deep as the chain is long (ANTLR builds it in a loop), and every later
// stage walks the AST recursively: an expression deeper than
// kMaxExpressionDepth is reported once, on the whole outermost expression, and
// becomes an Error node; the builder never descends further.
ast::ExprPtr AstBuilder::expr(P::ExprContext* ctx, SourceRange missingAt) {
  if (exprDepth_ >= kMaxExpressionDepth) {
    exprTooDeep_ = true;
    return errorExpr(ctx ? range(ctx) : missingAt);
  }
  ++exprDepth_;
  ast::ExprPtr node = buildExpr(ctx, missingAt);
  --exprDepth_;
  if (exprDepth_ > 0 || !exprTooDeep_) return node;
  exprTooDeep_ = false;
  SourceRange whole = ctx ? joinRanges(range(ctx), node->range) : node->range;
  if (!quiet_) {
    Diagnostic& d = diags_.report(DiagId::NestingTooDeep, whole,
                                  {"this expression", std::to_string(kMaxExpressionDepth) + " levels"});
    d.notes.push_back("each operator of a chain ('a * b * c' is '(a * b) * c'), each attribute access, call, "
                      "subscript, bracket and unary operator adds a level; split it into several statements "
                      "with intermediate variables");
  }
  return errorExpr(whole);
}

ast::ExprPtr AstBuilder::buildExpr(P::ExprContext* ctx, SourceRange missingAt) {
  if (!ctx || ctx->children.empty()) return errorExpr(ctx ? range(ctx) : missingAt);
  SourceRange whole = range(ctx);

  if (ast::ExprPtr primary = atom(ctx, whole)) return primary;
  if (auto* binaryExpr = exactly<P::BinaryExprContext>(ctx)) return binary(binaryExpr, missingAt);

  if (auto* call = exactly<P::CallExprContext>(ctx)) {
    auto node = makeExpr<ast::CallExpr>(whole);
    node->callee = expr(childRule<P::ExprContext>(call, P::RuleExpr), missingAt);
    node->args = arguments(childRule<P::ArglistContext>(call, P::RuleArglist));
    SourceRange open = range(call->open);
    node->parenRange = call->close ? joinRanges(open, range(call->close)) : joinRanges(open, {whole.end, whole.end});
    node->range = joinRanges(node->callee->range, node->parenRange);
    return node;
  }
  if (auto* attribute = exactly<P::AttributeExprContext>(ctx)) {
    Token* name = childToken(attribute, P::NAME);
    if (!name) return errorExpr(whole);  // `x.` with no name
    auto node = makeExpr<ast::AttributeExpr>(whole);
    node->base = expr(childRule<P::ExprContext>(attribute, P::RuleExpr), missingAt);
    node->name = name->getText();
    node->nameRange = range(name);
    return node;
  }
  if (auto* sub = exactly<P::SubscriptExprContext>(ctx)) {
    auto node = makeExpr<ast::SubscriptExpr>(whole);
    node->base = expr(childRule<P::ExprContext>(sub, P::RuleExpr), missingAt);
    for (P::SubscriptContext* index : childRules<P::SubscriptContext>(sub, P::RuleSubscript)) node->indices.push_back(subscript(index));
    if (node->indices.empty()) node->indices.push_back(errorExpr(after(sub->open)));
    return node;
  }
  if (auto* unary = exactly<P::UnaryExprContext>(ctx)) {
    ast::UnaryOp op = ast::UnaryOp::Neg;
    switch (unary->op->getType()) {
      case P::PLUS: op = ast::UnaryOp::Pos; break;
      case P::TILDE: op = ast::UnaryOp::Invert; break;
      case P::NOT: op = ast::UnaryOp::Not; break;
      default: break;
    }
    auto node = makeExpr<ast::UnaryExpr>(whole, op);
    node->operand = expr(childRule<P::ExprContext>(unary, P::RuleExpr), after(unary->op));
    node->range = joinRanges(whole, node->operand->range);
    return node;
  }
  return errorExpr(whole);
}

ast::ExprPtr AstBuilder::binary(P::BinaryExprContext* ctx, SourceRange missingAt) {
  std::optional<ast::BinaryOp> op = ctx->op ? binaryOpOf(ctx->op->getType()) : std::nullopt;
  if (!op) return errorExpr(range(ctx));
  auto node = makeExpr<ast::BinaryExpr>(range(ctx), *op);
  node->opRange = range(ctx->op);
  node->lhs = expr(childRule<P::ExprContext>(ctx, P::RuleExpr, 0), missingAt);
  node->rhs = expr(childRule<P::ExprContext>(ctx, P::RuleExpr, 1), after(ctx->op));
  // The tokens' range: `a * (b + c)` ends at the ')' that the rhs's range leaves out.
  node->range = joinRanges(node->range, joinRanges(node->lhs->range, joinRanges(node->opRange, node->rhs->range)));
  if (!quiet_ && !exprTooDeep_ && isComparison(*op)) checkComparisonChain(ctx, *node);
  return node;
}

// `a < b < c` means `a < b and b < c` in Python; Argus has no such chains,
// and reading it as `(a < b) < c` would silently change its meaning. Reported
// once, on the whole chain (at its outermost comparison).
void AstBuilder::checkComparisonChain(P::BinaryExprContext* ctx, const ast::BinaryExpr& node) {
  auto comparisonOf = [](antlr4::tree::ParseTree* tree) -> P::BinaryExprContext* {
    auto* b = exactly<P::BinaryExprContext>(tree);
    std::optional<ast::BinaryOp> op = b && b->op ? binaryOpOf(b->op->getType()) : std::nullopt;
    return op && isComparison(*op) ? b : nullptr;
  };
  if (!comparisonOf(childRule<P::ExprContext>(ctx, P::RuleExpr, 0))) return;
  P::BinaryExprContext* parent = comparisonOf(ctx->parent);
  if (parent && childRule<P::ExprContext>(parent, P::RuleExpr, 0) == ctx) return;
  // Operands and operators from left to right.
  std::vector<const ast::Expr*> operands;
  std::vector<ast::BinaryOp> ops;
  const ast::Expr* e = &node;
  while (e->kind == ast::ExprKind::Binary && isComparison(static_cast<const ast::BinaryExpr*>(e)->op)) {
    const auto* b = static_cast<const ast::BinaryExpr*>(e);
    operands.insert(operands.begin(), b->rhs.get());
    ops.insert(ops.begin(), b->op);
    e = b->lhs.get();
  }
  operands.insert(operands.begin(), e);
  std::string rewrite;
  for (size_t i = 0; i < ops.size(); ++i)
    rewrite += (i ? " and " : "") + std::string(file_.slice(operands[i]->range)) + " " + ast::binaryOpSpelling(ops[i]) + " " +
               std::string(file_.slice(operands[i + 1]->range));
  Diagnostic& d = diags_.report(DiagId::UnsupportedSyntax, node.range, {"a chained comparison"});
  d.notes.push_back("write it as comparisons joined by 'and': '" + rewrite + "'");
  d.fixits.push_back({node.range, rewrite, "compare pairwise, joined by 'and'"});
}

// Literals, names, parenthesized expressions and lists; null for other forms.
ast::ExprPtr AstBuilder::atom(P::ExprContext* ctx, SourceRange r) {
  if (exactly<P::NameExprContext>(ctx)) return makeExpr<ast::NameExpr>(r, std::string(file_.slice(r)));
  if (exactly<P::IntExprContext>(ctx)) return makeExpr<ast::IntExpr>(r, decodeInt(file_.slice(r)).value_or(0));
  if (exactly<P::FloatExprContext>(ctx)) return makeExpr<ast::FloatExpr>(r, decodeFloat(file_.slice(r)).value_or(0.0));
  if (exactly<P::StringExprContext>(ctx)) return makeExpr<ast::StringExpr>(r, decodeString(file_.slice(r)));
  if (exactly<P::TrueExprContext>(ctx)) return makeExpr<ast::BoolExpr>(r, true);
  if (exactly<P::FalseExprContext>(ctx)) return makeExpr<ast::BoolExpr>(r, false);
  if (exactly<P::NoneExprContext>(ctx)) return makeExpr<ast::NoneExpr>(r);
  if (exactly<P::EllipsisExprContext>(ctx)) return makeExpr<ast::EllipsisExpr>(r);
  if (auto* paren = exactly<P::ParenExprContext>(ctx)) {
    std::vector<P::ExprContext*> items = childRules<P::ExprContext>(paren, P::RuleExpr);
    // `(e)` is just `e` (its range stays the inner one, as in Python's AST).
    if (items.size() == 1 && !hasToken(paren, P::COMMA)) return expr(items[0], after(paren->open));
    auto tuple = makeExpr<ast::TupleExpr>(r);
    for (P::ExprContext* item : items) tuple->elements.push_back(expr(item, after(paren->open)));
    return tuple;
  }
  if (auto* list = exactly<P::ListExprContext>(ctx)) {
    auto node = makeExpr<ast::ListExpr>(r);
    for (P::ExprContext* item : childRules<P::ExprContext>(list, P::RuleExpr)) node->elements.push_back(expr(item, after(list->open)));
    return node;
  }
  return nullptr;
}

ast::ExprPtr AstBuilder::subscript(P::SubscriptContext* ctx) {
  if (!ctx->c1) return expr(ctx->lower, range(ctx));
  auto slice = makeExpr<ast::SliceExpr>(range(ctx));
  if (ctx->lower) slice->lower = expr(ctx->lower, range(ctx));
  if (ctx->upper) slice->upper = expr(ctx->upper, after(ctx->c1));
  if (ctx->step) slice->step = expr(ctx->step, after(ctx->c2));
  return slice;
}

std::vector<ast::Argument> AstBuilder::arguments(P::ArglistContext* ctx) {
  std::vector<ast::Argument> args;
  if (!ctx) return args;
  bool sawKeyword = false;
  Token* keyword = nullptr;  // a `name` just before '='
  Token* equals = nullptr;
  Token* pendingName = nullptr;
  for (antlr4::tree::ParseTree* child : ctx->children) {
    if (isTerminal(child)) {
      Token* token = static_cast<antlr4::tree::TerminalNode*>(child)->getSymbol();
      if (token->getType() == P::NAME) pendingName = token;
      else if (token->getType() == P::ASSIGN && pendingName) keyword = pendingName, equals = token;
      else keyword = equals = pendingName = nullptr;  // ','
      continue;
    }
    auto* value = static_cast<P::ExprContext*>(child);
    ast::Argument arg;
    arg.range = keyword ? joinRanges(range(keyword), range(value)) : range(value);
    if (keyword) {
      arg.keyword = keyword->getText();
      arg.keywordRange = range(keyword);
      arg.value = expr(value, after(equals));
      sawKeyword = true;
    } else {
      arg.value = expr(value, arg.range);
      if (!quiet_ && sawKeyword && arg.value->kind != ast::ExprKind::Error) {
        Diagnostic& d = diags_.report(DiagId::PositionalAfterKeyword, arg.range);
        d.notes.push_back("put the positional arguments first, or name this one");
      }
    }
    args.push_back(std::move(arg));
    keyword = equals = pendingName = nullptr;
  }
  return args;
}

}  // namespace argus::frontend
