// LSP positions (UTF-16) and incremental text synchronisation.
#include <gtest/gtest.h>

#include "lsp/document.h"

namespace argus::lsp {
namespace {

ContentChange edit(uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1, std::string text) {
  return ContentChange{Range{{l0, c0}, {l1, c1}}, std::move(text)};
}

TEST(LspPositions, AsciiRoundTrip) {
  SourceFile file("f", "ab\ncd\n");
  EXPECT_EQ(offsetOf(file, {1, 1}), 4u);
  Position p = positionOf(file, 4);
  EXPECT_EQ(p.line, 1u);
  EXPECT_EQ(p.character, 1u);
}

TEST(LspPositions, Utf16CountsSurrogatePairsAsTwo) {
  // "é" is 2 bytes / 1 unit; "😀" is 4 bytes / 2 units.
  SourceFile file("f", "é😀x\n");
  EXPECT_EQ(offsetOf(file, {0, 1}), 2u);
  EXPECT_EQ(offsetOf(file, {0, 3}), 6u);
  EXPECT_EQ(positionOf(file, 6).character, 3u);
}

TEST(LspPositions, OutOfRangeClamps) {
  SourceFile file("f", "ab\ncd");
  EXPECT_EQ(offsetOf(file, {0, 99}), 2u);
  EXPECT_EQ(offsetOf(file, {99, 0}), 5u);
  EXPECT_EQ(positionOf(file, 999).line, 1u);
}

TEST(LspPositions, JsonParsingRejectsWrongTypes) {
  EXPECT_FALSE(positionFromJson(json{{"line", "1"}, {"character", 0}}));
  EXPECT_FALSE(positionFromJson(json{{"line", -1}, {"character", 0}}));
  EXPECT_FALSE(positionFromJson(json::array()));
  EXPECT_TRUE(positionFromJson(json{{"line", 1}, {"character", 0}}));
  EXPECT_FALSE(rangeFromJson(json{{"start", {{"line", 1}, {"character", 0}}}}));
  EXPECT_FALSE(contentChangeFromJson(json{{"range", 5}, {"text", "x"}}));
  EXPECT_TRUE(contentChangeFromJson(json{{"text", "x"}}));
}

TEST(LspDocument, IncrementalInsertDeleteReplace) {
  std::string text = "def f():\n    pass\n";
  applyContentChanges(text, {edit(1, 4, 1, 8, "return 1")});
  EXPECT_EQ(text, "def f():\n    return 1\n");
  applyContentChanges(text, {edit(0, 4, 0, 5, "kernel")});
  EXPECT_EQ(text, "def kernel():\n    return 1\n");
  applyContentChanges(text, {edit(1, 0, 2, 0, "")});
  EXPECT_EQ(text, "def kernel():\n");
}

TEST(LspDocument, ChangesApplyInOrder) {
  std::string text = "abc";
  applyContentChanges(text, {edit(0, 3, 0, 3, "d"), edit(0, 0, 0, 1, "A"), edit(0, 4, 0, 4, "\nE")});
  EXPECT_EQ(text, "Abcd\nE");
}

TEST(LspDocument, FullReplacement) {
  std::string text = "old";
  applyContentChanges(text, {ContentChange{std::nullopt, "new text"}});
  EXPECT_EQ(text, "new text");
}

TEST(LspDocument, Utf16Edits) {
  std::string text = "x = \"😀\" + y\n";
  // Replace `y` (after the 2-unit emoji).
  applyContentChanges(text, {edit(0, 11, 0, 12, "z")});
  EXPECT_EQ(text, "x = \"😀\" + z\n");
}

TEST(LspDocument, OutOfRangeAndReversedRangesDoNotCrash) {
  std::string text = "abc\ndef";
  applyContentChanges(text, {edit(5, 0, 9, 9, "!")});
  EXPECT_EQ(text, "abc\ndef!");
  applyContentChanges(text, {edit(0, 2, 0, 0, "")});
  EXPECT_EQ(text, "c\ndef!");
}


TEST(LspDocument, EditsInsideOneLinesCommentAreRecognized) {
  const std::string text = "x = f(\"a # b\", '#')  # note\ny = 2\n# full\n";
  auto at = [&](const std::string& needle) { return static_cast<uint32_t>(text.find(needle)); };
  uint32_t note = at("note"), full = at("full");
  EXPECT_TRUE(staysInsideComment(text, note, note, "typed "));
  EXPECT_TRUE(staysInsideComment(text, note, note + 4, ""));
  EXPECT_TRUE(staysInsideComment(text, full, full + 4, "# still a comment"));
  EXPECT_TRUE(staysInsideComment(text, note + 4, note + 4, " more"));  // at the end of the line
  EXPECT_FALSE(staysInsideComment(text, note, note, "a\nb"));        // a new line is code
  EXPECT_FALSE(staysInsideComment(text, note, at("y = 2"), ""));     // joins the next line
  EXPECT_FALSE(staysInsideComment(text, at("# note"), at("# note"), "z"));  // before the '#'
  EXPECT_FALSE(staysInsideComment(text, at("# note"), at("# note") + 1, ""));  // deletes the '#'
  EXPECT_FALSE(staysInsideComment(text, at("b\""), at("b\""), "c"));  // a '#' inside a string
  EXPECT_FALSE(staysInsideComment(text, at("#')") + 1, at("#')") + 1, "c"));
  EXPECT_FALSE(staysInsideComment(text, 0, 0, "#"));
  const std::string crlf = "x = 1  # c\r\ny = 2\r\n";
  EXPECT_TRUE(staysInsideComment(crlf, 9, 9, "d"));
  EXPECT_FALSE(staysInsideComment(crlf, 10, 11, ""));  // removes the '\r'
  std::string escaped = "s = \"\\\" # no\"  # yes\n";
  EXPECT_FALSE(staysInsideComment(escaped, static_cast<uint32_t>(escaped.find("no")), static_cast<uint32_t>(escaped.find("no")), "x"));
  EXPECT_TRUE(staysInsideComment(escaped, static_cast<uint32_t>(escaped.find("yes")), static_cast<uint32_t>(escaped.find("yes")), "x"));
  // A '#' on a line inside a triple-quoted string is string text, not a comment.
  for (const std::string triple : {"x = \"\"\"first\n  # inside\n\"\"\"  # after\n",
                                   "x = '''first\n  # inside\n'''  # after\n"}) {
    uint32_t inside = static_cast<uint32_t>(triple.find("inside")), after = static_cast<uint32_t>(triple.find("after"));
    EXPECT_FALSE(staysInsideComment(triple, inside, inside, "x")) << triple;
    EXPECT_TRUE(staysInsideComment(triple, after, after, "x")) << triple;
  }
}

TEST(LspDocument, AppliedChangesSayWhereAndWhetherInsideAComment) {
  std::string text = "a = 1  # one\nb = 2\n";
  std::vector<AppliedChange> applied = applyContentChanges(text, {edit(0, 12, 0, 12, "!"), edit(1, 0, 1, 1, "c")});
  EXPECT_EQ(text, "a = 1  # one!\nc = 2\n");
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_EQ(applied[0].begin, 12u);
  EXPECT_EQ(applied[0].length, 1u);
  EXPECT_TRUE(applied[0].insideComment);
  EXPECT_FALSE(applied[1].insideComment);
  EXPECT_FALSE(applyContentChanges(text, {ContentChange{std::nullopt, "x = 1 # whole"}})[0].insideComment);
}

}  // namespace
}  // namespace argus::lsp
