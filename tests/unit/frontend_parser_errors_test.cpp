// The parser on broken input: each syntax diagnostic with its code, range and
// message; exactly one diagnostic per mistake (no cascades); several mistakes
// all reported with the rest of the tree intact; random mutations never crash;
// a 5,000-line file parses quickly.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <set>

#include "frontend/lexer.h"
#include "frontend/parser_internal.h"
#include "frontend_parser_test_util.h"
#include "test_sources.h"

namespace argus {
namespace {

using testing::Parsed;
using testing::parseText;

struct Case {
  const char* source;
  const char* code;
  const char* range;
  const char* message;
};

// One mistake each: exactly one diagnostic, at the right place, in words.
const Case kCases[] = {
    {"def f(x):\n    for i in range(10)\n        x = i\n", "AG1016", "2:23-2:23", "expected ':' at the end of the 'for' header"},
    {"def f(x)\n    return x\n", "AG1016", "1:9-1:9", "expected ':' at the end of the 'def' header"},
    {"def f(x):\n    if x == 1\n        return x\n", "AG1016", "2:14-2:14", "expected ':' at the end of the 'if' header"},
    {"def f(x):\n    while x\n        x = x - 1\n", "AG1016", "2:12-2:12", "expected ':' at the end of the 'while' header"},
    {"def f(x):\n    if x:\n        pass\n    else\n        pass\n", "AG1016", "4:9-4:9", "expected ':' at the end of the 'else' header"},
    {"def f(x):\n    y = x +\n    return y\n", "AG1017", "2:12-2:12", "expected an expression after '+', found the end of the line"},
    {"def f(x):\n    y = x * (1 + )\n", "AG1017", "2:18-2:19", "expected an expression after '+', found ')'"},
    {"def f(x):\n    x = )\n", "AG1017", "2:9-2:10", "expected an expression after '=', found ')'"},
    {"def f(x):\n    assert\n", "AG1017", "2:11-2:11", "expected an expression after 'assert', found the end of the line"},
    {"def f(x):\n    return f(x y)\n", "AG1005", "2:16-2:17", "expected ',' or ')' after the argument, found name 'y'"},
    {"def f(x):\n    return x[1 2]\n", "AG1005", "2:16-2:17", "expected ',' or ']' after the index, found number 2"},
    {"def f(x):\n    y = 1 2\n", "AG1005", "2:11-2:12", "expected the end of the statement after '1', found number 2"},
    {"def f(x, 1):\n    pass\n", "AG1005", "1:10-1:11", "expected ',' or ')' after the parameter, found number 1"},
    {"def f(*args):\n    pass\n", "AG1005", "1:7-1:8", "expected a parameter or ')' after '(', found '*'"},
    {"def (x):\n    pass\n", "AG1005", "1:5-1:6", "expected the function name after 'def', found '('"},
    {"def f(x):\n    for in range(3):\n        pass\n", "AG1005", "2:9-2:11", "expected a loop variable after 'for', found 'in'"},
    {"def f(x):\n    for i range(3):\n        pass\n", "AG1005", "2:11-2:16", "expected 'in' after the loop variable, found name 'range'"},
    {"def f(x):\n    y = x.\n", "AG1005", "2:11-2:11", "expected an attribute name after '.', found the end of the line"},
    {"def f(x):\n    x = 1)\n", "AG1018", "2:10-2:11", "unexpected ')' with no matching opening bracket"},
    {"def f(x):\n    x = f(a=1, 2)\n", "AG1023", "2:16-2:17", "a positional argument cannot follow a keyword argument"},
    {"def f(x):\n    y: f32\n", "AG1025", "2:5-2:11", "a variable declared with a type needs a value"},
    {"def f(x):\n    a, b: f32 = 1, 2\n", "AG1024", "2:5-2:9", "only a variable name can have a type annotation"},
    {"def f(x):\n    x = = 1\n", "AG1022", "2:7-2:10", "'= =' is not an operator; to compare, write '=='"},
    {"def f(x):\n    if x:\n        pass\n    else if x:\n        pass\n", "AG1021", "4:5-4:12",
     "expected ':' after 'else'; write 'elif' for 'else if'"},
    {"def f(x):\n    elif x:\n        pass\n", "AG1020", "2:5-2:9", "'elif' without a matching 'if'"},
    // Blocks and indentation.
    {"def f(x):\n    if x:\n    return 1\n", "AG1007", "3:5-3:11", "expected an indented block after 'if'"},
    {"def k():\nreturn 1\n", "AG1007", "2:1-2:7", "expected an indented block after 'def'"},
    {"def f(x):\n    a = 1\n        b = 2\n        c = 3\n    return a\n", "AG1006", "3:1-3:9", "unexpected indent"},
    {"  x = 1\n", "AG1006", "1:1-1:3", "unexpected indent"},
    // Python that Argus does not have.
    {"import numpy as np\n", "AG1010", "1:1-1:7", "'import' is not part of the Argus language"},
    {"def f(x):\n    y = x is None\n", "AG1010", "2:11-2:13", "'is' is not part of the Argus language"},
    {"def f(x):\n    class Foo:\n        pass\n", "AG1010", "2:5-2:10", "'class' is not part of the Argus language"},
    {"def f(x):\n    with g(x) as h:\n        y = h\n", "AG1010", "2:5-2:9", "'with' is not part of the Argus language"},
    {"def f(x):\n    try:\n        x = 1\n    except:\n        pass\n    finally:\n        pass\n", "AG1010", "2:5-2:8",
     "'try' is not part of the Argus language"},
    {"def f(x):\n    return lambda q: q\n", "AG1010", "2:12-2:18", "'lambda' is not part of the Argus language"},
    {"def f(x):\n    yield x\n", "AG1010", "2:5-2:10", "'yield' is not part of the Argus language"},
    {"def f(x):\n    x = {1: 2}\n", "AG1010", "2:9-2:10", "a '{...}' literal (dictionary or set) is not part of the Argus language"},
    {"def f(x):\n    return x && x\n", "AG1010", "2:14-2:16", "'&&' is not part of the Argus language"},
    {"def f(x):\n    x := 3\n", "AG1010", "2:7-2:9", "':=' is not part of the Argus language"},
    {"def f(x):\n    y = x if x else 0\n", "AG1010", "2:11-2:13", "a conditional expression 'a if cond else b' is not part of the Argus language"},
    {"def f(x):\n    return [i for i in x]\n", "AG1010", "2:15-2:18", "a comprehension is not part of the Argus language"},
    {"def f(x):\n    while a < b <= c:\n        pass\n", "AG1010", "2:11-2:21", "a chained comparison is not part of the Argus language"},
    {"def f(x):\n    for i in range(3):\n        pass\n    else:\n        pass\n", "AG1010", "4:5-4:9",
     "'else' after a loop is not part of the Argus language"},
    {"def f(x):\n    def g(y):\n        return y\n    return g(x)\n", "AG1010", "2:9-2:10",
     "a function defined inside another function is not part of the Argus language"},
    // Assignment targets.
    {"def f(x):\n    1 = x\n", "AG1013", "2:5-2:6", "cannot assign to a literal"},
    {"def f(x):\n    x + 1 = 2\n", "AG1013", "2:5-2:10", "cannot assign to the result of '+'"},
    {"def f(x):\n    (a, f(b)) = 1, 2\n", "AG1013", "2:9-2:13", "cannot assign to a function call"},
    {"def f(x):\n    for g(i) in range(3):\n        pass\n", "AG1013", "2:9-2:13", "cannot assign to a function call"},
    {"def f(x):\n    a, b += 1\n", "AG1013", "2:5-2:9", "cannot assign to a tuple"},
    // Lexical mistakes stop the parser from adding its own error on the same line.
    {"def f(x):\n    s = \"abc\n    return s\n", "AG1002", "2:9-2:13", "unterminated string literal"},
    {"def f(x):\n    require(x > 0, \"x must be positive)\n    return x\n", "AG1002", "2:20-2:40", "unterminated string literal"},
    {"def f(x):\n    x = f(1, 2\n    return x\n", "AG1008", "2:10-2:11", "'(' was never closed"},
    {"def f(x):\n    x = (1]\n    return x\n", "AG1019", "2:11-2:12", "closing ']' does not match the opening '(' at 2:9"},
    {"def f(x):\n    u = $ 5\n", "AG1001", "2:9-2:10", "unexpected character '$'"},
    {"def f(x):\n    t = 0x + 1\n", "AG1009", "2:9-2:11", "invalid numeric literal '0x'"},
    {"def f(x):\n    return\n  y = 1\n", "AG1003", "3:1-3:3", "unindent does not match any outer indentation level"},
    // Recovery keeps the block structure around the broken line.
    {"def f(x):\n    if x:\n        a = 1\n   b = 2\n    return a\n", "AG1003", "4:1-4:4",
     "unindent does not match any outer indentation level"},
    {"def f(x):\n    if x:\n       a = 1\n        b = 2\n    else:\n        pass\n", "AG1006", "4:1-4:9", "unexpected indent"},
    {"def f(x):\n    for i in x:\n        if i:\n       a = 1\n        else:\n            pass\n", "AG1003", "4:1-4:8",
     "unindent does not match any outer indentation level"},
    {"def f(x):\n    if x:\n        a = 1\n$   else:\n        pass\n", "AG1001", "4:1-4:2", "unexpected character '$'"},
    {"def f(x):\n    y = 1 if x:\n        pass\n    else:\n        pass\n", "AG1010", "2:11-2:13",
     "a conditional expression 'a if cond else b' is not part of the Argus language"},
};
// A decorator before a statement, and a decorator's '(' never closed: the golden files
// tests/golden/diagnostics/syntax_decorator_before_statement.ag and
// syntax_unclosed_decorator_bracket.ag.

TEST(ParserDiagnostics, EachMistakeGivesExactlyOneDiagnostic) {
  for (const Case& c : kCases) {
    Parsed p = parseText(c.source);
    const std::vector<Diagnostic>& got = p.diags.diagnostics();
    ASSERT_EQ(got.size(), 1u) << c.source << "\n" << p.diagnosticsText();
    EXPECT_STREQ(got[0].code(), c.code) << c.source;
    EXPECT_EQ(p.at(got[0].range), c.range) << c.source;
    EXPECT_EQ(got[0].message, c.message) << c.source;
    for (const auto& fn : p.module->functions) EXPECT_TRUE(fn->hasSyntaxErrors) << c.source;
  }
}

TEST(ParserDiagnostics, FixItsAndNotes) {
  Parsed colon = parseText("def f(x):\n    for i in range(10)\n        x = i\n");
  ASSERT_EQ(colon.diags.diagnostics().size(), 1u);
  const Diagnostic& d = colon.diags.diagnostics()[0];
  ASSERT_EQ(d.fixits.size(), 1u);
  EXPECT_EQ(d.fixits[0].replacement, ":");
  EXPECT_EQ(colon.at(d.fixits[0].range), "2:23-2:23");

  Parsed comma = parseText("def f(x):\n    return f(x y)\n");
  EXPECT_EQ(comma.diags.diagnostics()[0].notes.at(0), "did you forget a ','?");
  EXPECT_EQ(comma.at(comma.diags.diagnostics()[0].fixits.at(0).range), "2:15-2:15");

  Parsed is = parseText("def f(x):\n    return x is not None\n");
  ASSERT_EQ(is.diags.diagnostics().size(), 1u);
  EXPECT_EQ(is.text(is.diags.diagnostics()[0].range), "is not");
  EXPECT_EQ(is.diags.diagnostics()[0].fixits.at(0).replacement, "!=");

  Parsed chain = parseText("def f(x):\n    return a < b < c\n");
  EXPECT_EQ(chain.diags.diagnostics().at(0).fixits.at(0).replacement, "a < b and b < c");

  Parsed block = parseText("def f(x):\n    if x:\n    return 1\n");
  EXPECT_EQ(block.diags.diagnostics().at(0).fixits.at(0).replacement, "\n        pass");
  EXPECT_EQ(block.text(block.diags.diagnostics()[0].labels.at(0).range), "if");

  Parsed elseIf = parseText("def f(x):\n    if x:\n        pass\n    else if x:\n        pass\n");
  EXPECT_EQ(elseIf.diags.diagnostics().at(0).fixits.at(0).replacement, "elif");

  Parsed indent = parseText("def f(x):\n    a = 1\n        b = 2\n");
  EXPECT_EQ(indent.diags.diagnostics().at(0).fixits.at(0).replacement, "    ");
}

// The error strategy's last resort (AG1027), which no source file is known to
// reach: wherever the grammar accepts many tokens, one of them has a message of
// its own (an expression, the end of the statement, a closing bracket...). It
// is driven here by hand: the parser stands at the start of an augmented
// assignment operator (13 tokens would fit, none a name) and meets a number.
TEST(ParserDiagnostics, LastResortSaysWhatWasUnexpected) {
  SourceFile file("test.ag", "y 2\n");
  DiagnosticSink diags;
  frontend::SourceCharStream input(file.text());
  frontend::IndentingLexer lexer(input, file, diags);
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  frontend::P parser(&tokens);
  parser.removeErrorListeners();
  tokens.seek(1);  // the '2'
  parser.setState(parser.getATN().ruleToStartState[frontend::P::RuleAugop]->stateNumber);
  frontend::SyntaxErrorStrategy strategy(file, input, diags);
  strategy.beginUnit(false);
  strategy.reportError(&parser, antlr4::InputMismatchException(&parser));
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  const Diagnostic& d = diags.diagnostics()[0];
  EXPECT_EQ(d.id, DiagId::UnexpectedToken);
  EXPECT_STREQ(d.code(), "AG1027");
  EXPECT_EQ(d.message, "unexpected number 2");
  EXPECT_EQ(d.range.begin, 2u);
  EXPECT_EQ(d.range.end, 3u);
  EXPECT_TRUE(strategy.unitFailed());
}

// An exception escaping the lexer or the parser (a compiler bug; no input is
// known to cause one) is reported as AG1028 at the end of the file rather than
// crashing. Its message says which stage failed.
TEST(ParserDiagnostics, InternalFailuresHaveTheirOwnKind) {
  DiagnosticSink diags;
  Diagnostic& parser = diags.report(DiagId::InternalSyntaxError, {5, 5}, {"parser", "bad_alloc"});
  EXPECT_STREQ(parser.code(), "AG1028");
  EXPECT_EQ(parser.message, "internal parser error: bad_alloc");
  Diagnostic& lexer = diags.report(DiagId::InternalSyntaxError, {5, 5}, {"lexer", "bad_alloc"});
  EXPECT_EQ(lexer.message, "internal lexer error: bad_alloc");
}

const char* kThreeMistakes = R"(@kernel(grid=(4,), warps=4)
def first(x: Tensor[f32, (N,)]):
    a = load(x.tile((128,))[program_id(0)])
    store(x.tile((128,))[program_id(0)], a * 2)

@device
def broken_header(v)
    return v * 2

@device
def good(v):
    t = v + 1
    return t * t

@device
def broken_expr(v):
    w = v * (1 +)
    return w

@device
def broken_call(v):
    return max(v 0)

@device
def last(v):
    for i in range(4):
        v = v + i
    return v
)";

TEST(ParserRecovery, ThreeIndependentMistakesAreAllReported) {
  Parsed p = parseText(kThreeMistakes);
  ASSERT_EQ(p.diags.diagnostics().size(), 3u) << p.diagnosticsText();
  EXPECT_EQ(p.diagnosticsText(),
            "AG1016 7:21-7:21 expected ':' at the end of the 'def' header\n"
            "AG1017 17:17-17:18 expected an expression after '+', found ')'\n"
            "AG1005 22:18-22:19 expected ',' or ')' after the argument, found number 0\n");
  ASSERT_EQ(p.module->functions.size(), 6u);
  const char* names[] = {"first", "broken_header", "good", "broken_expr", "broken_call", "last"};
  const bool broken[] = {false, true, false, true, true, false};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(p.module->functions[i]->name, names[i]);
    EXPECT_EQ(p.module->functions[i]->hasSyntaxErrors, broken[i]) << names[i];
  }
  // The good functions are intact: same dump as when parsed alone.
  auto alone = [](const std::string& text) {
    Parsed q = parseText(text);
    EXPECT_TRUE(q.diags.diagnostics().empty());
    return q.dump();
  };
  std::string whole = p.dump();
  std::string prefix(kThreeMistakes, std::string(kThreeMistakes).find("@device\ndef broken_header"));
  EXPECT_NE(whole.find(alone(prefix).substr(std::string("Module\n").size())), std::string::npos);
  // The broken ones keep what could be understood.
  const ast::FunctionDef& header = *p.module->functions[1];
  EXPECT_EQ(header.params.size(), 1u);
  ASSERT_EQ(header.body.size(), 1u);
  EXPECT_EQ(header.body[0]->kind, ast::StmtKind::Return);
  const ast::FunctionDef& expr = *p.module->functions[3];
  ASSERT_EQ(expr.body.size(), 2u);
  const auto& assign = static_cast<const ast::AssignStmt&>(*expr.body[0]);
  EXPECT_EQ(testing::sexpr(assign.value.get()), "(v * (1 + <error>))");
  EXPECT_EQ(p.module->functions[5]->body.size(), 2u);
  // Ids stay unique and dense with error nodes in the tree.
  std::set<uint32_t> ids;
  testing::forEachExpr(*p.module, [&](const ast::Expr& e) { ids.insert(e.id); });
  EXPECT_EQ(ids.size(), p.module->exprCount);
}

TEST(ParserRecovery, MistakesInNestedBlocksKeepTheBlockStructure) {
  Parsed p = parseText(
      "def f(x):\n"
      "    for i in range(3):\n"
      "        if i = 1:\n"
      "            x = x +\n"
      "        x = x * 2\n"
      "    return x\n");
  EXPECT_EQ(p.diagnosticsText(),
            "AG1005 3:14-3:15 expected ':' at the end of the 'if' header, found '='\n"
            "AG1017 4:20-4:20 expected an expression after '+', found the end of the line\n");
  const ast::Block& body = p.module->functions.at(0)->body;
  ASSERT_EQ(body.size(), 2u);
  const auto& loop = static_cast<const ast::ForStmt&>(*body[0]);
  ASSERT_EQ(loop.body.size(), 2u);
  EXPECT_EQ(loop.body[0]->kind, ast::StmtKind::If);
  EXPECT_EQ(static_cast<const ast::IfStmt&>(*loop.body[0]).then.size(), 1u);
  EXPECT_EQ(body[1]->kind, ast::StmtKind::Return);
}

TEST(ParserRecovery, ErrorNodesStandForWhatCouldNotBeParsed) {
  Parsed p = parseText("def f(x):\n    import os\n    y = (\n");
  ASSERT_EQ(p.module->functions.size(), 1u);
  const ast::Block& body = p.module->functions[0]->body;
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]->kind, ast::StmtKind::Error);
  EXPECT_EQ(p.text(body[0]->range), "import os");
}

// ---------------------------------------------------------------- robustness

void checkWellFormed(const ast::Module& module, uint32_t fileSize, const std::string& text) {
  std::set<uint32_t> ids;
  size_t count = 0;
  testing::forEachExpr(module, [&](const ast::Expr& e) {
    ids.insert(e.id);
    ++count;
    ASSERT_LE(e.range.begin, e.range.end) << text;
    ASSERT_LE(e.range.end, fileSize) << text;
  });
  ASSERT_EQ(ids.size(), count) << text;
  ASSERT_LE(count, module.exprCount) << text;
  if (!ids.empty()) {
    ASSERT_GE(*ids.begin(), 1u) << text;
    ASSERT_LE(*ids.rbegin(), module.exprCount) << text;
  }
}

TEST(ParserRobustness, RandomMutationsNeverCrash) {
  const std::vector<std::string> insertions = {"(", ")", "[", "]", ":", ",", "\n", "    ", "\t", "def ", "for ", "if ",
                                               "else:", "=", "+", "**", "import ", "\"", "'''", "#", "\\", "@", "0x",
                                               "1_", "...", "lambda", "{", "\xff", "\r", "not ", "return "};
  std::mt19937 rng(12345);
  // A kernel that parses cleanly (loops, branches, a device function). No comment line heads
  // its file: the seeded mutations fall where they always did, so a failure's text replays.
  const std::string base = testing::readTestKernel("frontend_parser_errors/gemm_mutation_base.ag");
  for (int round = 0; round < 3000; ++round) {
    std::string text = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0: text[at] = static_cast<char>(rng() % 256); break;
        case 1: text.erase(at, 1 + rng() % 8); break;
        case 2: text.insert(at, insertions[rng() % insertions.size()]); break;
        default: text.insert(at, 1, " \n\t()[]:,.=+-*/#\"'"[rng() % 18]); break;
      }
    }
    SourceFile file("mutant.ag", text);
    DiagnosticSink diags;
    std::unique_ptr<ast::Module> module = parseModule(file, diags);
    ASSERT_NE(module, nullptr);
    checkWellFormed(*module, static_cast<uint32_t>(text.size()), text);
    for (const Diagnostic& d : diags.diagnostics()) {
      ASSERT_LE(d.range.begin, d.range.end) << text;
      ASSERT_LE(d.range.end, text.size()) << text;
      ASSERT_FALSE(d.message.empty());
    }
    std::string dump = ast::dumpAst(*module, file);
    DiagnosticSink tokenDiags;
    std::vector<TokenInfo> tokens = tokenize(file, tokenDiags);
    ASSERT_FALSE(tokens.empty());
    ASSERT_EQ(tokens.back().kind, "EOF");
  }
}

TEST(ParserRobustness, PathologicalNestingIsAnErrorNotACrash) {
  for (const std::string& text : {"x = " + std::string(20000, '(') + "\n", "x = " + std::string(20000, '-') + "1\n",
                                  "x = 1" + std::string(5000, '*') + "\n", "x = " + std::string(20000, '[') + std::string(20000, ']') + "\n"}) {
    Parsed p = parseText(text);
    EXPECT_FALSE(p.diags.diagnostics().empty());
  }
  std::string deep = "def f(x):\n";
  for (int i = 0; i < 200; ++i) deep += std::string(4 * (i + 1), ' ') + "if x:\n";
  deep += std::string(4 * 201, ' ') + "pass\n";
  Parsed p = parseText(deep);
  EXPECT_EQ(p.diagnosticsText(), "");
}

// ---------------------------------------------------------------- scale

std::string generateLargeFile(int lines) {
  std::string text;
  int n = 0;
  while (n < lines) {
    int k = n;
    text += "@kernel(grid=(cdiv(M, BM), cdiv(N, BN)), warps=4)\n";
    text += "def gemm_" + std::to_string(k) + "(A: Tensor[f32, (M, K)], B: Tensor[f32, (K, N)], C: Tensor[f32, (M, N)],\n";
    text += "         BM: const = 64, BN: const = 64, BK: const = 16):\n";
    text += "    a_s = shared(f32, (BM, BK))\n";
    text += "    b_s = shared(f32, (BK, BN))\n";
    text += "    acc = zeros(f32, (BM, BN))\n";
    text += "    for kt in range(cdiv(K, BK)):\n";
    text += "        copy(a_s, A.tile((BM, BK))[program_id(0), kt])\n";
    text += "        copy(b_s, B.tile((BK, BN))[kt, program_id(1)])\n";
    text += "        barrier()\n";
    text += "        if kt % 2 == 0 and kt > 1 or not kt:\n";
    text += "            acc = dot(a_s, b_s, acc) * 0.5 + -acc ** 2\n";
    text += "        barrier()\n";
    text += "    C.tile((BM, BN))[program_id(0), program_id(1)] = acc\n";
    text += "\n";
    n += 15;
  }
  return text;
}

TEST(ParserScale, FiveThousandLinesParseWithoutErrors) {
  std::string text = generateLargeFile(5000);
  SourceFile file("large.ag", text);
  ASSERT_GE(file.lineCount(), 5000u);
  {  // warm up ANTLR's shared prediction caches, as a long-running process would have them
    DiagnosticSink diags;
    parseModule(SourceFile("warm.ag", generateLargeFile(30)), diags);
  }
  DiagnosticSink diags;
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<ast::Module> module = parseModule(file, diags);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(diags.diagnostics().empty());
  EXPECT_EQ(module->functions.size(), (5000u + 14) / 15);
  std::printf("[ timing ] 5,000-line file (%zu bytes) parsed in %.1f ms\n", text.size(), ms);
  // Reported, not asserted: bench/compile_bench measures it (bench/results/compile.md).
}

}  // namespace
}  // namespace argus
