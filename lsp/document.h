// The text of an open document and how LSP edits change it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lsp/protocol.h"

namespace argus::lsp {

// What one content change did: bytes [begin, end) of the text before it are
// now `length` bytes.
struct AppliedChange {
  uint32_t begin = 0, end = 0, length = 0;
  bool wholeText = false;      // a change without a range
  bool insideComment = false;  // see staysInsideComment
};

// Applies didChange content changes in order: a change with a range replaces
// that range (UTF-16 positions; out-of-range positions clamp to the text, a
// reversed range is normalised), one without replaces the whole text.
std::vector<AppliedChange> applyContentChanges(std::string& text, const std::vector<ContentChange>& changes);

// Whether replacing bytes [begin, end) of `text` by `inserted` keeps to the
// comment of one line: no line break removed or inserted, and a `#` outside
// any string literal (triple-quoted ones span lines) before `begin` on that
// line. Such an edit changes no token: the ones after it only move by the
// change in length. Scans the text up to `begin` (no lexer).
bool staysInsideComment(std::string_view text, uint32_t begin, uint32_t end, std::string_view inserted);

}  // namespace argus::lsp
