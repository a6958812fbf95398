// Internals shared by the lexer and the parser (not part of the library's API):
// the source as ANTLR sees it, the indentation-aware token source, and the
// literal decoders that both the lexer (to validate) and the AST builder (to
// get values) use.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ArgusLexer.h"
#include "antlr4-runtime.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::frontend {

// The file as code points (what ANTLR indexes) plus each code point's byte
// offset, so every token maps back to exact byte ranges. Invalid UTF-8 bytes
// become U+FFFD, one code point per bad byte, so no input can make it throw.
class SourceCharStream : public antlr4::ANTLRInputStream {
 public:
  explicit SourceCharStream(std::string_view utf8);
  // Byte offset of a code point index; the index one past the end maps to the file size.
  uint32_t byteOffset(size_t codePoint) const;
  const std::u32string& codePoints() const { return _data; }

 private:
  std::vector<uint32_t> offsets_;  // empty when the file is ASCII (identity)
  uint32_t byteSize_ = 0;
};

// Byte range of a token ([start, stop] code points, stop < start when empty).
SourceRange tokenRange(const SourceCharStream& input, const antlr4::Token& token);

// The generated lexer plus Python's layout rules: NEWLINE only at the end of a
// logical line, INDENT / DEDENT around blocks, newlines inside brackets
// dropped, blank and comment-only lines ignored, a final NEWLINE and the
// pending DEDENTs at the end of the file. Lexical problems are reported here.
class IndentingLexer : public grammar::ArgusLexer {
 public:
  IndentingLexer(SourceCharStream& input, const SourceFile& file, DiagnosticSink& diags);

  std::unique_ptr<antlr4::Token> nextToken() override;

  // Readable name of a token kind: `NAME`, `INT`, `INDENT`, `'('`, `'def'`.
  std::string kindName(size_t type) const;

  // Byte offsets of lexical errors that changed the token stream (a dropped
  // character, a repaired string or number, an unclosed bracket, a bad
  // dedent), sorted: the parser stays quiet about lines that contain one.
  const std::vector<uint32_t>& damagedOffsets() const { return damaged_; }

 private:
  struct Level {
    uint32_t width = 0;
    int64_t alias = -1;  // a second width accepted after an inconsistent dedent
  };
  struct OpenBracket {
    size_t type;
    size_t start;  // code point index
  };

  void pump();
  void onNewline(std::unique_ptr<antlr4::Token> token);
  void onEndOfFile(std::unique_ptr<antlr4::Token> token);
  void onSignificant(std::unique_ptr<antlr4::Token> token);
  void checkLiteral(antlr4::Token& token);
  void trackBracket(const antlr4::Token& token);
  void applyIndentation(size_t tokenStart);
  void checkIndentChars(size_t lineStart, size_t wsEnd);
  void reportUnclosedBrackets(size_t from);  // brackets_[from..] are unclosed
  void pushToken(size_t type, size_t start, size_t stop, const std::string& text);
  SourceRange bytes(size_t start, size_t end) const;  // code point half-open range
  void markDamaged(uint32_t offset);

  SourceCharStream& input_;
  const SourceFile& file_;
  DiagnosticSink& diags_;
  std::deque<std::unique_ptr<antlr4::Token>> pending_;
  std::vector<Level> levels_{Level{}};
  std::vector<OpenBracket> brackets_;
  std::unique_ptr<antlr4::Token> lineBreak_;  // first NEWLINE since the last significant token
  bool anySignificant_ = false;
  size_t lastSignificantType_ = 0;
  bool finished_ = false;
  char32_t indentChar_ = 0;  // ' ' or '\t': what the file indents with
  size_t indentCharLine_ = 0;
  bool reportedIndentChars_ = false;
  std::vector<uint32_t> damaged_;
};

// Literal decoding. Each returns nullopt (with a short reason) when the text
// is not a valid literal of its kind.
struct LiteralError {
  std::string note;
};
std::optional<int64_t> decodeInt(std::string_view text, LiteralError* error = nullptr);
std::optional<double> decodeFloat(std::string_view text, LiteralError* error = nullptr);
struct BadEscape {
  uint32_t offset;  // within the token text
  std::string spelling;
};
// The value of a string token (quotes removed, escapes applied); bad escapes
// are kept verbatim and listed.
std::string decodeString(std::string_view text, std::vector<BadEscape>* bad = nullptr);

}  // namespace argus::frontend
