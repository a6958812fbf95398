// Active context management for the LLM path: every prompt is rebuilt from
// hot (task, incumbent, latest diagnostics), warm (retrieved Cases) and cold
// (knowledge base) tiers under an explicit token budget
// B = W - S - G - R (window, system prompt, generation, reserve).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace argus::agent {

// A conservative estimate of a text's tokens (never below the real count of
// common BPE tokenizers on code: about one token per 3 bytes, plus one per
// whitespace-separated word over 12 bytes).
int estimateTokens(std::string_view text);

enum class Tier { Hot, Warm, Cold };

struct ContextItem {
  Tier tier = Tier::Cold;
  std::string label;    // "task", "incumbent", "diagnostics", "case 12", "kb: swizzle"
  std::string text;
  double priority = 0;  // within a tier, higher first
};

struct TokenBudget {
  int window = 32768, system = 0, generation = 4096, reserve = 512;
  int available() const { return window - system - generation - reserve; }
};

struct BuiltPrompt {
  bool ok = false;
  std::string error;    // when the hot tier alone does not fit
  std::string text;     // the user message: the kept items, by tier
  int tokens = 0;       // estimateTokens(text) <= budget.available()
  std::vector<std::string> kept, dropped, truncated;  // labels
};

// Hot items are all kept (or the build fails); warm then cold items are added
// by priority while they fit; a cold or warm item that does not fit whole may
// be truncated to the remaining budget if at least 64 tokens remain.
BuiltPrompt buildPrompt(const std::vector<ContextItem>& items, const TokenBudget& budget);

}  // namespace argus::agent
