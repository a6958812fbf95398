// Exact text of the human rendering: this is what users read, so every space counts.
#include <gtest/gtest.h>

#include "support/render.h"
#include "support_render_test_util.h"

namespace argus {
namespace {

// The range of the first occurrence of `needle` in `file`.
SourceRange find(const SourceFile& file, std::string_view needle, size_t from = 0) {
  size_t at = file.text().find(needle, from);
  EXPECT_NE(at, std::string::npos) << needle;
  return {static_cast<uint32_t>(at), static_cast<uint32_t>(at + needle.size())};
}

using testing::make;
using testing::withMessage;

TEST(RenderText, PrimaryRangeOnly) {
  SourceFile file("k.ag", "x = 12ab + 1\n");
  Diagnostic d = make(DiagId::BadNumber, find(file, "12ab"), {"12ab"});
  EXPECT_EQ(renderText({d}, file),
            "k.ag:1:5: error[AG1009]: invalid numeric literal '12ab'\n"
            "    1 | x = 12ab + 1\n"
            "      |     ^~~~\n"
            "1 error generated.\n");
}

TEST(RenderText, LabelGetsItsOwnLocationAndSnippet) {
  SourceFile file("k.ag", "def f(a,\n      b:\n    pass\n");
  Diagnostic d = make(DiagId::UnbalancedBracket, find(file, "("), {"("});
  d.labels.push_back({find(file, "b"), "the parameter list continues here"});
  EXPECT_EQ(renderText({d}, file),
            "k.ag:1:6: error[AG1008]: '(' was never closed\n"
            "    1 | def f(a,\n"
            "      |      ^\n"
            "k.ag:2:7: note: the parameter list continues here\n"
            "    2 |       b:\n"
            "      |       ^\n"
            "1 error generated.\n");
}

TEST(RenderText, NoteAndFixItWithHintLine) {
  SourceFile file("k.ag", "y = x / 2\n");
  Diagnostic d = withMessage(DiagId::SyntaxError, find(file, "/"), "'/' is float division");
  d.notes.push_back("integer division is '//'");
  d.fixits.push_back({find(file, "/"), "//", "use integer division"});
  EXPECT_EQ(renderText({d}, file),
            "k.ag:1:7: error[AG1005]: '/' is float division\n"
            "    1 | y = x / 2\n"
            "      |       ^\n"
            "      |       //\n"
            "note: integer division is '//'\n"
            "fix-it: use integer division: replace '/' with '//'\n"
            "1 error generated.\n");
}

TEST(RenderText, FixItInsertAndRemoveOnOtherLines) {
  SourceFile file("k.ag", "def f()\n    pass pass\n");
  Diagnostic d = withMessage(DiagId::SyntaxError, find(file, "def"), "expected ':'");
  d.fixits.push_back({{7, 7}, ":", ""});
  d.fixits.push_back({find(file, " pass", 12), "", "remove the second 'pass'"});
  EXPECT_EQ(renderText({d}, file),
            "k.ag:1:1: error[AG1005]: expected ':'\n"
            "    1 | def f()\n"
            "      | ^~~\n"
            "      |        :\n"
            "fix-it: insert ':'\n"
            "k.ag:2:9: fix-it: remove the second 'pass': remove ' pass'\n"
            "    2 |     pass pass\n"
            "      |         ^~~~~\n"
            "1 error generated.\n");
}

TEST(RenderText, CounterexampleThenTraceAsNotes) {
  SourceFile file("gemm.ag", "a = load(a_s)\nc = dot(a, b, c)\n");
  Diagnostic d = withMessage(DiagId::SyntaxError, find(file, "dot(a, b, c)"), "mma operands disagree in K");
  Counterexample cx;
  cx.thread = 37;
  cx.warp = 1;
  cx.lane = 5;
  cx.value = 3;
  cx.iteration = {{"kt", 1}, {"kk", 0}};
  cx.facts = {{"A element", "(m=21, k=40)"}, {"B element", "(k=48, n=9)"}};
  cx.trace.push_back({find(file, "load(a_s)"), "A fragment loaded here"});
  d.counterexample = cx;
  EXPECT_EQ(renderText({d}, file),
            "gemm.ag:2:5: error[AG1005]: mma operands disagree in K\n"
            "    2 | c = dot(a, b, c)\n"
            "      |     ^~~~~~~~~~~~\n"
            "  counterexample: thread 37 (warp 1, lane 5), value 3\n"
            "  at iteration kt=1, kk=0\n"
            "  A element: (m=21, k=40)\n"
            "  B element: (k=48, n=9)\n"
            "gemm.ag:1:5: note: A fragment loaded here\n"
            "    1 | a = load(a_s)\n"
            "      |     ^~~~~~~~~\n"
            "1 error generated.\n");
}

TEST(RenderText, PartialCounterexample) {
  SourceFile file("k.ag", "x\n");
  Diagnostic d = withMessage(DiagId::SyntaxError, {0, 1}, "bad");
  Counterexample cx;
  cx.lane = 4;
  cx.block = 2;
  d.counterexample = cx;
  EXPECT_EQ(renderTextDiagnostic(d, file),
            "k.ag:1:1: error[AG1005]: bad\n"
            "    1 | x\n"
            "      | ^\n"
            "  counterexample: lane 4, block 2\n");
}

TEST(RenderText, Utf8LineAlignsCaretsByCharacterNotByte) {
  // 'é' is two bytes, '世' three bytes and two columns wide: the header column
  // counts bytes (as clang does), the carets count columns.
  SourceFile file("u.ag", "s = \"é世\" + 1x\n");
  Diagnostic d = make(DiagId::BadNumber, find(file, "1x"), {"1x"});
  EXPECT_EQ(renderText({d}, file),
            "u.ag:1:15: error[AG1009]: invalid numeric literal '1x'\n"
            "    1 | s = \"é世\" + 1x\n"
            "      |             ^~\n"
            "1 error generated.\n");
}

TEST(RenderText, TabsExpandTheSameWayInLineAndCarets) {
  SourceFile file("t.ag", "\tx =\t12ab\n");
  Diagnostic d = make(DiagId::BadNumber, find(file, "\t12ab"), {"12ab"});
  EXPECT_EQ(renderText({d}, file),
            "t.ag:1:5: error[AG1009]: invalid numeric literal '12ab'\n"
            "    1 |         x =     12ab\n"
            "      |            ^~~~~~~~~\n"
            "1 error generated.\n");
  TextRenderOptions narrow;
  narrow.tabStop = 4;
  EXPECT_EQ(renderTextDiagnostic(d, file, narrow),
            "t.ag:1:5: error[AG1009]: invalid numeric literal '12ab'\n"
            "    1 |     x = 12ab\n"
            "      |        ^~~~~\n");
}

TEST(RenderText, MultiLineRangeUnderlinesToEndOfFirstLine) {
  SourceFile file("m.ag", "f(a,\n  b\n");
  Diagnostic d = make(DiagId::UnsupportedSyntax, {0, 8}, {"this call"});
  EXPECT_EQ(renderTextDiagnostic(d, file),
            "m.ag:1:1: error[AG1010]: this call is not part of the Argus language\n"
            "    1 | f(a,\n"
            "      | ^~~~\n");
}

TEST(RenderText, RangeAtEndOfFile) {
  SourceFile noNewline("e.ag", "x = (1");
  Diagnostic d = withMessage(DiagId::SyntaxError, {6, 6}, "expected ')'");
  EXPECT_EQ(renderTextDiagnostic(d, noNewline),
            "e.ag:1:7: error[AG1005]: expected ')'\n"
            "    1 | x = (1\n"
            "      |       ^\n");
  SourceFile withNewline("e.ag", "x = (1\n");
  d.range = {7, 7};
  EXPECT_EQ(renderTextDiagnostic(d, withNewline),
            "e.ag:2:1: error[AG1005]: expected ')'\n"
            "    2 |\n"
            "      | ^\n");
  d.range = {100, 120};  // past the end: clamped, never a crash
  EXPECT_EQ(renderTextDiagnostic(d, withNewline),
            "e.ag:2:1: error[AG1005]: expected ')'\n"
            "    2 |\n"
            "      | ^\n");
}

TEST(RenderText, EmptyFileHasNoLineToShow) {
  SourceFile file("empty.ag", "");
  Diagnostic d = withMessage(DiagId::SyntaxError, {0, 0}, "expected a kernel");
  EXPECT_TRUE(isFileLevel(d, file));
  EXPECT_EQ(renderText({d}, file),
            "empty.ag: error[AG1005]: expected a kernel\n"
            "1 error generated.\n");
}

TEST(RenderText, DriverDiagnosticsAreAboutTheWholeFile) {
  SourceFile missing("nope.ag", "");
  Diagnostic d = make(DiagId::FileNotFound, {}, {"nope.ag", "No such file or directory"});
  EXPECT_EQ(renderText({d}, missing),
            "nope.ag: error[AG0001]: cannot open 'nope.ag': No such file or directory\n"
            "1 error generated.\n");
  SourceFile file("k.ag", "def k():\n    pass\n");
  Diagnostic unused = make(DiagId::DefineUnused, {}, {"BM"});
  unused.notes.push_back("the kernels' const parameters are: BN");
  EXPECT_TRUE(isFileLevel(unused, file));
  EXPECT_EQ(renderTextDiagnostic(unused, file),
            "k.ag: warning[AG0006]: -D BM does not name a const parameter of any kernel\n"
            "note: the kernels' const parameters are: BN\n");
  Diagnostic placed = make(DiagId::BadDefine, {4, 5}, {"k=1", "not a const parameter"});
  EXPECT_FALSE(isFileLevel(placed, file));
  Diagnostic emptyRangeInText = withMessage(DiagId::SyntaxError, {4, 4}, "x");
  EXPECT_FALSE(isFileLevel(emptyRangeInText, file));
}

TEST(RenderText, ControlAndMalformedBytesAreShownAsQuestionMarks) {
  SourceFile file("b.ag", std::string("a\x01\xff b\n", 6));
  Diagnostic d = make(DiagId::UnexpectedCharacter, {4, 5}, {"b"});
  EXPECT_EQ(renderTextDiagnostic(d, file),
            "b.ag:1:5: error[AG1001]: unexpected character 'b'\n"
            "    1 | a?? b\n"
            "      |     ^\n");
}

TEST(RenderText, WideLineNumbersWidenTheGutter) {
  std::string text;
  for (int i = 0; i < 123456; ++i) text += "\n";
  text += "oops\n";
  SourceFile file("big.ag", text);
  Diagnostic d = withMessage(DiagId::SyntaxError, find(file, "oops"), "bad");
  EXPECT_EQ(renderTextDiagnostic(d, file),
            "big.ag:123457:1: error[AG1005]: bad\n"
            " 123457 | oops\n"
            "        | ^~~~\n");
}

TEST(RenderText, SummaryCountsErrorsAndWarnings) {
  SourceFile file("k.ag", "x\n");
  Diagnostic error = withMessage(DiagId::SyntaxError, {0, 1}, "bad");
  Diagnostic warning = make(DiagId::DefineUnused, {0, 0}, {"BM"});
  EXPECT_EQ(warning.severity, Severity::Warning);
  auto lastLine = [](const std::string& s) {
    size_t end = s.size() - 1;
    return s.substr(s.rfind('\n', end - 1) + 1);
  };
  EXPECT_EQ(lastLine(renderText({error, error, warning}, file)), "2 errors, 1 warning generated.\n");
  EXPECT_EQ(lastLine(renderText({warning, warning}, file)), "2 warnings generated.\n");
  EXPECT_EQ(renderText({}, file), "");
  Diagnostic note = withMessage(DiagId::SyntaxError, {0, 1}, "just so you know");
  note.severity = Severity::Note;
  EXPECT_EQ(renderText({note}, file),
            "k.ag:1:1: note[AG1005]: just so you know\n"
            "    1 | x\n"
            "      | ^\n");
}

TEST(RenderText, ColorOnlyWhenAsked) {
  SourceFile file("k.ag", "x = 12ab\n");
  Diagnostic d = make(DiagId::BadNumber, find(file, "12ab"), {"12ab"});
  d.notes.push_back("digits only");
  d.fixits.push_back({find(file, "12ab"), "12", ""});
  std::string plain = renderText({d}, file);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  TextRenderOptions color;
  color.color = true;
  std::string colored = renderText({d}, file, color);
  EXPECT_NE(colored.find("\x1b[1;31merror[AG1009]:\x1b[0m"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[1mk.ag:1:5:\x1b[0m"), std::string::npos);
  EXPECT_NE(colored.find("\x1b[1;36mnote:\x1b[0m"), std::string::npos);
  EXPECT_NE(colored.find("\x1b[1;32m^~~~\x1b[0m"), std::string::npos);
  EXPECT_NE(colored.find("\x1b[1;32mfix-it:\x1b[0m"), std::string::npos);
  Diagnostic warning = make(DiagId::DefineUnused, {0, 0}, {"BM"});
  EXPECT_NE(renderText({warning}, file, color).find("\x1b[1;35mwarning[AG0006]:\x1b[0m"),
            std::string::npos);
}

}  // namespace
}  // namespace argus
