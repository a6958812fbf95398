// Document and range formatting: the canonical formatter (frontend/format.h),
// sent back as line edits so that the editor keeps cursors and marks on the
// lines that do not change.
#include <algorithm>
#include <cctype>

#include "frontend/format.h"
#include "lsp/features.h"

namespace argus::lsp {

namespace {

struct Line {
  uint32_t begin = 0, end = 0;  // byte offsets; `end` includes the line break
  std::string text;             // without the line break
};

std::vector<Line> splitLines(const std::string& text) {
  std::vector<Line> lines;
  uint32_t begin = 0, size = static_cast<uint32_t>(text.size());
  while (begin < size) {
    size_t lineBreak = text.find('\n', begin);
    uint32_t end = lineBreak == std::string::npos ? size : static_cast<uint32_t>(lineBreak) + 1;
    uint32_t textEnd = lineBreak == std::string::npos ? size : static_cast<uint32_t>(lineBreak);
    lines.push_back({begin, end, text.substr(begin, textEnd - begin)});
    begin = end;
  }
  return lines;
}

// The formatter changes spacing inside lines and the number of blank lines,
// never the rest: lines match when they are equal without whitespace.
std::string withoutWhitespace(const std::string& line) {
  std::string key;
  for (char c : line)
    if (!std::isspace(static_cast<unsigned char>(c))) key += c;
  return key;
}

// One replacement of whole original lines [firstLine, endLine) by `text`.
struct Hunk {
  uint32_t firstLine = 0, endLine = 0;
  std::string text;
};

std::vector<Hunk> lineHunks(const std::vector<Line>& before, const std::vector<Line>& after) {
  std::vector<Hunk> hunks;
  auto add = [&](uint32_t first, uint32_t end, const std::string& text) {
    if (!hunks.empty() && hunks.back().endLine == first) {
      hunks.back().endLine = end;
      hunks.back().text += text;
    } else {
      hunks.push_back({first, end, text});
    }
  };
  size_t i = 0, j = 0;
  while (i < before.size() || j < after.size()) {
    if (i < before.size() && j < after.size() && before[i].text == after[j].text &&
        before[i].end - before[i].begin == before[i].text.size() + 1) {
      ++i, ++j;
      continue;
    }
    std::string beforeKey = i < before.size() ? withoutWhitespace(before[i].text) : "";
    std::string afterKey = j < after.size() ? withoutWhitespace(after[j].text) : "";
    auto index = static_cast<uint32_t>(i);
    if (i < before.size() && j < after.size() && beforeKey == afterKey) {
      add(index, index + 1, after[j].text + "\n");
      ++i, ++j;
    } else if (i < before.size() && beforeKey.empty()) {
      add(index, index + 1, "");  // a blank line that goes
      ++i;
    } else if (j < after.size() && afterKey.empty()) {
      add(index, index, "\n");  // a blank line that comes
      ++j;
    } else {
      // Not expected; replace the rest in one piece.
      std::string rest;
      for (; j < after.size(); ++j) rest += after[j].text + "\n";
      add(index, static_cast<uint32_t>(before.size()), rest);
      break;
    }
  }
  return hunks;
}

json editsFor(const Snapshot& snapshot, std::optional<Range> only) {
  const SourceFile& file = snapshot.file();
  std::optional<std::string> formatted = formatSource(file);
  if (!formatted) return nullptr;  // never reformat a file that does not parse
  std::vector<Line> before = splitLines(file.text()), after = splitLines(*formatted);
  json edits = json::array();
  auto fileEnd = static_cast<uint32_t>(file.text().size());
  for (const Hunk& hunk : lineHunks(before, after)) {
    if (only) {
      // Keep the hunks that touch the requested lines (an insertion touches
      // the lines on both sides of it).
      uint32_t last = hunk.endLine > hunk.firstLine ? hunk.endLine - 1 : hunk.firstLine;
      uint32_t first = hunk.endLine > hunk.firstLine || hunk.firstLine == 0 ? hunk.firstLine : hunk.firstLine - 1;
      if (last < only->start.line || first > only->end.line) continue;
    }
    uint32_t begin = hunk.firstLine < before.size() ? before[hunk.firstLine].begin : fileEnd;
    uint32_t end = hunk.endLine > hunk.firstLine ? before[hunk.endLine - 1].end : begin;
    edits.push_back(toJson(TextEdit{rangeOf(file, {begin, end}), hunk.text}));
  }
  return edits;
}

}  // namespace

json formatting(const Snapshot& snapshot) { return editsFor(snapshot, std::nullopt); }

json rangeFormatting(const Snapshot& snapshot, Range range) { return editsFor(snapshot, range); }

}  // namespace argus::lsp
