#include "support/source.h"

#include <algorithm>

namespace argus {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  lineStarts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') lineStarts_.push_back(i + 1);
}

std::string_view SourceFile::slice(SourceRange r) const {
  uint32_t size = static_cast<uint32_t>(text_.size());
  uint32_t b = std::min(r.begin, size), e = std::min(std::max(r.end, b), size);
  return std::string_view(text_).substr(b, e - b);
}

LineCol SourceFile::lineCol(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - lineStarts_.begin());
  return {line, offset - lineStarts_[line - 1] + 1};
}

std::string_view SourceFile::lineText(uint32_t line) const {
  if (line == 0 || line > lineStarts_.size()) return {};
  uint32_t b = lineStarts_[line - 1];
  uint32_t e = line < lineStarts_.size() ? lineStarts_[line] : static_cast<uint32_t>(text_.size());
  std::string_view s = std::string_view(text_).substr(b, e - b);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

uint32_t SourceFile::offsetOf(uint32_t line, uint32_t column) const {
  if (line == 0) line = 1;
  if (line > lineStarts_.size()) return static_cast<uint32_t>(text_.size());
  uint32_t len = static_cast<uint32_t>(lineText(line).size());
  uint32_t col = std::min(column == 0 ? 0u : column - 1, len);
  return lineStarts_[line - 1] + col;
}

uint32_t SourceFile::utf16Column(uint32_t offset) const {
  LineCol lc = lineCol(offset);
  uint32_t units = 0;
  for (uint32_t i = lineStarts_[lc.line - 1]; i < offset && i < text_.size();) {
    unsigned char c = static_cast<unsigned char>(text_[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    units += len == 4 ? 2 : 1;
    i += len;
  }
  return units;
}

uint32_t SourceFile::offsetOfUtf16(uint32_t line0, uint32_t utf16Col) const {
  if (line0 >= lineStarts_.size()) return static_cast<uint32_t>(text_.size());
  std::string_view line = lineText(line0 + 1);
  uint32_t i = 0, units = 0;
  while (i < line.size() && units < utf16Col) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    units += len == 4 ? 2 : 1;
    i += len;
  }
  return lineStarts_[line0] + std::min<uint32_t>(i, static_cast<uint32_t>(line.size()));
}

size_t decodeUtf8At(std::string_view s, size_t i, char32_t* codePoint) {
  if (i >= s.size()) return 0;
  unsigned char lead = static_cast<unsigned char>(s[i]);
  size_t len = lead < 0x80 ? 1 : (lead >> 5) == 6 ? 2 : (lead >> 4) == 14 ? 3 : (lead >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  char32_t cp = len == 1 ? lead : len == 2 ? (lead & 0x1F) : len == 3 ? (lead & 0x0F) : (lead & 0x07);
  for (size_t k = 1; k < len; ++k) {
    unsigned char c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  static const char32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinimum[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *codePoint = cp;
  return len;
}

bool isValidUtf8(std::string_view text, uint32_t* badOffset) {
  for (size_t i = 0; i < text.size();) {
    char32_t cp;
    size_t len = decodeUtf8At(text, i, &cp);
    if (len == 0) {
      if (badOffset) *badOffset = static_cast<uint32_t>(i);
      return false;
    }
    i += len;
  }
  return true;
}

std::string declaredArch(std::string_view text) {
  constexpr std::string_view kPrefix = "# arch: ";
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (line.substr(0, kPrefix.size()) == kPrefix) {
      line.remove_prefix(kPrefix.size());
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      return std::string(line);
    }
    at = end + 1;
  }
  return {};
}

}  // namespace argus
