// Active context management: the prompt is rebuilt every time from the hot,
// warm and cold tiers under an explicit token budget.
//
// The token estimate is additive over pieces that meet at whitespace, so the
// builder keeps running counts instead of re-scanning the prompt: every
// rendered item starts with "## " and ends with "\n", hence the estimate of the
// assembled prompt equals combine(counts of its items) exactly.
#include <algorithm>
#include <limits>
#include <string>

#include "agent/context.h"

namespace argus::agent {
namespace {

constexpr int kMinTokensForTruncation = 64;
constexpr size_t kLongWordBytes = 12;
constexpr std::string_view kTruncationMark =
    "\n[... truncated here: the rest of this item did not fit the token budget ...]\n";

struct TokenCount {
  long long asciiBytes = 0;
  long long otherBytes = 0;  // UTF-8 lead and continuation bytes
  long long longWords = 0;

  void add(const TokenCount& other) {
    asciiBytes += other.asciiBytes;
    otherBytes += other.otherBytes;
    longWords += other.longWords;
  }
  long long tokens() const { return (asciiBytes + 2) / 3 + otherBytes + longWords; }
};

bool isSpace(unsigned char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

TokenCount countTokens(std::string_view text) {
  TokenCount count;
  size_t wordBytes = 0;
  for (unsigned char c : text) {
    if (c < 0x80) ++count.asciiBytes;
    else ++count.otherBytes;
    if (isSpace(c)) {
      if (wordBytes > kLongWordBytes) ++count.longWords;
      wordBytes = 0;
    } else {
      ++wordBytes;
    }
  }
  if (wordBytes > kLongWordBytes) ++count.longWords;
  return count;
}

int clampToInt(long long value) {
  return static_cast<int>(std::min<long long>(value, std::numeric_limits<int>::max()));
}

std::string headingFor(const std::string& label, bool truncated) {
  std::string heading = "## ";
  for (char c : label) heading += (c == '\n' || c == '\r') ? ' ' : c;
  if (truncated) heading += " (truncated)";
  heading += '\n';
  return heading;
}

std::string renderWhole(const ContextItem& item) {
  std::string piece = headingFor(item.label, false) + item.text;
  if (piece.back() != '\n') piece += '\n';
  piece += '\n';
  return piece;
}

std::string renderTruncated(const ContextItem& item, size_t keptBytes) {
  std::string piece = headingFor(item.label, true);
  piece.append(item.text, 0, keptBytes);
  piece += kTruncationMark;
  piece += '\n';
  return piece;
}

// Never split a UTF-8 sequence; prefer ending at a line break when that keeps
// at least half of what fits.
size_t snapCut(const std::string& text, size_t cut) {
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  size_t newline = cut == 0 ? std::string::npos : text.rfind('\n', cut - 1);
  if (newline != std::string::npos && newline + 1 >= cut / 2) cut = newline + 1;
  return cut;
}

// The longest prefix of item.text whose truncated rendering fits in `room` tokens
// next to `used`; 0 when not even a line fits. The estimate grows with the prefix,
// so a binary search finds it.
size_t longestFittingPrefix(const ContextItem& item, const TokenCount& used, long long room) {
  auto fits = [&](size_t bytes) {
    TokenCount total = used;
    total.add(countTokens(renderTruncated(item, bytes)));
    return total.tokens() <= room;
  };
  if (!fits(0)) return 0;
  size_t low = 0, high = item.text.size();  // fits(low) holds
  while (low < high) {
    size_t mid = low + (high - low + 1) / 2;
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return snapCut(item.text, low);
}

int tierRank(Tier tier) {
  switch (tier) {
    case Tier::Hot: return 0;
    case Tier::Warm: return 1;
    case Tier::Cold: return 2;
  }
  return 2;
}

std::string budgetFormula(const TokenBudget& budget) {
  return "window " + std::to_string(budget.window) + " - system " + std::to_string(budget.system) +
         " - generation " + std::to_string(budget.generation) + " - reserve " +
         std::to_string(budget.reserve);
}

}  // namespace

int estimateTokens(std::string_view text) { return clampToInt(countTokens(text).tokens()); }

BuiltPrompt buildPrompt(const std::vector<ContextItem>& items, const TokenBudget& budget) {
  BuiltPrompt result;
  const long long available = static_cast<long long>(budget.window) - budget.system -
                              budget.generation - budget.reserve;
  if (available < 0) {
    result.error = "the token budget leaves no room for the prompt (" + budgetFormula(budget) +
                   " = " + std::to_string(available) +
                   "); raise the window or lower the generation/reserve";
    return result;
  }

  // Tier first, then priority (higher first); ties keep the caller's order.
  std::vector<const ContextItem*> ordered;
  for (const ContextItem& item : items) ordered.push_back(&item);
  std::stable_sort(ordered.begin(), ordered.end(), [](const ContextItem* a, const ContextItem* b) {
    if (tierRank(a->tier) != tierRank(b->tier)) return tierRank(a->tier) < tierRank(b->tier);
    return a->priority > b->priority;
  });

  TokenCount used;
  const ContextItem* largestHot = nullptr;
  long long largestHotTokens = -1;
  for (const ContextItem* item : ordered) {
    if (item->tier != Tier::Hot) continue;
    std::string piece = renderWhole(*item);
    TokenCount count = countTokens(piece);
    if (count.tokens() > largestHotTokens) {
      largestHotTokens = count.tokens();
      largestHot = item;
    }
    used.add(count);
    result.text += piece;
    result.kept.push_back(item->label);
  }
  if (used.tokens() > available) {
    BuiltPrompt failed;
    failed.error = "the hot context (task, incumbent, diagnostics) needs " +
                   std::to_string(used.tokens()) + " tokens but the budget allows " +
                   std::to_string(available) + " (" + budgetFormula(budget) +
                   "); the largest hot item is '" + largestHot->label + "' with " +
                   std::to_string(largestHotTokens) +
                   " tokens: shorten it or use a model with a larger context window";
    return failed;
  }

  for (const ContextItem* item : ordered) {
    if (item->tier == Tier::Hot) continue;
    std::string piece = renderWhole(*item);
    TokenCount count = countTokens(piece);
    TokenCount total = used;
    total.add(count);
    if (total.tokens() <= available) {
      used = total;
      result.text += piece;
      result.kept.push_back(item->label);
      continue;
    }
    if (available - used.tokens() >= kMinTokensForTruncation) {
      size_t keptBytes = longestFittingPrefix(*item, used, available);
      if (keptBytes > 0) {
        std::string truncated = renderTruncated(*item, keptBytes);
        used.add(countTokens(truncated));
        result.text += truncated;
        result.kept.push_back(item->label);
        result.truncated.push_back(item->label);
        continue;
      }
    }
    result.dropped.push_back(item->label);
  }
  result.tokens = clampToInt(used.tokens());
  result.ok = true;
  return result;
}

}  // namespace argus::agent
