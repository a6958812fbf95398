// Decoding of number and string literals: the lexer validates with these,
// the AST builder takes the values from them.
#include <algorithm>
#include <charconv>
#include <limits>

#include "frontend/lexer_internal.h"

namespace argus::frontend {

namespace {

int digitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

bool fail(LiteralError* error, std::string note) {
  if (error) error->note = std::move(note);
  return false;
}

// Removes '_' separators; each must stand between two digits (after a base
// prefix, a leading '_' is allowed: 0x_ff).
bool stripUnderscores(std::string_view digits, bool leadingAllowed, std::string& out, LiteralError* error) {
  out.clear();
  for (size_t i = 0; i < digits.size(); ++i) {
    if (digits[i] != '_') {
      out += digits[i];
      continue;
    }
    bool before = i > 0 ? digitValue(digits[i - 1]) < 16 : leadingAllowed;
    bool after = i + 1 < digits.size() && digitValue(digits[i + 1]) < 16;
    if (!before || !after) return fail(error, "'_' may only stand between two digits, as in 1_000");
  }
  return true;
}

}  // namespace

std::optional<int64_t> decodeInt(std::string_view text, LiteralError* error) {
  int base = 10;
  std::string_view digits = text;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) base = 16;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) base = 2;
  if (base != 10) digits.remove_prefix(2);
  std::string clean;
  if (!stripUnderscores(digits, base != 10, clean, error)) return std::nullopt;
  if (clean.empty()) {
    fail(error, base == 16 ? "'0x' must be followed by hexadecimal digits" : "'0b' must be followed by binary digits (0 or 1)");
    return std::nullopt;
  }
  if (base == 10 && clean.size() > 1 && clean[0] == '0' && clean.find_first_not_of('0') != std::string::npos) {
    fail(error, "decimal integers cannot start with 0; write " + clean.substr(clean.find_first_not_of('0')));
    return std::nullopt;
  }
  uint64_t value = 0;
  for (char c : clean) {
    int d = digitValue(c);
    if (d >= base) {
      fail(error, base == 2 ? "binary literals use only the digits 0 and 1" : "not a digit: '" + std::string(1, c) + "'");
      return std::nullopt;
    }
    if (value > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      fail(error, "the value does not fit in 64 bits (the largest integer is 9223372036854775807)");
      return std::nullopt;
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return static_cast<int64_t>(value);
}

std::optional<double> decodeFloat(std::string_view text, LiteralError* error) {
  std::string clean;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '_') {
      clean += text[i];
      continue;
    }
    bool before = i > 0 && text[i - 1] >= '0' && text[i - 1] <= '9';
    bool after = i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9';
    if (!before || !after) {
      fail(error, "'_' may only stand between two digits, as in 1_000.5");
      return std::nullopt;
    }
  }
  double value = 0;
  auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), value);
  if (ec == std::errc::result_out_of_range) {
    fail(error, "the value is out of the range of a 64-bit float");
    return std::nullopt;
  }
  if (ec != std::errc() || end != clean.data() + clean.size()) {
    fail(error, "not a floating-point number");
    return std::nullopt;
  }
  return value;
}

std::string decodeString(std::string_view text, std::vector<BadEscape>* bad) {
  if (text.empty()) return {};
  char quote = text[0];
  size_t open = (text.size() >= 3 && text[1] == quote && text[2] == quote) ? 3 : 1;
  size_t close = 0;
  if (text.size() >= 2 * open && text.substr(text.size() - open) == std::string(open, quote)) close = open;
  if (text.size() < open + close) return {};
  std::string_view body = text.substr(open, text.size() - open - close);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 >= body.size()) {
      out += body[i];
      continue;
    }
    char next = body[i + 1];
    switch (next) {
      case '\\': out += '\\'; break;
      case '"': out += '"'; break;
      case '\'': out += '\''; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': out += '\0'; break;
      case '\n': break;  // a line continuation inside a triple-quoted string
      default: {
        // Keep an unknown escape as written, whole UTF-8 character included.
        size_t len = 1;
        unsigned char c = static_cast<unsigned char>(next);
        if (c >= 0xC0) len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        len = std::min(len, body.size() - i - 1);
        std::string spelling(body.substr(i, 1 + len));
        if (bad) bad->push_back({static_cast<uint32_t>(open + i), spelling});
        out += spelling;
        i += len;
        continue;
      }
    }
    ++i;
  }
  return out;
}

}  // namespace argus::frontend
