// Token estimates and prompt assembly under a budget: hot items always kept
// verbatim, the budget never exceeded, truncation marked.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "agent/context.h"

namespace argus::agent {
namespace {

TokenBudget budgetOf(int available) {
  TokenBudget budget;
  budget.window = available;
  budget.system = 0;
  budget.generation = 0;
  budget.reserve = 0;
  return budget;
}

ContextItem item(Tier tier, std::string label, std::string text, double priority = 0) {
  ContextItem result;
  result.tier = tier;
  result.label = std::move(label);
  result.text = std::move(text);
  result.priority = priority;
  return result;
}

bool contains(const std::vector<std::string>& labels, const std::string& label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

TEST(EstimateTokens, FollowsTheDocumentedRule) {
  EXPECT_EQ(estimateTokens(""), 0);
  EXPECT_EQ(estimateTokens("a"), 1);
  EXPECT_EQ(estimateTokens("abc"), 1);
  EXPECT_EQ(estimateTokens("abcd"), 2);
  EXPECT_EQ(estimateTokens("def f(x): return x"), 6);       // 18 bytes, no long word
  EXPECT_EQ(estimateTokens("abcdefghijklm"), 5 + 1);         // 13 bytes: one long word
  EXPECT_EQ(estimateTokens("abcdefghijkl"), 4);              // 12 bytes is not long
  EXPECT_EQ(estimateTokens("\xc3\xa9"), 2);                  // non-ASCII: a token per byte
  EXPECT_GE(estimateTokens(std::string(3000, 'x')), 1000);
}

TEST(EstimateTokens, NeverBelowAQuarterOfTheBytes) {
  // Common BPE tokenizers average about 4 bytes per token on code; the
  // estimate must stay above that for the budget to be safe.
  std::string code =
      "@kernel(grid=(cdiv(N, BLOCK),), warps=4)\n"
      "def vadd(x: Tensor[f32, (N,)], y: Tensor[f32, (N,)], out: Tensor[f32, (N,)]):\n"
      "    i = program_id(0)\n    out.tile((BLOCK,))[i] = load(x.tile((BLOCK,))[i])\n";
  EXPECT_GE(estimateTokens(code), static_cast<int>(code.size() / 3));
}

TEST(BuildPrompt, OrdersByTierThenPriority) {
  std::vector<ContextItem> items = {
      item(Tier::Cold, "kb: tiling", "tile the loops", 1),
      item(Tier::Warm, "case 2", "case two", 0.5),
      item(Tier::Hot, "task", "make gemm fast"),
      item(Tier::Warm, "case 1", "case one", 0.9),
      item(Tier::Cold, "kb: swizzle", "swizzle smem", 2),
      item(Tier::Hot, "incumbent", "@kernel ..."),
  };
  BuiltPrompt prompt = buildPrompt(items, TokenBudget{});
  ASSERT_TRUE(prompt.ok) << prompt.error;
  std::vector<std::string> expected = {"task",   "incumbent",   "case 1",
                                       "case 2", "kb: swizzle", "kb: tiling"};
  EXPECT_EQ(prompt.kept, expected);
  EXPECT_TRUE(prompt.dropped.empty());
  size_t last = 0;
  for (const std::string& label : expected) {
    size_t at = prompt.text.find("## " + label + "\n");
    ASSERT_NE(at, std::string::npos) << label;
    EXPECT_GE(at, last) << label;
    last = at;
  }
  EXPECT_EQ(prompt.tokens, estimateTokens(prompt.text));
}

TEST(BuildPrompt, DropsWhatDoesNotFitAndKeepsSmallerLaterItems) {
  std::vector<ContextItem> items = {
      item(Tier::Hot, "task", "optimize"),
      item(Tier::Warm, "big case", std::string(600, 'y'), 5),  // too big, room < 64: dropped
      item(Tier::Cold, "kb: small", "use vector loads", 1),
  };
  BuiltPrompt prompt = buildPrompt(items, budgetOf(40));
  ASSERT_TRUE(prompt.ok) << prompt.error;
  EXPECT_TRUE(contains(prompt.dropped, "big case"));
  EXPECT_TRUE(contains(prompt.kept, "kb: small"));
  EXPECT_TRUE(prompt.truncated.empty());
  EXPECT_LE(prompt.tokens, 40);
}

TEST(BuildPrompt, TruncatesAtALineAndMarksTheCut) {
  std::string longCase;
  for (int line = 0; line < 200; ++line)
    longCase += "line " + std::to_string(line) + ": speedup 1.07x with BLOCK_K=64\n";
  std::vector<ContextItem> items = {item(Tier::Hot, "task", "optimize gemm"),
                                    item(Tier::Warm, "case 7", longCase, 1),
                                    item(Tier::Cold, "kb: tma", std::string(300, 't'), 1)};
  BuiltPrompt prompt = buildPrompt(items, budgetOf(300));
  ASSERT_TRUE(prompt.ok) << prompt.error;
  EXPECT_EQ(prompt.truncated, std::vector<std::string>{"case 7"});
  EXPECT_TRUE(contains(prompt.kept, "case 7"));
  EXPECT_TRUE(contains(prompt.dropped, "kb: tma"));
  EXPECT_NE(prompt.text.find("## case 7 (truncated)\n"), std::string::npos);
  size_t mark = prompt.text.find("[... truncated here");
  ASSERT_NE(mark, std::string::npos);
  EXPECT_EQ(prompt.text[mark - 1], '\n');
  EXPECT_EQ(prompt.text[mark - 2], '\n');  // the cut fell at a line end
  EXPECT_LE(prompt.tokens, 300);
  EXPECT_GT(prompt.tokens, 250);  // the budget is actually used
}

TEST(BuildPrompt, NoTruncationBelowSixtyFourTokensOfRoom) {
  std::vector<ContextItem> items = {item(Tier::Hot, "task", std::string(150, 't')),
                                    item(Tier::Warm, "case", std::string(600, 'c'), 1)};
  BuiltPrompt prompt = buildPrompt(items, budgetOf(100));  // hot ~53 tokens: 47 left
  ASSERT_TRUE(prompt.ok) << prompt.error;
  EXPECT_TRUE(prompt.truncated.empty());
  EXPECT_EQ(prompt.dropped, std::vector<std::string>{"case"});
}

TEST(BuildPrompt, FailsClearlyWhenHotAloneExceedsTheBudget) {
  std::vector<ContextItem> items = {item(Tier::Hot, "task", "optimize"),
                                    item(Tier::Hot, "incumbent", std::string(3000, 'k')),
                                    item(Tier::Warm, "case", "small")};
  TokenBudget budget;
  budget.window = 1000;
  budget.generation = 200;
  budget.reserve = 100;
  BuiltPrompt prompt = buildPrompt(items, budget);
  EXPECT_FALSE(prompt.ok);
  EXPECT_TRUE(prompt.text.empty());
  EXPECT_NE(prompt.error.find("'incumbent'"), std::string::npos) << prompt.error;
  EXPECT_NE(prompt.error.find("allows 700"), std::string::npos) << prompt.error;
}

TEST(BuildPrompt, NegativeBudgetFails) {
  TokenBudget budget;
  budget.window = 1000;
  budget.generation = 4096;
  BuiltPrompt prompt = buildPrompt({}, budget);
  EXPECT_FALSE(prompt.ok);
  EXPECT_NE(prompt.error.find("no room"), std::string::npos) << prompt.error;
}

TEST(BuildPrompt, EmptyInputIsAnEmptyPrompt) {
  BuiltPrompt prompt = buildPrompt({}, TokenBudget{});
  EXPECT_TRUE(prompt.ok);
  EXPECT_TRUE(prompt.text.empty());
  EXPECT_EQ(prompt.tokens, 0);
}

std::string randomText(std::mt19937& rng, size_t maxBytes) {
  static const std::string alphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_()[]{},.:=+-*/@#  \n\n\t";
  static const std::string utf8[] = {"\xc3\xa9", "\xe2\x86\x92", "\xf0\x9f\x9a\x80"};
  size_t length = std::uniform_int_distribution<size_t>(0, maxBytes)(rng);
  std::string text;
  while (text.size() < length) {
    int kind = std::uniform_int_distribution<int>(0, 99)(rng);
    if (kind < 3) text += utf8[kind];
    else if (kind < 6) text += std::string(std::uniform_int_distribution<int>(13, 40)(rng), 'w');
    else text += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
  }
  return text;
}

TEST(BuildPrompt, PropertyBudgetNeverExceededAndHotKeptVerbatim) {
  std::mt19937 rng(20261129);
  int succeeded = 0, failed = 0, truncatedSeen = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<ContextItem> items;
    int count = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int i = 0; i < count; ++i) {
      Tier tier = static_cast<Tier>(std::uniform_int_distribution<int>(0, 2)(rng));
      size_t maxBytes = tier == Tier::Hot ? 400 : 1500;
      items.push_back(item(tier, "item " + std::to_string(i), randomText(rng, maxBytes),
                           std::uniform_int_distribution<int>(0, 4)(rng)));
    }
    TokenBudget budget;
    budget.window = std::uniform_int_distribution<int>(0, 3000)(rng);
    budget.system = std::uniform_int_distribution<int>(0, 200)(rng);
    budget.generation = std::uniform_int_distribution<int>(0, 300)(rng);
    budget.reserve = std::uniform_int_distribution<int>(0, 100)(rng);
    BuiltPrompt prompt = buildPrompt(items, budget);
    SCOPED_TRACE("trial " + std::to_string(trial));
    if (!prompt.ok) {
      ++failed;
      ASSERT_FALSE(prompt.error.empty());
      // It may only fail when the hot tier alone cannot fit.
      if (budget.available() < 0) continue;
      std::vector<ContextItem> hotOnly;
      for (const ContextItem& it : items)
        if (it.tier == Tier::Hot) hotOnly.push_back(it);
      TokenBudget roomy = budget;
      roomy.window += 1000000;
      BuiltPrompt hotPrompt = buildPrompt(hotOnly, roomy);
      ASSERT_TRUE(hotPrompt.ok) << hotPrompt.error;
      ASSERT_GT(hotPrompt.tokens, budget.available()) << prompt.error;
      continue;
    }
    ++succeeded;
    ASSERT_EQ(prompt.tokens, estimateTokens(prompt.text));
    ASSERT_LE(prompt.tokens, budget.available());
    ASSERT_EQ(prompt.kept.size() + prompt.dropped.size(), items.size());
    for (const ContextItem& it : items) {
      if (it.tier != Tier::Hot) continue;
      ASSERT_TRUE(contains(prompt.kept, it.label));
      ASSERT_NE(prompt.text.find("## " + it.label + "\n" + it.text), std::string::npos);
    }
    for (const std::string& label : prompt.truncated) ASSERT_TRUE(contains(prompt.kept, label));
    truncatedSeen += prompt.truncated.empty() ? 0 : 1;
    // Tier order in the text: no warm item after a cold one, no hot after either.
    int lastTier = 0;
    for (const std::string& label : prompt.kept) {
      auto match = std::find_if(items.begin(), items.end(),
                                [&](const ContextItem& it) { return it.label == label; });
      int tier = static_cast<int>(match->tier);
      ASSERT_GE(tier, lastTier);
      lastTier = tier;
    }
  }
  // The generator must exercise every path.
  EXPECT_GT(succeeded, 500);
  EXPECT_GT(failed, 20);
  EXPECT_GT(truncatedSeen, 50);
}

}  // namespace
}  // namespace argus::agent
