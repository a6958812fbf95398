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
  // The lexer's strings and comments (grammar/Argus.g4), scanned from the top:
  // a triple-quoted string spans lines and hides a `#` on any of them; a
  // one-line string ('...' or "...", backslash escapes) ends at its quote or
  // its line; a `#` outside both starts a comment that runs to the line's end.
  enum class In { Code, Line, Triple, Comment } in = In::Code;
  char quote = 0;
  for (size_t i = 0; i < begin; ++i) {
    char c = text[i];
    switch (in) {
      case In::Comment:
        if (c == '\n') in = In::Code;
        break;
      case In::Line:
        if (c == '\\' && i + 1 < begin && text[i + 1] != '\n') ++i;
        else if (c == quote || c == '\n') in = In::Code;
        break;
      case In::Triple:
        if (c == quote && text.substr(i, 3) == std::string(3, quote)) {
          in = In::Code;
          i += 2;
        }
        break;
      case In::Code:
        if (c == '#') {
          in = In::Comment;
        } else if (c == '"' || c == '\'') {
          quote = c;
          bool triple = text.substr(i, 3) == std::string(3, c);
          in = triple ? In::Triple : In::Line;
          if (triple) i += 2;
        }
        break;
    }
  }
  return in == In::Comment;
}

}  // namespace argus::lsp
