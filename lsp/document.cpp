#include "lsp/document.h"

#include <algorithm>
#include <utility>

namespace argus::lsp {

std::vector<AppliedChange> applyContentChanges(std::string& text, const std::vector<ContentChange>& changes) {
  std::vector<AppliedChange> applied;
  for (const ContentChange& change : changes) {
    if (!change.range) {
      applied.push_back(AppliedChange{0, static_cast<uint32_t>(text.size()), static_cast<uint32_t>(change.text.size()),
                                      true, false});
      text = change.text;
      continue;
    }
    // Each ranged change refers to the text as left by the previous one.
    SourceFile file("", text);
    uint32_t begin = offsetOf(file, change.range->start);
    uint32_t end = offsetOf(file, change.range->end);
    if (end < begin) std::swap(begin, end);
    bool comment = staysInsideComment(text, begin, end, change.text);
    text.replace(begin, end - begin, change.text);
    applied.push_back(AppliedChange{begin, end, static_cast<uint32_t>(change.text.size()), false, comment});
  }
  return applied;
}

bool staysInsideComment(std::string_view text, uint32_t begin, uint32_t end, std::string_view inserted) {
  if (begin > end || end > text.size()) return false;
  auto breaksLine = [](std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; };
  if (breaksLine(inserted) || breaksLine(text.substr(begin, end - begin))) return false;
  size_t lineStart = text.rfind('\n', begin == 0 ? 0 : begin - 1);
  lineStart = lineStart == std::string_view::npos || begin == 0 ? 0 : lineStart + 1;
  // The lexer's view of the line up to `begin`: strings ('...' or "...",
  // backslash escapes) hide a `#`; the first `#` outside them starts the comment.
  char quote = 0;
  for (size_t i = lineStart; i < begin; ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return true;
    }
  }
  return false;
}

}  // namespace argus::lsp
