// The features of features_extra.h on every example and on broken versions of
// them (cut off at many points): each answers with well-formed JSON and never
// throws or crashes, whatever the parser recovered.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lsp/features_extra.h"

namespace argus::lsp {
namespace {

std::vector<std::string> exampleTexts() {
  std::vector<std::string> texts;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ARGUS_SOURCE_DIR) + "/examples"))
    if (entry.path().extension() == ".ag") files.push_back(entry.path());
  files.push_back(std::string(ARGUS_SOURCE_DIR) + "/tests/lsp/calls.ag");
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    texts.push_back(content.str());
  }
  return texts;
}

void exerciseEverywhere(const Snapshot& snapshot) {
  const SourceFile& file = snapshot.file();
  uint32_t lines = file.lineCount();
  json item = prepareCallHierarchy(snapshot, Position{0, 0});
  EXPECT_NO_THROW(foldingRanges(snapshot).dump());
  EXPECT_NO_THROW(documentDiagnostics(snapshot, std::nullopt).dump());
  EXPECT_NO_THROW(memoryInlayHints(snapshot, Range{{0, 0}, {lines + 1, 0}}).dump());
  std::vector<Position> positions;
  for (uint32_t line = 0; line <= lines; line += 1)
    for (uint32_t character : {4u, 9u, 17u}) positions.push_back(Position{line, character});
  EXPECT_NO_THROW(selectionRanges(snapshot, positions).dump());
  for (Position p : positions) {
    EXPECT_NO_THROW(declaration(snapshot, p).dump());
    EXPECT_NO_THROW(typeDefinition(snapshot, p).dump());
    json items = prepareCallHierarchy(snapshot, p);
    if (items.is_array())
      for (const json& i : items) {
        EXPECT_TRUE(incomingCalls(snapshot, i).is_array());
        EXPECT_TRUE(outgoingCalls(snapshot, i).is_array());
      }
    EXPECT_NO_THROW(refactorActions(snapshot, Range{p, Position{p.line + 3, 0}}).dump());
    EXPECT_NO_THROW(refactorActions(snapshot, Range{p, p}).dump());
  }
  // Hostile items: wrong types, unknown names.
  EXPECT_TRUE(incomingCalls(snapshot, json{{"name", 3}}).is_array());
  EXPECT_TRUE(outgoingCalls(snapshot, json::array()).is_array());
}

TEST(LspFeaturesExtra, ExamplesAndTheirTruncationsNeverThrow) {
  std::vector<std::string> texts = exampleTexts();
  ASSERT_GT(texts.size(), 5u);
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::string& text = texts[t];
    // Cut mid-file: mid-statement or mid-expression.
    // (Whole files are covered by the conversation and editor tests; here the
    // broken ones, which also keep the checker, and the test, short.)
    for (size_t cut : {text.size() * 3 / 5, text.size() / 3}) {
      SCOPED_TRACE("example " + std::to_string(t) + " cut at " + std::to_string(cut));
      auto snapshot = analyzeDocument("file:///t.ag", 1, 1, text.substr(0, cut), ConfiguredOptions{});
      exerciseEverywhere(*snapshot);
    }
  }
}

TEST(LspFeaturesExtra, WorkspaceSymbolsMatchInOrderIgnoringCase) {
  std::vector<std::pair<std::string, std::string>> docs = {
      {"file:///a.ag", "@device\ndef scale_rows(x):\n    return x\n"},
      {"file:///b.ag", "@kernel(grid=(1,), warps=1)\ndef Softmax(x: Tensor[f32, (N,)]):\n    y = (1 +\n"}};
  json all = workspaceSymbols(docs, "");
  ASSERT_EQ(all.size(), 2u) << all.dump();
  json some = workspaceSymbols(docs, "smx");
  ASSERT_EQ(some.size(), 1u) << some.dump();
  EXPECT_EQ(some[0]["name"], "Softmax");
  EXPECT_EQ(some[0]["containerName"], "@kernel");
  EXPECT_TRUE(workspaceSymbols(docs, "xs").empty());
}

TEST(LspFeaturesExtra, SelectionOfADeeplyNestedExpressionIsBounded) {
  std::string text = "@kernel(grid=(1,), warps=1)\ndef k(x: Tensor[f32, (N,)]):\n    a = 1";
  // 200 operators: under the expression depth limit (AG1014 at 256), so 200 nested ranges.
  for (int i = 0; i < 200; ++i) text += " + 1";
  text += "\n";
  auto snapshot = analyzeDocument("file:///deep.ag", 1, 1, text, ConfiguredOptions{});
  json result = selectionRanges(*snapshot, {Position{2, 8}});  // the first term: inside every one of the 200 sums
  size_t depth = 0;
  for (const json* node = &result[0]; node; node = node->contains("parent") ? &(*node)["parent"] : nullptr) ++depth;
  EXPECT_EQ(depth, 128u);
}

TEST(LspFeaturesExtra, ExtractIsNotOfferedForAReturnOrTwoResults) {
  std::string text =
      "@device\n"
      "def f(x):\n"
      "    a = x + 1\n"
      "    b = x + 2\n"
      "    return a + b\n";
  auto snapshot = analyzeDocument("file:///f.ag", 1, 1, text, ConfiguredOptions{});
  // `a = ...` and `b = ...` both flow out: no extraction.
  EXPECT_TRUE(refactorActions(*snapshot, Range{{2, 0}, {3, 13}}).empty());
  // A selection with the return: none either.
  EXPECT_TRUE(refactorActions(*snapshot, Range{{3, 0}, {4, 20}}).empty());
}

}  // namespace
}  // namespace argus::lsp
