// parseModule: two stages.
//
// 1. The fast path: the whole file with SLL prediction and the bail-out error
//    strategy. Files without syntax errors (nearly all of them) stop here.
// 2. Only when stage 1 fails: a recovering parse, one logical line at a time
//    (a decorator, a `def`/`for`/`while`/`if`/`elif`/`else` header, or a
//    simple statement), with full LL prediction. This driver follows the
//    block structure (NEWLINE / INDENT / DEDENT) itself, which the grammar's
//    `file_`, `funcdef` and `suite` rules describe, so an error can never
//    lose the structure of the file: each line reports at most one error,
//    the rest of the line is skipped, and the next line starts clean.
#include "frontend/parser.h"

#include <algorithm>

#include "frontend/limits.h"
#include "frontend/parser_internal.h"

namespace argus::frontend {

using antlr4::Token;

namespace {

// Thrown when a rule would nest deeper than kMaxParseDepth: ANTLR's parser is
// recursive, so a pathological statement must not reach it whole. Not a
// RecognitionException, so no generated rule catches it; each rule's exit
// action still runs while it unwinds.
struct ParseTooDeep {
  antlr4::Token* at;  // the token the too-deep rule would have started at
  antlr4::ParserRuleContext* deepest;  // the innermost rule entered, whose ancestors are the partial tree
};

// The generated parser with a depth check on every rule entry. Left-recursive
// chains (`a * b * c`, `x.y.z`) are loops in ANTLR and do not deepen the rule
// stack; brackets, calls, subscripts, unary operators and `**` do.
class DepthGuardedParser : public P {
 public:
  using P::P;
  void enterRule(antlr4::ParserRuleContext* ctx, size_t state, size_t ruleIndex) override {
    checkDepth();
    P::enterRule(ctx, state, ruleIndex);
  }
  void enterRecursionRule(antlr4::ParserRuleContext* ctx, size_t state, size_t ruleIndex, int precedence) override {
    checkDepth();
    P::enterRecursionRule(ctx, state, ruleIndex, precedence);
  }

 private:
  void checkDepth() {
    size_t depth = 0;
    for (antlr4::tree::ParseTree* c = _ctx; c; c = c->parent)
      if (++depth >= kMaxParseDepth) throw ParseTooDeep{getCurrentToken(), _ctx};
  }
};

class RecoveringDriver {
 public:
  RecoveringDriver(DepthGuardedParser& parser, antlr4::CommonTokenStream& tokens, SyntaxErrorStrategy& strategy, AstBuilder& builder,
                   const IndentingLexer& lexer, const SourceCharStream& input, const SourceFile& file,
                   DiagnosticSink& diags)
      : parser_(parser), tokens_(tokens), strategy_(strategy), builder_(builder), lexer_(lexer), input_(input),
        file_(file), diags_(diags) {}

  void run(ast::Module& module) { moduleItems(module, false); }

 private:
  size_t la(ssize_t k) { return tokens_.LA(k); }
  Token* lt(ssize_t k) { return tokens_.LT(k); }
  void consume() {
    if (la(1) != Token::EOF) tokens_.consume();
  }
  SourceRange range(const Token* t) const { return builder_.range(t); }

  // Starts parsing one logical line (a unit).
  void beginUnit();
  void finishLine() {
    if (la(1) == P::NEWLINE) consume();
  }
  // Whether the logical line starting at `firstIndex` has a lexical error (the
  // parser then stays quiet about it).
  bool lineIsDamaged(size_t firstIndex);
  // Runs one rule of the grammar for the current unit. A unit nested too deeply
  // for the parser is reported (AG1014), skipped to its end and marked failed;
  // the partial tree is returned for the (then quiet) builder.
  template <class Context>
  Context* parseUnit(Context* (P::*rule)());
  // Whether the lexer reported a problem on the line that the INDENT at LT(1) starts.
  bool indentLineDamaged() {
    const std::vector<uint32_t>& damaged = lexer_.damagedOffsets();
    auto it = std::lower_bound(damaged.begin(), damaged.end(), range(lt(1)).begin);
    return it != damaged.end() && *it <= range(lt(2)).end;
  }

  void moduleItems(ast::Module& module, bool untilDedent);
  std::unique_ptr<ast::FunctionDef> function(bool topLevel);
  void statement(ast::Block& out);
  void simpleStatement(ast::Block& out, bool afterBrokenHeader);
  ast::StmtPtr forStatement();
  ast::StmtPtr whileStatement();
  ast::StmtPtr ifStatement();
  std::unique_ptr<ast::IfStmt> ifClause(bool isElif);
  ast::StmtPtr orphanClause(const ast::Block& before, bool afterBrokenHeader);
  ast::StmtPtr nestedFunction();
  void indentedBlock(ast::Block& out);
  ast::Block suite(Token* keyword, bool headerFailed);
  // The body of a compound statement, one block deeper than the statement;
  // past kMaxBlockDepth it is reported (AG1014) and skipped.
  ast::Block nestedSuite(Token* keyword, bool headerFailed);
  void reportBlockTooDeep(Token* at, const std::string& what);
  // Skips the rest of the line and the indented block that follows it, if any.
  void skipLineAndBlock();
  // Skips from the INDENT at LT(1) to its matching DEDENT.
  void skipBlock();
  std::string indentationOf(const Token* t) const;

  DepthGuardedParser& parser_;
  antlr4::CommonTokenStream& tokens_;
  SyntaxErrorStrategy& strategy_;
  AstBuilder& builder_;
  const IndentingLexer& lexer_;
  const SourceCharStream& input_;
  const SourceFile& file_;
  DiagnosticSink& diags_;
  bool previousLineFailed_ = false;
  bool suiteWasMissing_ = false;  // the last suite() reported AG1007
  bool afterBrokenHeader_ = false;  // the last statement was a broken line ending with ':' (or its clause)
  const Token* lastLineStart_ = nullptr;
  size_t blockDepth_ = 0;  // compound statements (and elifs) around the current line
};

std::string RecoveringDriver::indentationOf(const Token* t) const {
  if (!t) return "";
  uint32_t offset = range(t).begin;
  uint32_t lineStart = file_.offsetOf(file_.lineCol(offset).line, 1);
  std::string ws(file_.slice({lineStart, offset}));
  size_t end = ws.find_first_not_of(" \t\f");
  return end == std::string::npos ? ws : ws.substr(0, end);
}

bool RecoveringDriver::lineIsDamaged(size_t firstIndex) {
  size_t i = firstIndex;
  while (i + 1 < tokens_.size() && tokens_.get(i)->getType() != P::NEWLINE) ++i;
  uint32_t begin = file_.offsetOf(file_.lineCol(range(tokens_.get(firstIndex)).begin).line, 1);
  uint32_t end = range(tokens_.get(i)).end;
  const std::vector<uint32_t>& damaged = lexer_.damagedOffsets();
  auto it = std::lower_bound(damaged.begin(), damaged.end(), begin);
  return it != damaged.end() && *it <= end;
}

void RecoveringDriver::beginUnit() {
  parser_.setState(antlr4::atn::ATNState::INVALID_STATE_NUMBER);  // a unit is parsed as if it were the start rule
  lastLineStart_ = lt(1);
  strategy_.beginUnit(lineIsDamaged(tokens_.index()));
}

template <class Context>
Context* RecoveringDriver::parseUnit(Context* (P::*rule)()) {
  try {
    return (parser_.*rule)();
  } catch (const ParseTooDeep& tooDeep) {
    Diagnostic& d = diags_.report(DiagId::NestingTooDeep, range(tooDeep.at),
                                  {"this statement", std::to_string(kMaxParseDepth) + " levels for the parser"});
    d.notes.push_back("brackets, calls, subscripts, unary operators and '**' each add a level; "
                      "split the expression into several statements with intermediate variables");
    strategy_.beginUnit(/*quiet=*/true);  // the unit failed, and it is reported
    while (!(la(1) == P::NEWLINE || la(1) == Token::EOF)) consume();
    antlr4::tree::ParseTree* root = tooDeep.deepest;
    while (root && root->parent) root = root->parent;
    return dynamic_cast<Context*>(root);
  }
}

void RecoveringDriver::moduleItems(ast::Module& module, bool untilDedent) {
  while (la(1) != Token::EOF) {
    size_t before = tokens_.index();
    switch (la(1)) {
      case P::DEDENT:
        consume();
        if (untilDedent) return;
        break;
      case P::NEWLINE:
        consume();
        break;
      case P::INDENT: {
        ast::Block ignored;
        if (!previousLineFailed_ && !indentLineDamaged()) {
          Diagnostic& d = diags_.report(DiagId::UnexpectedIndent, range(lt(1)));
          d.notes.push_back("functions and statements at the top of the file start in column 1");
          d.fixits.push_back({range(lt(1)), "", "remove the indentation"});
        }
        previousLineFailed_ = true;
        if (blockDepth_ >= kMaxBlockDepth) {
          reportBlockTooDeep(lt(2), "this indented block");
          skipBlock();
          break;
        }
        ++blockDepth_;
        consume();
        moduleItems(module, true);
        --blockDepth_;
        break;
      }
      case P::AT:
      case P::DEF:
        if (auto fn = function(/*topLevel=*/true)) module.functions.push_back(std::move(fn));
        break;
      default:
        statement(module.strayStatements);
        break;
    }
    if (tokens_.index() == before) consume();  // always make progress
  }
}

std::unique_ptr<ast::FunctionDef> RecoveringDriver::function(bool topLevel) {
  Token* first = lt(1);
  std::vector<ast::Decorator> decorators;
  while (la(1) == P::AT) {
    beginUnit();
    P::DecoratorContext* ctx = parseUnit(&P::decorator);
    builder_.setQuiet(strategy_.unitFailed());
    decorators.push_back(builder_.decorator(ctx));
    finishLine();
    previousLineFailed_ = strategy_.unitFailed();
  }
  if (la(1) != P::DEF) {
    if (!previousLineFailed_) {
      bool real = la(1) != P::DEDENT && la(1) != Token::EOF && la(1) != P::INDENT;
      Diagnostic& d = diags_.report(DiagId::DecoratorWithoutDef, real ? range(lt(1)) : decorators.back().range);
      d.labels.push_back({decorators.back().range, "decorator"});
    }
    return nullptr;
  }
  Token* keyword = lt(1);
  beginUnit();
  P::Def_headerContext* header = parseUnit(&P::def_header);
  bool failed = strategy_.unitFailed();
  builder_.setQuiet(failed);
  auto fn = std::make_unique<ast::FunctionDef>();
  fn->decorators = std::move(decorators);
  builder_.defHeader(*fn, header);
  previousLineFailed_ = failed;
  fn->body = topLevel ? suite(keyword, failed) : nestedSuite(keyword, failed);
  if (topLevel && suiteWasMissing_) {
    // `def f():` followed by unindented lines: they are its body that lost
    // its indentation (already reported), not statements at the top level.
    while (la(1) != P::AT && la(1) != P::DEF && la(1) != P::DEDENT && la(1) != Token::EOF) statement(fn->body);
  }
  fn->range = extendToBlock(joinRanges(range(first), builder_.range(header)), fn->body);
  return fn;
}

void RecoveringDriver::statement(ast::Block& out) {
  size_t before = tokens_.index();
  // `elif`/`else` (and `except`/`finally`) right after a broken line that
  // ended with ':' belong to that broken header: already reported.
  bool afterBrokenHeader = afterBrokenHeader_;
  afterBrokenHeader_ = false;
  switch (la(1)) {
    case P::FOR: out.push_back(forStatement()); break;
    case P::WHILE: out.push_back(whileStatement()); break;
    case P::IF: out.push_back(ifStatement()); break;
    case P::ELIF: case P::ELSE: out.push_back(orphanClause(out, afterBrokenHeader)); break;
    case P::DEF: case P::AT: out.push_back(nestedFunction()); break;
    case P::INDENT: indentedBlock(out); break;
    case P::NEWLINE: case P::DEDENT: consume(); break;
    default: simpleStatement(out, afterBrokenHeader); break;
  }
  if (tokens_.index() == before) consume();
}

void RecoveringDriver::simpleStatement(ast::Block& out, bool afterBrokenHeader) {
  Token* first = lt(1);
  std::string word = first->getType() == P::RESERVED ? first->getText() : "";
  // `except:` / `finally:` after a reported `try:`: the same mistake.
  bool sameMistake = afterBrokenHeader && (word == "except" || word == "finally");
  beginUnit();
  if (sameMistake) strategy_.beginUnit(true);
  P::Simple_stmtContext* ctx = parseUnit(&P::simple_stmt);
  bool failed = strategy_.unitFailed();
  builder_.setQuiet(failed);
  ast::StmtPtr stmt = builder_.simpleStmt(ctx);
  finishLine();
  bool endedWithColon = false;
  if (failed && lt(-1) && lt(-1)->getType() == P::NEWLINE && lt(-2)) {
    // A broken statement spans its whole line, whatever part of it was understood.
    stmt->range = joinRanges(stmt->range, range(lt(-2)));
    endedWithColon = lt(-2)->getType() == P::COLON;
  }
  out.push_back(std::move(stmt));
  previousLineFailed_ = failed;
  // A broken line that ended with ':' (`with x as y:`) may have a block: it
  // is spliced in silently, its own lines checked as usual.
  if (failed && la(1) == P::INDENT) indentedBlock(out);
  afterBrokenHeader_ = failed && endedWithColon;
}

ast::StmtPtr RecoveringDriver::forStatement() {
  Token* keyword = lt(1);
  beginUnit();
  P::For_headerContext* header = parseUnit(&P::for_header);
  bool failed = strategy_.unitFailed();
  builder_.setQuiet(failed);
  auto node = std::make_unique<ast::ForStmt>(builder_.range(header));
  builder_.forHeader(*node, header);
  previousLineFailed_ = failed;
  node->body = nestedSuite(keyword, failed);
  node->range = extendToBlock(node->range, node->body);
  return node;
}

ast::StmtPtr RecoveringDriver::whileStatement() {
  Token* keyword = lt(1);
  beginUnit();
  P::While_headerContext* header = parseUnit(&P::while_header);
  bool failed = strategy_.unitFailed();
  builder_.setQuiet(failed);
  auto node = std::make_unique<ast::WhileStmt>(builder_.range(header));
  node->cond = builder_.headerCondition(header->expr(), keyword);
  previousLineFailed_ = failed;
  node->body = nestedSuite(keyword, failed);
  node->range = extendToBlock(node->range, node->body);
  return node;
}

// An `if` with its `elif`s and `else`, as nested IfStmts (each `elif` in the
// `orelse` of the clause before it), built in a loop: a chain of any length
// costs no stack here. Each `elif` is a block inside the clause before it, so
// it counts against kMaxBlockDepth like any nested block.
ast::StmtPtr RecoveringDriver::ifStatement() {
  std::unique_ptr<ast::IfStmt> top = ifClause(false);
  std::vector<ast::IfStmt*> chain{top.get()};
  size_t depthBefore = blockDepth_;
  while (la(1) == P::ELIF) {
    if (blockDepth_ + 1 >= kMaxBlockDepth) {  // the elif's body would cross the limit
      reportBlockTooDeep(lt(1), "this 'elif'");
      while (la(1) == P::ELIF || la(1) == P::ELSE) skipLineAndBlock();
      break;
    }
    ++blockDepth_;
    std::unique_ptr<ast::IfStmt> elif = ifClause(true);
    ast::IfStmt* raw = elif.get();
    chain.back()->orelse.push_back(std::move(elif));
    chain.push_back(raw);
  }
  if (la(1) == P::ELSE) {
    Token* elseKeyword = lt(1);
    beginUnit();
    parseUnit(&P::else_header);
    bool elseFailed = strategy_.unitFailed();
    previousLineFailed_ = elseFailed;
    chain.back()->orelse = nestedSuite(elseKeyword, elseFailed);
  }
  blockDepth_ = depthBefore;
  // Each clause spans to the end of the whole chain after it.
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    (*it)->range = extendToBlock(extendToBlock((*it)->range, (*it)->then), (*it)->orelse);
  return top;
}

std::unique_ptr<ast::IfStmt> RecoveringDriver::ifClause(bool isElif) {
  Token* keyword = lt(1);
  beginUnit();
  antlr4::ParserRuleContext* header = nullptr;
  P::ExprContext* cond = nullptr;
  if (isElif) {
    P::Elif_headerContext* h = parseUnit(&P::elif_header);
    header = h;
    cond = h ? h->expr() : nullptr;
  } else {
    P::If_headerContext* h = parseUnit(&P::if_header);
    header = h;
    cond = h ? h->expr() : nullptr;
  }
  bool failed = strategy_.unitFailed();
  builder_.setQuiet(failed);
  auto node = std::make_unique<ast::IfStmt>(builder_.range(header));
  node->isElif = isElif;
  node->cond = builder_.headerCondition(cond, keyword);
  previousLineFailed_ = failed;
  node->then = nestedSuite(keyword, failed);
  return node;
}

ast::StmtPtr RecoveringDriver::orphanClause(const ast::Block& before, bool afterBrokenHeader) {
  Token* keyword = lt(1);
  std::string word = keyword->getText();
  bool afterLoop = !before.empty() && (before.back()->kind == ast::StmtKind::For || before.back()->kind == ast::StmtKind::While);
  if (afterBrokenHeader) {
    // The clause of a header that was already reported (`try:`, a broken `if`).
  } else if (word == "else" && afterLoop) {
    Diagnostic& d = diags_.report(DiagId::UnsupportedSyntax, range(keyword), {"'else' after a loop"});
    d.notes.push_back("use a flag variable set inside the loop, then test it with 'if'");
  } else {
    Diagnostic& d = diags_.report(DiagId::ClauseWithoutIf, range(keyword), {word});
    d.notes.push_back("'elif' and 'else' follow the block of an 'if', at the same indentation as the 'if'");
  }
  beginUnit();
  strategy_.beginUnit(true);  // already reported
  if (word == "elif") parseUnit(&P::elif_header);
  else parseUnit(&P::else_header);
  previousLineFailed_ = true;
  ast::Block body = suite(keyword, true);
  afterBrokenHeader_ = true;  // a following `else` belongs to the same broken chain
  return std::make_unique<ast::ErrorStmt>(extendToBlock(range(keyword), body));
}

ast::StmtPtr RecoveringDriver::nestedFunction() {
  Token* first = lt(1);
  size_t errorsBefore = diags_.diagnostics().size();
  std::unique_ptr<ast::FunctionDef> fn = function(/*topLevel=*/false);
  SourceRange where = fn ? (fn->nameRange.empty() ? range(first) : fn->nameRange) : range(first);
  Diagnostic d;
  d.id = DiagId::UnsupportedSyntax;
  d.severity = diagInfo(d.id).severity;
  d.range = where;
  d.arguments = {"a function defined inside another function"};
  d.message = formatDiagMessage(d.id, d.arguments);
  d.notes.push_back("move it to the top level of the file and mark it '@device'; a @device function is inlined where it is called");
  // Report it before whatever the nested function's own lines reported.
  auto& all = diags_.diagnostics();
  all.insert(all.begin() + static_cast<std::ptrdiff_t>(errorsBefore), std::move(d));
  return std::make_unique<ast::ErrorStmt>(fn ? fn->range : range(first));
}

void RecoveringDriver::indentedBlock(ast::Block& out) {
  Token* indent = lt(1);
  if (!previousLineFailed_ && !indentLineDamaged()) {
    Diagnostic& d = diags_.report(DiagId::UnexpectedIndent, range(indent));
    d.notes.push_back("only the lines after a header that ends with ':' are indented deeper");
    d.fixits.push_back({range(indent), indentationOf(lastLineStart_), "indent like the line before"});
  }
  previousLineFailed_ = true;
  if (blockDepth_ >= kMaxBlockDepth) {
    reportBlockTooDeep(lt(2), "this indented block");
    skipBlock();
    return;
  }
  ++blockDepth_;
  consume();
  while (la(1) != P::DEDENT && la(1) != Token::EOF) statement(out);
  if (la(1) == P::DEDENT) consume();
  --blockDepth_;
}

ast::Block RecoveringDriver::nestedSuite(Token* keyword, bool headerFailed) {
  if (blockDepth_ >= kMaxBlockDepth) {
    reportBlockTooDeep(keyword, "the body of this '" + keyword->getText() + "'");
    skipLineAndBlock();
    return {};
  }
  ++blockDepth_;
  ast::Block block = suite(keyword, headerFailed);
  --blockDepth_;
  return block;
}

void RecoveringDriver::reportBlockTooDeep(Token* at, const std::string& what) {
  Diagnostic& d = diags_.report(DiagId::NestingTooDeep, range(at), {what, std::to_string(kMaxBlockDepth) + " nested blocks"});
  d.notes.push_back("each 'if', 'elif', 'else', 'for' and 'while' body is a block inside the one around it; "
                    "move the inner part into a @device function, or join conditions with 'and'");
  previousLineFailed_ = true;
}

void RecoveringDriver::skipLineAndBlock() {
  while (la(1) != P::NEWLINE && la(1) != P::INDENT && la(1) != P::DEDENT && la(1) != Token::EOF) consume();
  if (la(1) == P::NEWLINE) consume();
  if (la(1) == P::INDENT) skipBlock();
}

void RecoveringDriver::skipBlock() {
  // From an INDENT to its matching DEDENT, counting, not recursing.
  size_t open = 0;
  do {
    if (la(1) == P::INDENT) ++open;
    else if (la(1) == P::DEDENT) --open;
    consume();
  } while (open > 0 && la(1) != Token::EOF);
}

ast::Block RecoveringDriver::suite(Token* keyword, bool headerFailed) {
  ast::Block block;
  suiteWasMissing_ = false;
  if (la(1) == P::NEWLINE && la(2) == P::INDENT) {
    consume();
    consume();
    previousLineFailed_ = false;  // the header's problem is not the block's
    while (la(1) != P::DEDENT && la(1) != Token::EOF) statement(block);
    if (la(1) == P::DEDENT) consume();
    return block;
  }
  if (la(1) == P::NEWLINE) {
    if (!headerFailed) {
      std::string word = keyword->getText();
      Token* next = lt(2);
      bool nextIsReal = next->getType() != P::DEDENT && next->getType() != Token::EOF;
      SourceRange at = nextIsReal ? range(next) : builder_.after(lt(-1));
      Diagnostic& d = diags_.report(DiagId::ExpectedIndentedBlock, at, {word});
      d.labels.push_back({range(keyword), "the '" + word + "' header"});
      d.notes.push_back("indent the body under the header, or write 'pass' for an empty body");
      std::string indent = indentationOf(keyword) + "    ";
      d.fixits.push_back({builder_.after(lt(-1)), "\n" + indent + "pass", "add an empty body ('pass')"});
      previousLineFailed_ = true;
      suiteWasMissing_ = true;
    }
    consume();
    return block;
  }
  // The body on the header's line: `if x: pass`.
  if (la(1) != P::DEDENT && la(1) != Token::EOF) simpleStatement(block, false);
  return block;
}

// Whether no block of the fast path's tree is nested deeper than
// kMaxBlockDepth (each `elif` counting as a block inside the clause before
// it, as in the AST). When one is, the recovering stage reports it. An
// explicit stack: statements can only be found under statements, so
// expressions are never entered.
bool blocksFitDepthLimit(P::File_Context* tree) {
  std::vector<std::pair<antlr4::tree::ParseTree*, size_t>> work{{tree, 0}};
  while (!work.empty()) {
    auto [node, depth] = work.back();
    work.pop_back();
    if (depth > kMaxBlockDepth) return false;
    if (dynamic_cast<P::ExprContext*>(node) || dynamic_cast<P::Simple_stmtContext*>(node)) continue;
    bool compound = dynamic_cast<P::For_stmtContext*>(node) || dynamic_cast<P::While_stmtContext*>(node) ||
                    dynamic_cast<P::If_stmtContext*>(node) || dynamic_cast<P::Elif_clauseContext*>(node) ||
                    dynamic_cast<P::Else_clauseContext*>(node);
    size_t elifs = 0;  // clauses of an if chain are nested one level per elif
    for (antlr4::tree::ParseTree* child : node->children) {
      if (dynamic_cast<P::Elif_clauseContext*>(child)) ++elifs;
      size_t childDepth = depth + elifs;
      if (compound && dynamic_cast<P::SuiteContext*>(child)) ++childDepth;
      work.push_back({child, childDepth});
    }
  }
  return true;
}

// Marks each function that contains an error reported during this parse.
void markFunctionsWithErrors(ast::Module& module, const DiagnosticSink& diags, size_t firstNew) {
  const std::vector<Diagnostic>& all = diags.diagnostics();
  for (const std::unique_ptr<ast::FunctionDef>& fn : module.functions) {
    for (size_t i = firstNew; i < all.size() && !fn->hasSyntaxErrors; ++i)
      fn->hasSyntaxErrors = all[i].severity == Severity::Error && all[i].range.begin >= fn->range.begin &&
                            all[i].range.begin <= fn->range.end;
  }
}

}  // namespace

std::unique_ptr<ast::Module> parse(const SourceFile& file, DiagnosticSink& diags, bool forceRecovery) {
  auto module = std::make_unique<ast::Module>();
  size_t firstNew = diags.diagnostics().size();
  try {
    SourceCharStream input(file.text());
    IndentingLexer lexer(input, file, diags);
    antlr4::CommonTokenStream tokens(&lexer);
    tokens.fill();
    DepthGuardedParser parser(&tokens);
    parser.removeErrorListeners();
    AstBuilder builder(file, input, diags);

    // Stage 1: SLL, bail out at the first error.
    P::File_Context* tree = nullptr;
    if (!forceRecovery) {
      parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
      parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
      try {
        tree = parser.file_();
      } catch (const antlr4::ParseCancellationException&) {
        tree = nullptr;
      } catch (const antlr4::RecognitionException&) {
        tree = nullptr;
      } catch (const ParseTooDeep&) {
        tree = nullptr;  // stage 2 finds the statement and reports it
      }
    }
    if (tree && blocksFitDepthLimit(tree)) {
      builder.file(tree, *module);
    } else {
      // Stage 2: LL with error reporting and line-by-line recovery.
      parser.reset();
      auto strategy = std::make_shared<SyntaxErrorStrategy>(file, input, diags);
      parser.setErrorHandler(strategy);
      parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::LL);
      RecoveringDriver(parser, tokens, *strategy, builder, lexer, input, file, diags).run(*module);
    }
    module->exprCount = builder.exprCount();
  } catch (const std::exception& e) {
    uint32_t end = static_cast<uint32_t>(file.text().size());
    diags.report(DiagId::InternalSyntaxError, {end, end}, {"parser", e.what()});
  }
  markFunctionsWithErrors(*module, diags, firstNew);
  return module;
}

}  // namespace argus::frontend

namespace argus {

std::unique_ptr<ast::Module> parseModule(const SourceFile& file, DiagnosticSink& diags) {
  return frontend::parse(file, diags, /*forceRecovery=*/false);
}

}  // namespace argus
