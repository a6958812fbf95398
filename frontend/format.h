// The canonical formatter for `.ag` files (`argusc format`, LSP formatting).
// It works from the token stream and the source text between tokens, so
// comments and the line breaks written inside brackets survive; it never
// reformats a file that does not lex and parse cleanly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "support/diagnostic.h"
#include "support/source.h"

namespace argus {

struct FormatOptions {
  unsigned indentWidth = 4;    // spaces per block level
  unsigned maxBlankLines = 2;  // longest run of blank lines kept
};

// The canonical text of `file`, or nullopt when the file has lexical or syntax
// errors (then `whyNot`, when given, says where the first one is).
std::optional<std::string> formatSource(const SourceFile& file, const FormatOptions& options = {},
                                        std::string* whyNot = nullptr);

// The lexical and syntax diagnostics that keep `file` from being formatted
// (empty when it can be formatted).
std::vector<Diagnostic> formatBlockers(const SourceFile& file);

}  // namespace argus
