#include "lsp/remap.h"

#include <algorithm>

namespace argus::lsp {

namespace {

bool sameToken(const TokenInfo& a, const TokenInfo& b) { return a.kind == b.kind && a.text == b.text; }

}  // namespace

bool sameTokens(const std::vector<TokenInfo>& a, const std::vector<TokenInfo>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), sameToken);
}

std::vector<TokenInfo> shiftedTokens(std::vector<TokenInfo> tokens, const std::vector<TokenShift>& shifts) {
  for (const TokenShift& shift : shifts)
    for (TokenInfo& token : tokens)
      if (token.range.begin >= shift.from) {
        token.range.begin = static_cast<uint32_t>(token.range.begin + shift.delta);
        token.range.end = static_cast<uint32_t>(token.range.end + shift.delta);
      }
  return tokens;
}

TokenAlignment::TokenAlignment(const SourceFile& oldFile, const std::vector<TokenInfo>& oldTokens,
                               const SourceFile& newFile, const std::vector<TokenInfo>& newTokens)
    : oldFile_(oldFile), oldTokens_(oldTokens), newFile_(newFile), newTokens_(newTokens) {
  size_t limit = std::min(oldTokens.size(), newTokens.size());
  while (prefix_ < limit && sameToken(oldTokens[prefix_], newTokens[prefix_])) ++prefix_;
  while (suffix_ < limit - prefix_ &&
         sameToken(oldTokens[oldTokens.size() - 1 - suffix_], newTokens[newTokens.size() - 1 - suffix_]))
    ++suffix_;
}

// `offset` lies in old token `oldIndex` or in the gap after it; new token
// `newIndex` is the same token. Inside a token the distance from its start is
// kept; in a gap (whitespace, comments) the distance from the token's end,
// clamped to the new gap.
std::optional<uint32_t> TokenAlignment::mapVia(uint32_t offset, size_t oldIndex, size_t newIndex) const {
  const TokenInfo& was = oldTokens_[oldIndex];
  const TokenInfo& is = newTokens_[newIndex];
  if (offset <= was.range.end) return is.range.begin + (offset - was.range.begin);
  uint32_t gapEnd = newIndex + 1 < newTokens_.size() ? newTokens_[newIndex + 1].range.begin
                                                     : static_cast<uint32_t>(newFile_.text().size());
  uint32_t gap = gapEnd > is.range.end ? gapEnd - is.range.end : 0;
  return is.range.end + std::min(offset - was.range.end, gap);
}

std::optional<uint32_t> TokenAlignment::map(uint32_t offset) const {
  // The last old token that starts at or before `offset`.
  auto after = std::upper_bound(oldTokens_.begin(), oldTokens_.end(), offset,
                                [](uint32_t o, const TokenInfo& t) { return o < t.range.begin; });
  if (after == oldTokens_.begin()) {
    // Before the first token: the file's leading comments and blank lines.
    if (prefix_ == 0 || newTokens_.empty()) return std::nullopt;
    return std::min(offset, newTokens_.front().range.begin);
  }
  size_t index = static_cast<size_t>(after - oldTokens_.begin()) - 1;
  if (index < prefix_) return mapVia(offset, index, index);
  if (index >= oldTokens_.size() - suffix_) return mapVia(offset, index, index + newTokens_.size() - oldTokens_.size());
  return std::nullopt;
}

bool TokenAlignment::moveRange(SourceRange& range, bool exact) const {
  std::optional<uint32_t> begin = map(range.begin), end = map(range.end);
  if (!begin || !end || *end < *begin) return false;
  if (exact) {
    LineCol oldBegin = oldFile_.lineCol(range.begin), newBegin = newFile_.lineCol(*begin);
    LineCol oldEnd = oldFile_.lineCol(range.end), newEnd = newFile_.lineCol(*end);
    if (oldBegin.line != newBegin.line || oldBegin.column != newBegin.column || oldEnd.line != newEnd.line ||
        oldEnd.column != newEnd.column)
      return false;
  }
  range.begin = *begin;
  range.end = *end;
  return true;
}

bool TokenAlignment::remap(Diagnostic& diag, bool exact) const {
  if (!moveRange(diag.range, exact)) return false;
  for (Label& label : diag.labels)
    if (!moveRange(label.range, exact)) return false;
  for (FixIt& fix : diag.fixits)
    if (!moveRange(fix.range, exact)) return false;
  if (diag.counterexample)
    for (Label& step : diag.counterexample->trace)
      if (!moveRange(step.range, exact)) return false;
  return true;
}

}  // namespace argus::lsp
