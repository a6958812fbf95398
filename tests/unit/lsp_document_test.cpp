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

}  // namespace
}  // namespace argus::lsp
