// The inline expectation syntax shared by the golden files (tests/golden) and
// the checker corpus (tests/checker):
//   # expect-error@+1:COL-ENDCOL CODE: message      (also warning/note; @N, @-N)
// (`//` instead of `#` in IR text, tests/golden/checker_ir/*.ir)
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::testing {

struct Expectation {
  std::string severity, code, message;
  uint32_t line = 0, col = 0, endCol = 0;
  bool hasColumns = false;
  std::vector<std::pair<std::string, std::string>> counterexample;  // corpus only: key -> expected value
  std::string str() const {
    std::string s = severity + " at " + std::to_string(line);
    if (hasColumns) s += ":" + std::to_string(col) + "-" + std::to_string(endCol);
    return s + " " + code + ": " + message;
  }
};

// The expectation written on `line` (the file's line `lineNo`, from 1), if any.
inline std::optional<Expectation> parseExpectationLine(const std::string& line, uint32_t lineNo) {
  static const std::regex kExpectRe(
      R"((?:#|//)\s*expect-(error|warning|note)@([+-]?)(\d+)(?::(\d+)-(\d+))?\s+(AG\d{4}):\s?(.*)$)");
  std::smatch m;
  if (!std::regex_search(line, m, kExpectRe)) return std::nullopt;
  Expectation e;
  e.severity = m[1];
  uint32_t n = static_cast<uint32_t>(std::stoul(m[3]));
  e.line = m[2] == "+" ? lineNo + n : m[2] == "-" ? lineNo - n : n;
  if (m[4].matched) {
    e.hasColumns = true;
    e.col = static_cast<uint32_t>(std::stoul(m[4]));
    e.endCol = static_cast<uint32_t>(std::stoul(m[5]));
  }
  e.code = m[6];
  e.message = m[7];
  while (!e.message.empty() && (e.message.back() == '\r' || e.message.back() == ' ')) e.message.pop_back();
  return e;
}

// What a diagnostic looks like in that syntax (columns on its first line).
inline Expectation expectationOf(const Diagnostic& d, const SourceFile& file) {
  Expectation e;
  e.severity = severityName(d.severity);
  e.code = d.code();
  e.message = d.message;
  LineCol b = file.lineCol(d.range.begin);
  LineCol last = file.lineCol(d.range.end > d.range.begin ? d.range.end - 1 : d.range.begin);
  e.line = b.line;
  e.col = b.column;
  e.endCol = last.line == b.line ? last.column : static_cast<uint32_t>(file.lineText(b.line).size());
  e.hasColumns = true;
  return e;
}

}  // namespace argus::testing
