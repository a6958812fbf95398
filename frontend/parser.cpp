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

#include "frontend/parser_internal.h"

namespace argus::frontend {

using antlr4::Token;

namespace {

// Lines with more brackets and operators than this are not handed to the
// (recursive) parser: a pathological input must not exhaust the stack.
constexpr size_t kMaxNestingTokensPerLine = 500;

bool isNestingToken(size_t type) {
  switch (type) {
    case P::LPAREN: case P::LBRACK: case P::LBRACE: case P::MINUS: case P::PLUS:
    case P::TILDE: case P::NOT: case P::POWER:
      return true;
    default:
      return false;
  }
}

class RecoveringDriver {
 public:
  RecoveringDriver(P& parser, antlr4::CommonTokenStream& tokens, SyntaxErrorStrategy& strategy, AstBuilder& builder,
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
  // parser then stays quiet about it) or is too deeply nested to parse.
  bool lineIsDamaged(size_t firstIndex, bool* tooDeep);
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
  ast::StmtPtr ifStatement(bool isElif);
  ast::StmtPtr orphanClause(const ast::Block& before, bool afterBrokenHeader);
  ast::StmtPtr nestedFunction();
  void indentedBlock(ast::Block& out);
  ast::Block suite(Token* keyword, bool headerFailed);
  std::string indentationOf(const Token* t) const;

  P& parser_;
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
};

std::string RecoveringDriver::indentationOf(const Token* t) const {
  if (!t) return "";
  uint32_t offset = range(t).begin;
  uint32_t lineStart = file_.offsetOf(file_.lineCol(offset).line, 1);
  std::string ws(file_.slice({lineStart, offset}));
  size_t end = ws.find_first_not_of(" \t\f");
  return end == std::string::npos ? ws : ws.substr(0, end);
}

bool RecoveringDriver::lineIsDamaged(size_t firstIndex, bool* tooDeep) {
  size_t i = firstIndex;
  size_t nesting = 0;
  while (i + 1 < tokens_.size() && tokens_.get(i)->getType() != P::NEWLINE) {
    nesting += isNestingToken(tokens_.get(i)->getType());
    ++i;
  }
  if (nesting > kMaxNestingTokensPerLine) {
    SourceRange first = range(tokens_.get(firstIndex));
    diags_.report(DiagId::SyntaxError, first,
                  {"this statement is too deeply nested to parse (more than " + std::to_string(kMaxNestingTokensPerLine) +
                   " brackets and operators)"})
        .notes.push_back("split it into several statements");
    *tooDeep = true;
    return true;
  }
  uint32_t begin = file_.offsetOf(file_.lineCol(range(tokens_.get(firstIndex)).begin).line, 1);
  uint32_t end = range(tokens_.get(i)).end;
  const std::vector<uint32_t>& damaged = lexer_.damagedOffsets();
  auto it = std::lower_bound(damaged.begin(), damaged.end(), begin);
  return it != damaged.end() && *it <= end;
}

void RecoveringDriver::beginUnit() {
  parser_.setState(antlr4::atn::ATNState::INVALID_STATE_NUMBER);  // a unit is parsed as if it were the start rule
  lastLineStart_ = lt(1);
  bool tooDeep = false;
  strategy_.beginUnit(lineIsDamaged(tokens_.index(), &tooDeep));
  if (!tooDeep) return;
  // Never hand such a line to the recursive parser: skip it; the rule then
  // fails quietly at the NEWLINE and the builder sees an empty tree.
  while (!(la(1) == P::NEWLINE || la(1) == Token::EOF)) consume();
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
        consume();
        moduleItems(module, true);
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
    P::DecoratorContext* ctx = parser_.decorator();
    builder_.setQuiet(strategy_.unitFailed());
    decorators.push_back(builder_.decorator(ctx));
    finishLine();
    previousLineFailed_ = strategy_.unitFailed();
  }
  if (la(1) != P::DEF) {
    if (!previousLineFailed_) {
      bool real = la(1) != P::DEDENT && la(1) != Token::EOF && la(1) != P::INDENT;
      Diagnostic& d = diags_.report(DiagId::SyntaxError, real ? range(lt(1)) : decorators.back().range,
                                    {"expected a function definition ('def') after the decorator"});
      d.labels.push_back({decorators.back().range, "decorator"});
    }
    return nullptr;
  }
  Token* keyword = lt(1);
  beginUnit();
  P::Def_headerContext* header = parser_.def_header();
  bool failed = strategy_.unitFailed();
  builder_.setQuiet(failed);
  auto fn = std::make_unique<ast::FunctionDef>();
  fn->decorators = std::move(decorators);
  builder_.defHeader(*fn, header);
  previousLineFailed_ = failed;
  fn->body = suite(keyword, failed);
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
    case P::IF: out.push_back(ifStatement(false)); break;
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
  P::Simple_stmtContext* ctx = parser_.simple_stmt();
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
  P::For_headerContext* header = parser_.for_header();
  bool failed = strategy_.unitFailed();
  builder_.setQuiet(failed);
  auto node = std::make_unique<ast::ForStmt>(builder_.range(header));
  builder_.forHeader(*node, header);
  previousLineFailed_ = failed;
  node->body = suite(keyword, failed);
  node->range = extendToBlock(node->range, node->body);
  return node;
}

ast::StmtPtr RecoveringDriver::whileStatement() {
  Token* keyword = lt(1);
  beginUnit();
  P::While_headerContext* header = parser_.while_header();
  bool failed = strategy_.unitFailed();
  builder_.setQuiet(failed);
  auto node = std::make_unique<ast::WhileStmt>(builder_.range(header));
  node->cond = builder_.headerCondition(header->expr(), keyword);
  previousLineFailed_ = failed;
  node->body = suite(keyword, failed);
  node->range = extendToBlock(node->range, node->body);
  return node;
}

ast::StmtPtr RecoveringDriver::ifStatement(bool isElif) {
  Token* keyword = lt(1);
  beginUnit();
  antlr4::ParserRuleContext* header = nullptr;
  P::ExprContext* cond = nullptr;
  if (isElif) {
    P::Elif_headerContext* h = parser_.elif_header();
    header = h;
    cond = h->expr();
  } else {
    P::If_headerContext* h = parser_.if_header();
    header = h;
    cond = h->expr();
  }
  bool failed = strategy_.unitFailed();
  builder_.setQuiet(failed);
  auto node = std::make_unique<ast::IfStmt>(builder_.range(header));
  node->isElif = isElif;
  node->cond = builder_.headerCondition(cond, keyword);
  previousLineFailed_ = failed;
  node->then = suite(keyword, failed);
  if (la(1) == P::ELIF) {
    node->orelse.push_back(ifStatement(true));
  } else if (la(1) == P::ELSE) {
    Token* elseKeyword = lt(1);
    beginUnit();
    parser_.else_header();
    bool elseFailed = strategy_.unitFailed();
    previousLineFailed_ = elseFailed;
    node->orelse = suite(elseKeyword, elseFailed);
  }
  node->range = extendToBlock(extendToBlock(node->range, node->then), node->orelse);
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
    Diagnostic& d = diags_.report(DiagId::SyntaxError, range(keyword), {"'" + word + "' without a matching 'if'"});
    d.notes.push_back("'elif' and 'else' follow the block of an 'if', at the same indentation as the 'if'");
  }
  beginUnit();
  strategy_.beginUnit(true);  // already reported
  if (word == "elif") parser_.elif_header();
  else parser_.else_header();
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
  d.message = formatMessage(diagInfo(d.id).format, {"a function defined inside another function"});
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
  consume();
  while (la(1) != P::DEDENT && la(1) != Token::EOF) statement(out);
  if (la(1) == P::DEDENT) consume();
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

// Marks each function that contains an error reported during this parse.
void markFunctionsWithErrors(ast::Module& module, const DiagnosticSink& diags, size_t firstNew) {
  const std::vector<Diagnostic>& all = diags.diagnostics();
  for (const std::unique_ptr<ast::FunctionDef>& fn : module.functions) {
    for (size_t i = firstNew; i < all.size() && !fn->hasSyntaxErrors; ++i)
      fn->hasSyntaxErrors = all[i].severity == Severity::Error && all[i].range.begin >= fn->range.begin &&
                            all[i].range.begin <= fn->range.end;
  }
}

bool hasOverlyNestedLine(antlr4::CommonTokenStream& tokens) {
  size_t nesting = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    size_t type = tokens.get(i)->getType();
    if (type == P::NEWLINE) nesting = 0;
    else if (isNestingToken(type) && ++nesting > kMaxNestingTokensPerLine) return true;
  }
  return false;
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
    P parser(&tokens);
    parser.removeErrorListeners();
    AstBuilder builder(file, input, diags);

    // Stage 1: SLL, bail out at the first error.
    P::File_Context* tree = nullptr;
    if (!forceRecovery && !hasOverlyNestedLine(tokens)) {
      parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
      parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
      try {
        tree = parser.file_();
      } catch (const antlr4::ParseCancellationException&) {
        tree = nullptr;
      } catch (const antlr4::RecognitionException&) {
        tree = nullptr;
      }
    }
    if (tree) {
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
    diags.report(DiagId::SyntaxError, {end, end}, {std::string("internal parser error: ") + e.what()});
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
