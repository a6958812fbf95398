// Carries diagnostics computed on one version of a document over to another
// by lining up their tokens: the tokens both versions share at the start and at
// the end keep their meaning, so a range on them moves with them. This is what
// lets an edit inside a comment or whitespace reuse the last analysis, and an
// unchanged kernel keep its checker findings while another one is edited.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "frontend/lexer.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::lsp {

// Two token streams are the same program when every token has the same kind
// and text (the lexer drops comments; whitespace only shows in INDENT tokens).
bool sameTokens(const std::vector<TokenInfo>& a, const std::vector<TokenInfo>& b);

// An edit inside a comment (document.h staysInsideComment): the tokens at or
// after `from` (an offset of the text before it) move by `delta` bytes.
struct TokenShift {
  uint32_t from = 0;
  int64_t delta = 0;
};
// The tokens of the text after `shifts` (applied in order), from those before:
// the lexer's answer for that text without running it.
std::vector<TokenInfo> shiftedTokens(std::vector<TokenInfo> tokens, const std::vector<TokenShift>& shifts);

class TokenAlignment {
 public:
  // The files and their tokens must outlive the alignment.
  TokenAlignment(const SourceFile& oldFile, const std::vector<TokenInfo>& oldTokens, const SourceFile& newFile,
                 const std::vector<TokenInfo>& newTokens);

  // Where an offset of the old text is in the new one; nothing when it lies
  // among the tokens that changed.
  std::optional<uint32_t> map(uint32_t offset) const;

  // Moves every range of `diag` (its own, labels, fix-its, the counterexample's
  // trace). False when one cannot be mapped, or when `exact` is asked and a
  // range's line:column changed: the checker quotes line:column in its notes,
  // so such a diagnostic would read wrong until it is computed afresh.
  bool remap(Diagnostic& diag, bool exact) const;

 private:
  std::optional<uint32_t> mapVia(uint32_t offset, size_t oldIndex, size_t newIndex) const;
  bool moveRange(SourceRange& range, bool exact) const;

  const SourceFile& oldFile_;
  const std::vector<TokenInfo>& oldTokens_;
  const SourceFile& newFile_;
  const std::vector<TokenInfo>& newTokens_;
  size_t prefix_ = 0, suffix_ = 0;  // equal tokens at the start and at the end
};

}  // namespace argus::lsp
