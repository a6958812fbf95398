// The text of an open document and how LSP edits change it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lsp/protocol.h"

namespace argus::lsp {

// Applies didChange content changes in order: a change with a range replaces
// that range (UTF-16 positions; out-of-range positions clamp to the text, a
// reversed range is normalised), one without replaces the whole text.
void applyContentChanges(std::string& text, const std::vector<ContentChange>& changes);

}  // namespace argus::lsp
