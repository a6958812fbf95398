// The token stream of an Argus source file, as the parser sees it (with
// NEWLINE, INDENT and DEDENT), for `argusc --emit=tokens` and tests.
#pragma once

#include <string>
#include <vector>

#include "support/diagnostic.h"
#include "support/source.h"

namespace argus {

struct TokenInfo {
  std::string kind;  // readable: `NAME`, `INT`, `FLOAT`, `STRING`, `NEWLINE`, `INDENT`, `DEDENT`, `EOF`, `'('`, `'def'`
  std::string text;  // the source text of the token (INDENT: its whitespace; DEDENT, EOF: empty)
  SourceRange range;
};

// Lexes the whole file; lexical problems (AG1001-AG1004, AG1008, AG1009,
// AG1012, and AG1019 for a closing bracket of the wrong kind) go to `diags`.
// Always ends with an EOF token.
std::vector<TokenInfo> tokenize(const SourceFile& file, DiagnosticSink& diags);

}  // namespace argus
