// Source text, byte ranges and line/column mapping for one `.ag` file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace argus {

// Half-open byte range [begin, end) in the compilation's single source file.
struct SourceRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool empty() const { return begin == end; }
  bool operator==(const SourceRange&) const = default;
};

// 1-based line; column is a 1-based byte column (what clang prints).
struct LineCol {
  uint32_t line = 1;
  uint32_t column = 1;
};

inline SourceRange joinRanges(SourceRange a, SourceRange b) {
  return {a.begin < b.begin ? a.begin : b.begin, a.end > b.end ? a.end : b.end};
}

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  std::string_view slice(SourceRange r) const;

  LineCol lineCol(uint32_t offset) const;
  uint32_t lineCount() const { return static_cast<uint32_t>(lineStarts_.size()); }
  // Text of a 1-based line without its newline.
  std::string_view lineText(uint32_t line) const;
  // Byte offset of a 1-based line and 1-based byte column, clamped into the file.
  uint32_t offsetOf(uint32_t line, uint32_t column) const;
  // LSP positions count UTF-16 code units on a 0-based line.
  uint32_t utf16Column(uint32_t offset) const;
  uint32_t offsetOfUtf16(uint32_t line0, uint32_t utf16Col) const;

 private:
  std::string name_;
  std::string text_;
  std::vector<uint32_t> lineStarts_;
};

// The architecture a source names in a line `# arch: sm_90a` (the convention of
// kernels that need another target than the default: argusc, the scripts and the
// tests read it), or "" when it has none. Whether argusc supports it is the driver's
// question (isSupportedArch).
std::string declaredArch(std::string_view text);

// Length of the well-formed UTF-8 sequence at `s[i]` (1 to 4), with its code
// point in `*codePoint`; 0 when the bytes there are not one (truncated, overlong,
// a surrogate, or beyond U+10FFFF).
size_t decodeUtf8At(std::string_view s, size_t i, char32_t* codePoint);

// True when `text` is valid UTF-8; on failure `badOffset` is the first bad byte.
bool isValidUtf8(std::string_view text, uint32_t* badOffset = nullptr);

}  // namespace argus
