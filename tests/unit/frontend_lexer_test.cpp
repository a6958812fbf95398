// The token stream: layout tokens (NEWLINE / INDENT / DEDENT), brackets,
// literals, ranges, and every lexical diagnostic with its code, range and message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/lexer.h"

namespace argus {
namespace {

struct Lexed {
  SourceFile file;
  DiagnosticSink diags;
  std::vector<TokenInfo> tokens;
};

Lexed lex(const std::string& text) {
  Lexed out{SourceFile("test.ag", text), {}, {}};
  out.tokens = tokenize(out.file, out.diags);
  return out;
}

// Token kinds joined by spaces.
std::string kinds(const std::string& text) {
  Lexed l = lex(text);
  std::string out;
  for (const TokenInfo& t : l.tokens) out += (out.empty() ? "" : " ") + t.kind;
  return out;
}

std::string where(const SourceFile& file, SourceRange r) {
  LineCol b = file.lineCol(r.begin), e = file.lineCol(r.end);
  return std::to_string(b.line) + ":" + std::to_string(b.column) + "-" + std::to_string(e.line) + ":" + std::to_string(e.column);
}

TEST(Lexer, BlockGetsIndentAndDedent) {
  EXPECT_EQ(kinds("def f():\n    return 1\n"),
            "'def' NAME '(' ')' ':' NEWLINE INDENT 'return' INT NEWLINE DEDENT EOF");
}

TEST(Lexer, NestedBlocksCloseAtEndOfFileWithoutFinalNewline) {
  EXPECT_EQ(kinds("if a:\n  if b:\n    pass"),
            "'if' NAME ':' NEWLINE INDENT 'if' NAME ':' NEWLINE INDENT 'pass' NEWLINE DEDENT DEDENT EOF");
}

TEST(Lexer, DedentToMiddleLevel) {
  EXPECT_EQ(kinds("a\n  b\n    c\n  d\ne\n"),
            "NAME NEWLINE INDENT NAME NEWLINE INDENT NAME NEWLINE DEDENT NAME NEWLINE DEDENT NAME NEWLINE EOF");
}

TEST(Lexer, NewlinesInsideBracketsAreDropped) {
  EXPECT_EQ(kinds("x = f(1,\n      2)[\n  0]\ny = {\n}\n"),
            "NAME '=' NAME '(' INT ',' INT ')' '[' INT ']' NEWLINE NAME '=' '{' '}' NEWLINE EOF");
}

TEST(Lexer, BlankAndCommentLinesDoNotMatter) {
  EXPECT_EQ(kinds("\n\n# header\ndef f():\n\n    # comment\n        # deeper comment\n    pass  # trailing\n\n\n"),
            "'def' NAME '(' ')' ':' NEWLINE INDENT 'pass' NEWLINE DEDENT EOF");
}

TEST(Lexer, EmptyAndCommentOnlyFiles) {
  EXPECT_EQ(kinds(""), "EOF");
  EXPECT_EQ(kinds("# only a comment\n\n"), "EOF");
}

TEST(Lexer, LineContinuation) {
  EXPECT_EQ(kinds("x = 1 + \\\n    2\n"), "NAME '=' INT '+' INT NEWLINE EOF");
}

TEST(Lexer, CarriageReturnLineEndings) {
  Lexed l = lex("if a:\r\n    b\r\n");
  std::string out;
  for (const TokenInfo& t : l.tokens) out += (out.empty() ? "" : " ") + t.kind;
  EXPECT_EQ(out, "'if' NAME ':' NEWLINE INDENT NAME NEWLINE DEDENT EOF");
  EXPECT_EQ(l.tokens[3].text, "\r\n");
  EXPECT_TRUE(l.diags.diagnostics().empty());
}

TEST(Lexer, RangesAndTexts) {
  Lexed l = lex("def f(x):\n    return x\n");
  ASSERT_GE(l.tokens.size(), 12u);
  EXPECT_EQ(l.tokens[1].text, "f");
  EXPECT_EQ(l.tokens[1].range, (SourceRange{4, 5}));
  EXPECT_EQ(l.tokens[6].kind, "NEWLINE");
  EXPECT_EQ(l.tokens[6].range, (SourceRange{9, 10}));  // the line break only
  EXPECT_EQ(l.tokens[7].kind, "INDENT");
  EXPECT_EQ(l.tokens[7].text, "    ");
  EXPECT_EQ(l.tokens[7].range, (SourceRange{10, 14}));
  EXPECT_EQ(l.tokens[8].text, "return");
  EXPECT_EQ(l.tokens[11].kind, "DEDENT");
  EXPECT_TRUE(l.tokens[11].range.empty());
  EXPECT_EQ(l.tokens.back().kind, "EOF");
  EXPECT_EQ(l.tokens.back().range, (SourceRange{23, 23}));
}

TEST(Lexer, ByteOffsetsAfterNonAsciiText) {
  // 'é' is two bytes, '→' three: ranges are byte offsets, not characters.
  Lexed l = lex("s = \"é→\"  # café\nt = 1\n");
  ASSERT_TRUE(l.diags.diagnostics().empty());
  EXPECT_EQ(l.tokens[2].kind, "STRING");
  EXPECT_EQ(l.tokens[2].range, (SourceRange{4, 11}));
  EXPECT_EQ(l.tokens[4].text, "t");
  EXPECT_EQ(l.tokens[4].range.begin, 21u);
}

TEST(Lexer, NumbersAndStrings) {
  EXPECT_EQ(kinds("1 1_000 0x80 0xFF_FF 0b101 1.0 .5 1e-3 2.5E+4 1_0.0_1 3."),
            "INT INT INT INT INT FLOAT FLOAT FLOAT FLOAT FLOAT FLOAT NEWLINE EOF");
  EXPECT_EQ(kinds("'a' \"b\" 'it\\'s' \"\"\"multi\nline\"\"\" ''"), "STRING STRING STRING STRING STRING NEWLINE EOF");
}

TEST(Lexer, KeywordsOperatorsAndReservedWords) {
  EXPECT_EQ(kinds("and or not in True False None ..."), "'and' 'or' 'not' 'in' 'True' 'False' 'None' '...' NEWLINE EOF");
  EXPECT_EQ(kinds("a //= b ** c -> d // e <<= f != g"),
            "NAME '//=' NAME '**' NAME '->' NAME '//' NAME '<<=' NAME '!=' NAME NEWLINE EOF");
  EXPECT_EQ(kinds("import lambda is classy"), "RESERVED RESERVED RESERVED NAME NEWLINE EOF");
}

// ---------------------------------------------------------------- diagnostics

struct Expected {
  const char* code;
  const char* range;
  const char* message;
};

void expectDiagnostics(const std::string& text, const std::vector<Expected>& expected) {
  Lexed l = lex(text);
  const std::vector<Diagnostic>& got = l.diags.diagnostics();
  ASSERT_EQ(got.size(), expected.size()) << text;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_STREQ(got[i].code(), expected[i].code) << text;
    EXPECT_EQ(where(l.file, got[i].range), expected[i].range) << text;
    EXPECT_EQ(got[i].message, expected[i].message) << text;
  }
  EXPECT_EQ(l.tokens.back().kind, "EOF");
}

TEST(LexerDiagnostics, UnexpectedCharacter) {
  expectDiagnostics("x = a $ b\n", {{"AG1001", "1:7-1:8", "unexpected character '$'"}});
  expectDiagnostics("x = !a\n", {{"AG1001", "1:5-1:6", "unexpected character '!'"}});
  expectDiagnostics("x = \xff\n", {{"AG1001", "1:5-1:6", "unexpected character '\\xFF'"}});
  Lexed l = lex("a; b\n");
  ASSERT_EQ(l.diags.diagnostics().size(), 1u);
  EXPECT_EQ(l.diags.diagnostics()[0].notes.at(0), "write one statement per line");
}

TEST(LexerDiagnostics, UnterminatedString) {
  expectDiagnostics("s = \"abc\nt = 1\n", {{"AG1002", "1:5-1:9", "unterminated string literal"}});
  expectDiagnostics("s = '''abc\n\nt = 1\n", {{"AG1002", "1:5-1:8", "unterminated string literal"}});
  Lexed l = lex("s = 'abc\n");
  ASSERT_EQ(l.diags.diagnostics().at(0).fixits.size(), 1u);
  EXPECT_EQ(l.diags.diagnostics()[0].fixits[0].replacement, "'");
  EXPECT_EQ(l.diags.diagnostics()[0].fixits[0].range, (SourceRange{8, 8}));
}

TEST(LexerDiagnostics, InconsistentDedent) {
  expectDiagnostics("if a:\n    b\n  c\n",
                    {{"AG1003", "3:1-3:3", "unindent does not match any outer indentation level"}});
  // The width is then accepted: following lines at 2 columns are not reported again.
  expectDiagnostics("if a:\n        b\n    c\n    d\n        e\n",
                    {{"AG1003", "3:1-3:5", "unindent does not match any outer indentation level"}});
}

TEST(LexerDiagnostics, TabsMixedWithSpaces) {
  expectDiagnostics("if a:\n \tb\n", {{"AG1004", "2:1-2:3", "indentation mixes tabs and spaces"}});
  expectDiagnostics("if a:\n    b\nif c:\n\td\n", {{"AG1004", "4:1-4:2", "indentation mixes tabs and spaces"}});
  expectDiagnostics("if a:\n\tb\n\tif c:\n\t\td\n", {});  // tabs only are fine
}

TEST(LexerDiagnostics, UnclosedBracketPointsAtTheOpeningBracket) {
  expectDiagnostics("x = f(a,\n  b\n", {{"AG1008", "1:6-1:7", "'(' was never closed"}});
  // A statement keyword at the start of a line ends the broken line early.
  Lexed l = lex("def f():\n    x = g(1, [2\n    return x\n");
  ASSERT_EQ(l.diags.diagnostics().size(), 2u);
  EXPECT_EQ(where(l.file, l.diags.diagnostics()[0].range), "2:10-2:11");
  EXPECT_EQ(where(l.file, l.diags.diagnostics()[1].range), "2:14-2:15");
  EXPECT_EQ(l.diags.diagnostics()[1].message, "'[' was never closed");
  std::string k;
  for (const TokenInfo& t : l.tokens) k += (k.empty() ? "" : " ") + t.kind;
  EXPECT_NE(k.find("NEWLINE 'return'"), std::string::npos) << k;
  // A closer that skips an opener.
  expectDiagnostics("x = f(a[1)\n", {{"AG1008", "1:8-1:9", "'[' was never closed"}});
}

TEST(LexerDiagnostics, BadNumbers) {
  expectDiagnostics("x = 0x\n", {{"AG1009", "1:5-1:7", "invalid numeric literal '0x'"}});
  expectDiagnostics("x = 1__0\n", {{"AG1009", "1:5-1:9", "invalid numeric literal '1__0'"}});
  expectDiagnostics("x = 12abc\n", {{"AG1009", "1:5-1:10", "invalid numeric literal '12abc'"}});
  expectDiagnostics("x = 0o17\n", {{"AG1009", "1:5-1:9", "invalid numeric literal '0o17'"}});
  expectDiagnostics("x = 007\n", {{"AG1009", "1:5-1:8", "invalid numeric literal '007'"}});
  expectDiagnostics("x = 99999999999999999999\n", {{"AG1009", "1:5-1:25", "invalid numeric literal '99999999999999999999'"}});
  expectDiagnostics("x = 1e999\n", {{"AG1009", "1:5-1:10", "invalid numeric literal '1e999'"}});
  expectDiagnostics("x = 0x7FFF_FFFF_FFFF_FFFF + 0b1_0\n", {});
  Lexed l = lex("x = 1.0f\n");
  ASSERT_EQ(l.diags.diagnostics().size(), 1u);
  EXPECT_NE(l.diags.diagnostics()[0].notes.at(0).find("no type suffix"), std::string::npos);
}

TEST(LexerDiagnostics, UnknownEscape) {
  expectDiagnostics("s = \"a\\qb\"\n", {{"AG1012", "1:7-1:9", "unknown escape sequence '\\q' in a string"}});
  expectDiagnostics("s = \"\\\\ \\\" \\' \\n \\t \\r \\0\"\n", {});
}

}  // namespace
}  // namespace argus
