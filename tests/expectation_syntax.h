// The inline expectation syntax shared by the golden files (tests/golden) and
// the checker corpus (tests/checker):
//   # expect-error@+1:COL-ENDCOL CODE: message      (also warning/note; @N, @-N)
// (`//` instead of `#` in IR text, tests/golden/checker_ir/*.ir), and, on the lines
// after one, what the diagnostic carries besides its message (tests/golden only):
//   # expect-fixit@+D:COL-ENDCOL "replacement": message
//   # expect-label@+D:COL-ENDCOL: the label's message
//   # expect-detail: the text of a note
// A fix-it's or a label's @+D counts from the diagnostic's line (not the comment's);
// COL-ENDCOL are the first and last columns it covers (`@+D:COL` alone: an insertion before COL,
// `COL-+E:ENDCOL`: a range that ends E lines below the diagnostic's), and the
// replacement is quoted with \\, \" and \n escapes. A file with any expect-fixit line
// states every fix-it of every diagnostic it announces (none where it states none), and
// likewise a file with any expect-label line every label, one with any expect-detail
// line every note.
#pragma once

#include <cstdint>
#include <functional>
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
  std::vector<std::string> fixits;   // the text after `expect-fixit`, in order
  std::vector<std::string> labels;   // the text after `expect-label`, in order
  std::vector<std::string> details;  // the notes, in order
  std::string str() const {
    std::string s = severity + " at " + std::to_string(line);
    if (hasColumns) s += ":" + std::to_string(col) + "-" + std::to_string(endCol);
    s += " " + code + ": " + message;
    for (const std::string& f : fixits) s += "\n    fix-it" + f;
    for (const std::string& l : labels) s += "\n    label" + l;
    for (const std::string& d : details) s += "\n    detail: " + d;
    return s;
  }
};

enum class AttachedKind { FixIt, Label, Detail };

// An expect-fixit or expect-detail line: its kind and its text.
inline std::optional<std::pair<AttachedKind, std::string>> parseAttachedLine(const std::string& line) {
  static const std::regex kFixItRe(R"((?:#|//)\s*expect-fixit(@.*)$)");
  static const std::regex kLabelRe(R"((?:#|//)\s*expect-label(@.*)$)");
  static const std::regex kDetailRe(R"((?:#|//)\s*expect-detail:\s?(.*)$)");
  std::smatch m;
  std::optional<std::pair<AttachedKind, std::string>> out;
  if (std::regex_search(line, m, kFixItRe)) out.emplace(AttachedKind::FixIt, m[1]);
  else if (std::regex_search(line, m, kLabelRe)) out.emplace(AttachedKind::Label, m[1]);
  else if (std::regex_search(line, m, kDetailRe)) out.emplace(AttachedKind::Detail, m[1]);
  else return std::nullopt;
  while (!out->second.empty() && (out->second.back() == '\r' || out->second.back() == ' ')) out->second.pop_back();
  return out;
}

// Where a line of the file will be once the expectation comments are rewritten
// (tests/golden_runner.cpp's updater); the identity when checking.
using LineMap = std::function<uint32_t(uint32_t)>;
inline uint32_t sameLine(uint32_t line) { return line; }

// A range in that syntax ("@+D:COL-ENDCOL"), its lines counted from `diagnosticLine`.
inline std::string rangeText(SourceRange range, const SourceFile& file, uint32_t diagnosticLine,
                             const LineMap& lineMap = sameLine) {
  auto lineDelta = [&](uint32_t line) {
    const int64_t d = static_cast<int64_t>(lineMap(line)) - static_cast<int64_t>(lineMap(diagnosticLine));
    return (d >= 0 ? "+" : "") + std::to_string(d);
  };
  const LineCol begin = file.lineCol(range.begin);
  std::string s = "@" + lineDelta(begin.line) + ":" + std::to_string(begin.column);
  if (range.end > range.begin) {
    const LineCol last = file.lineCol(range.end - 1);
    s += "-";
    if (last.line != begin.line) s += lineDelta(last.line) + ":";
    s += std::to_string(last.column);
  }
  return s;
}

// A fix-it in that syntax, its lines counted from `diagnosticLine`.
inline std::string fixitText(const FixIt& fixit, const SourceFile& file, uint32_t diagnosticLine,
                             const LineMap& lineMap = sameLine) {
  std::string s = rangeText(fixit.range, file, diagnosticLine, lineMap) + " \"";
  for (char c : fixit.replacement) {
    if (c == '\\' || c == '"') s += '\\';
    if (c == '\n') s += "\\n";
    else s += c;
  }
  s += "\"";
  if (!fixit.message.empty()) s += ": " + fixit.message;
  return s;
}

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
inline Expectation expectationOf(const Diagnostic& d, const SourceFile& file, const LineMap& lineMap = sameLine) {
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
  for (const FixIt& f : d.fixits) e.fixits.push_back(fixitText(f, file, e.line, lineMap));
  for (const Label& l : d.labels) e.labels.push_back(rangeText(l.range, file, e.line, lineMap) + ": " + l.message);
  for (const std::string& note : d.notes) {  // one comment line each, as parseAttachedLine reads it back
    std::string text;
    for (char c : note) text += c == '\n' ? std::string("\\n") : std::string(1, c);
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
    e.details.push_back(text);
  }
  return e;
}

}  // namespace argus::testing
