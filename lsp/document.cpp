#include "lsp/document.h"

#include <algorithm>
#include <utility>

namespace argus::lsp {

void applyContentChanges(std::string& text, const std::vector<ContentChange>& changes) {
  for (const ContentChange& change : changes) {
    if (!change.range) {
      text = change.text;
      continue;
    }
    // Each ranged change refers to the text as left by the previous one.
    SourceFile file("", text);
    uint32_t begin = offsetOf(file, change.range->start);
    uint32_t end = offsetOf(file, change.range->end);
    if (end < begin) std::swap(begin, end);
    text.replace(begin, end - begin, change.text);
  }
}

}  // namespace argus::lsp
