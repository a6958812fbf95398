// SourceFile's position helpers, UTF-8 validation and message formatting.
#include <gtest/gtest.h>

#include <set>

#include "support/diagnostic.h"
#include "support/source.h"

namespace argus {
namespace {

TEST(SourceFile, LineColumnAndLineText) {
  SourceFile file("k.ag", "ab\ncd\r\n\nef");
  EXPECT_EQ(file.lineCount(), 4u);
  EXPECT_EQ(file.lineCol(0).line, 1u);
  EXPECT_EQ(file.lineCol(0).column, 1u);
  EXPECT_EQ(file.lineCol(2).column, 3u);  // the newline itself is past the last column
  EXPECT_EQ(file.lineCol(3).line, 2u);
  EXPECT_EQ(file.lineCol(3).column, 1u);
  EXPECT_EQ(file.lineCol(7).line, 3u);     // the empty line
  EXPECT_EQ(file.lineCol(8).line, 4u);
  EXPECT_EQ(file.lineCol(9).column, 2u);
  EXPECT_EQ(file.lineCol(10).line, 4u);
  EXPECT_EQ(file.lineCol(10).column, 3u);   // end of file
  EXPECT_EQ(file.lineCol(999).line, 4u);    // clamped
  EXPECT_EQ(file.lineCol(999).column, 3u);
  EXPECT_EQ(file.lineText(1), "ab");
  EXPECT_EQ(file.lineText(2), "cd");        // no \r
  EXPECT_EQ(file.lineText(3), "");
  EXPECT_EQ(file.lineText(4), "ef");
  EXPECT_EQ(file.lineText(0), "");
  EXPECT_EQ(file.lineText(5), "");
}

TEST(SourceFile, OffsetOfClampsIntoTheFile) {
  SourceFile file("k.ag", "ab\ncd\n");
  EXPECT_EQ(file.offsetOf(2, 1), 3u);
  EXPECT_EQ(file.offsetOf(2, 2), 4u);
  EXPECT_EQ(file.offsetOf(2, 99), 5u);  // end of the line's text
  EXPECT_EQ(file.offsetOf(0, 1), 0u);
  EXPECT_EQ(file.offsetOf(1, 0), 0u);
  EXPECT_EQ(file.offsetOf(99, 1), 6u);
  EXPECT_EQ(file.slice({3, 5}), "cd");
  EXPECT_EQ(file.slice({5, 3}), "");
  EXPECT_EQ(file.slice({4, 100}), "d\n");
  EXPECT_EQ(file.slice({100, 200}), "");
}

TEST(SourceFile, DeclaredArchIsTheFirstArchLine) {
  EXPECT_EQ(declaredArch("@kernel(grid=(1,))\n# arch: sm_90a\n# arch: sm_80\n"), "sm_90a");
  EXPECT_EQ(declaredArch("# arch: sm_80\r\n"), "sm_80");  // CRLF files too
  EXPECT_EQ(declaredArch("x = 1  # arch: sm_90a\n"), "");     // only a line of its own
  EXPECT_EQ(declaredArch(""), "");
}

TEST(SourceFile, EmptyFileHasOneEmptyLine) {
  SourceFile file("e.ag", "");
  EXPECT_EQ(file.lineCount(), 1u);
  EXPECT_EQ(file.lineCol(0).line, 1u);
  EXPECT_EQ(file.lineCol(0).column, 1u);
  EXPECT_EQ(file.lineText(1), "");
  EXPECT_EQ(file.utf16Column(0), 0u);
  EXPECT_EQ(file.offsetOfUtf16(0, 5), 0u);
}

TEST(SourceFile, Utf16Columns) {
  // x é 世 😀 y : 1 + 2 + 3 + 4 + 1 bytes; 1 + 1 + 1 + 2 + 1 UTF-16 units.
  SourceFile file("u.ag", "q\nxé世😀y\n");
  uint32_t line2 = 2;
  EXPECT_EQ(file.utf16Column(line2 + 0), 0u);
  EXPECT_EQ(file.utf16Column(line2 + 1), 1u);   // é
  EXPECT_EQ(file.utf16Column(line2 + 3), 2u);   // 世
  EXPECT_EQ(file.utf16Column(line2 + 6), 3u);   // 😀
  EXPECT_EQ(file.utf16Column(line2 + 10), 5u);  // y
  EXPECT_EQ(file.utf16Column(line2 + 11), 6u);  // end of line
  EXPECT_EQ(file.offsetOfUtf16(1, 0), line2 + 0);
  EXPECT_EQ(file.offsetOfUtf16(1, 2), line2 + 3);
  EXPECT_EQ(file.offsetOfUtf16(1, 3), line2 + 6);
  EXPECT_EQ(file.offsetOfUtf16(1, 5), line2 + 10);
  EXPECT_EQ(file.offsetOfUtf16(1, 99), line2 + 11);  // clamped to the line
  EXPECT_EQ(file.offsetOfUtf16(7, 0), file.text().size());
  for (uint32_t units : {0u, 1u, 2u, 3u, 5u, 6u})
    EXPECT_EQ(file.utf16Column(file.offsetOfUtf16(1, units)), units);
}

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_TRUE(isValidUtf8(""));
  EXPECT_TRUE(isValidUtf8("plain ascii\n"));
  EXPECT_TRUE(isValidUtf8("é世😀"));
  EXPECT_TRUE(isValidUtf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the last code point
  EXPECT_TRUE(isValidUtf8("\xEF\xBB\xBF" "x"));   // a BOM is valid UTF-8
}

struct BadCase {
  std::string bytes;
  uint32_t offset;
  const char* why;
};

TEST(Utf8, RejectsMalformedTextAtTheFirstBadByte) {
  const BadCase cases[] = {
      {"ab\x80", 2, "lone continuation byte"},
      {"\xC0\x80", 0, "overlong NUL"},
      {"\xC1\xBF", 0, "overlong 2-byte"},
      {"x\xE0\x80\xAF", 1, "overlong 3-byte"},
      {"\xF0\x80\x80\xAF", 0, "overlong 4-byte"},
      {"\xED\xA0\x80", 0, "UTF-16 high surrogate"},
      {"ok\xED\xBF\xBF", 2, "UTF-16 low surrogate"},
      {"\xF4\x90\x80\x80", 0, "above U+10FFFF"},
      {"\xF8\x88\x80\x80\x80", 0, "5-byte form"},
      {"\xFF", 0, "0xFF never appears"},
      {"abc\xE4\xB8", 3, "truncated at end of text"},
      {"\xE4\xB8x", 0, "truncated by an ASCII byte"},
      {"\xC3", 0, "lone lead byte"},
  };
  for (const BadCase& c : cases) {
    uint32_t offset = 12345;
    EXPECT_FALSE(isValidUtf8(c.bytes, &offset)) << c.why;
    EXPECT_EQ(offset, c.offset) << c.why;
  }
  EXPECT_FALSE(isValidUtf8(std::string("a\0\xC3", 3)));  // NUL is valid, the tail is not
  EXPECT_TRUE(isValidUtf8(std::string("a\0b", 3)));
}

TEST(FormatMessage, SubstitutesArguments) {
  EXPECT_EQ(formatMessage("cannot open '{0}': {1}", {"k.ag", "no such file"}),
            "cannot open 'k.ag': no such file");
  EXPECT_EQ(formatMessage("{1} then {0} then {1}", {"a", "b"}), "b then a then b");
  EXPECT_EQ(formatMessage("missing {2}", {"a"}), "missing ?");
  EXPECT_EQ(formatMessage("literal {x} and {} and {", {}), "literal {x} and {} and {");
  EXPECT_EQ(formatMessage("set {0}", {"{1}"}), "set {1}");  // arguments are not re-expanded
  EXPECT_EQ(formatMessage("", {"a"}), "");
}

TEST(DiagnosticSink, ReportFormatsAndCounts) {
  DiagnosticSink sink;
  sink.report(DiagId::FileNotFound, {0, 0}, {"k.ag", "no such file"});
  sink.report(DiagId::DefineUnused, {0, 0}, {"BM"});
  EXPECT_EQ(sink.diagnostics()[0].message, "cannot open 'k.ag': no such file");
  EXPECT_STREQ(sink.diagnostics()[0].code(), "AG0001");
  EXPECT_EQ(sink.errorCount(), 1u);
  sink.promoteWarnings();
  EXPECT_EQ(sink.errorCount(), 2u);
  EXPECT_EQ(diagIdFromCode("AG0006"), DiagId::DefineUnused);
  EXPECT_EQ(diagIdFromCode("AG9999"), std::nullopt);
}

TEST(DiagnosticRegistry, CodesAreUniqueAndWellFormed) {
  std::set<std::string> seen;
  for (const DiagKindInfo& kind : allDiagKinds()) {
    std::string code = kind.code;
    EXPECT_TRUE(seen.insert(code).second) << "duplicate code " << code;
    EXPECT_EQ(code.size(), 6u) << code;
    EXPECT_EQ(code.rfind("AG", 0), 0u) << code;
    EXPECT_EQ(code.find_first_not_of("0123456789", 2), std::string::npos) << code;
    EXPECT_EQ(&diagInfo(kind.id), &kind);
  }
}

}  // namespace
}  // namespace argus
