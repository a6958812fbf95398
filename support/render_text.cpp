// Human-readable diagnostics in the style of clang: location, severity and code,
// the source line with carets under the range, then everything attached to it.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "support/render.h"

namespace argus {
namespace {

constexpr const char* kReset = "\x1b[0m";
constexpr const char* kBold = "\x1b[1m";
constexpr const char* kRed = "\x1b[1;31m";
constexpr const char* kMagenta = "\x1b[1;35m";
constexpr const char* kCyan = "\x1b[1;36m";
constexpr const char* kGreen = "\x1b[1;32m";

// Terminal columns taken by a code point: 0 for combining marks, 2 for the
// common East Asian wide ranges and emoji, else 1. Enough to keep carets aligned
// under the text people actually write in comments and strings.
unsigned displayWidth(uint32_t cp) {
  if ((cp >= 0x300 && cp <= 0x36F) || (cp >= 0x200B && cp <= 0x200F) || cp == 0xFE0F) return 0;
  if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF && cp != 0x303F) ||
      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
      (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
      (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
      (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD))
    return 2;
  return 1;
}

// A source line as it is shown: tabs expanded, control and malformed bytes made
// visible as '?', and the display column at which every byte of the line starts.
struct DisplayLine {
  std::string text;
  std::vector<unsigned> columnOfByte;  // size = line bytes + 1 (one past the end)
};

DisplayLine expandLine(std::string_view line, unsigned tabStop) {
  if (tabStop == 0) tabStop = 1;
  DisplayLine out;
  out.columnOfByte.assign(line.size() + 1, 0);
  unsigned column = 0;
  for (size_t i = 0; i < line.size();) {
    out.columnOfByte[i] = column;
    char32_t cp = 0;
    size_t len = decodeUtf8At(line, i, &cp);
    if (len == 1 && cp == '\t') {
      unsigned next = (column / tabStop + 1) * tabStop;
      out.text.append(next - column, ' ');
      column = next;
    } else if (len == 0 || cp < 0x20 || cp == 0x7F) {
      out.text += '?';
      column += 1;
      len = 1;
    } else {
      out.text.append(line.substr(i, len));
      column += displayWidth(cp);
      for (size_t k = 1; k < len; ++k) out.columnOfByte[i + k] = column;
    }
    i += len;
  }
  out.columnOfByte[line.size()] = column;
  return out;
}

std::string escapeForQuote(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out;
}

size_t countDigits(uint32_t n) { return std::to_string(n).size(); }

class TextWriter {
 public:
  TextWriter(const SourceFile& file, const TextRenderOptions& options)
      : file_(file), options_(options) {}

  void diagnostic(const Diagnostic& d) {
    bool fileLevel = isFileLevel(d, file_);
    header(d, fileLevel);
    std::vector<const FixIt*> hinted;
    for (const FixIt& fix : d.fixits)
      if (!fileLevel && onlyOnLineOf(fix.range, d.range)) hinted.push_back(&fix);
    if (!fileLevel) snippet(d.range, hinted);
    if (d.counterexample) counterexample(*d.counterexample);
    for (const Label& label : d.labels) note(label);
    for (const std::string& text : d.notes) {
      paint(kCyan, "note:");
      out_ += ' ' + text + '\n';
    }
    for (const FixIt& fix : d.fixits)
      fixit(fix, !fileLevel && onlyOnLineOf(fix.range, d.range));
  }

  std::string take() { return std::move(out_); }

 private:
  void paint(const char* color, std::string_view text) {
    if (options_.color) out_ += color;
    out_ += text;
    if (options_.color) out_ += kReset;
  }

  void location(SourceRange range) {
    LineCol lc = file_.lineCol(range.begin);
    paint(kBold, file_.name() + ':' + std::to_string(lc.line) + ':' + std::to_string(lc.column) + ':');
    out_ += ' ';
  }

  // `file:line:col: error[AG3001]: message`, or `file: error[AG0001]: message`
  // for a diagnostic about the whole file.
  void header(const Diagnostic& d, bool fileLevel) {
    if (fileLevel) {
      paint(kBold, file_.name() + ':');
      out_ += ' ';
    } else {
      location(d.range);
    }
    const char* color = d.severity == Severity::Error     ? kRed
                        : d.severity == Severity::Warning ? kMagenta
                                                          : kCyan;
    paint(color, std::string(severityName(d.severity)) + '[' + d.code() + "]:");
    out_ += ' ';
    if (d.severity == Severity::Note) out_ += d.message;
    else paint(kBold, d.message);
    out_ += '\n';
  }

  void note(const Label& label) {
    location(label.range);
    paint(kCyan, "note:");
    out_ += ' ' + label.message + '\n';
    snippet(label.range, {});
  }

  // True when `a` lies on the single source line where `anchor` starts, so that
  // its fix-it hint can go under the anchor's caret line.
  bool onlyOnLineOf(SourceRange a, SourceRange anchor) const {
    uint32_t line = file_.lineCol(anchor.begin).line;
    return file_.lineCol(a.begin).line == line && file_.lineCol(std::max(a.begin, a.end)).line == line;
  }

  // The source line of `range.begin`, carets under the range (to the end of that
  // line when the range goes on), and one hint line per fix-it on that line.
  void snippet(SourceRange range, const std::vector<const FixIt*>& hints) {
    LineCol begin = file_.lineCol(range.begin);
    LineCol end = file_.lineCol(std::max(range.begin, range.end));
    std::string_view raw = file_.lineText(begin.line);
    DisplayLine line = expandLine(raw, options_.tabStop);
    size_t width = std::max<size_t>(5, countDigits(begin.line) + 1);

    std::string numberText = std::to_string(begin.line);
    std::string sourceLine = std::string(width - numberText.size(), ' ') + numberText + " | " + line.text;
    while (!sourceLine.empty() && sourceLine.back() == ' ') sourceLine.pop_back();
    out_ += sourceLine + '\n';

    auto columnAt = [&](uint32_t byteColumn) {
      return line.columnOfByte[std::min<size_t>(byteColumn - 1, raw.size())];
    };
    unsigned first = columnAt(begin.column);
    unsigned last = end.line == begin.line ? columnAt(end.column) : columnAt(raw.size() + 1);
    std::string carets = "^";
    if (last > first + 1) carets.append(last - first - 1, '~');
    std::string gutter = std::string(width, ' ') + " | ";
    out_ += gutter + std::string(first, ' ');
    paint(kGreen, carets);
    out_ += '\n';

    for (const FixIt* fix : hints) {
      if (fix->replacement.empty() || fix->replacement.find('\n') != std::string::npos) continue;
      out_ += gutter + std::string(columnAt(file_.lineCol(fix->range.begin).column), ' ');
      paint(kGreen, fix->replacement);
      out_ += '\n';
    }
  }

  void counterexample(const Counterexample& cx) {
    std::string who;
    auto add = [&who](const std::string& part) { who += (who.empty() ? "" : ", ") + part; };
    if (cx.thread) {
      std::string thread = "thread " + std::to_string(*cx.thread);
      if (cx.warp && cx.lane)
        thread += " (warp " + std::to_string(*cx.warp) + ", lane " + std::to_string(*cx.lane) + ")";
      add(thread);
    }
    if (!cx.thread || !(cx.warp && cx.lane)) {
      if (cx.warp) add("warp " + std::to_string(*cx.warp));
      if (cx.lane) add("lane " + std::to_string(*cx.lane));
    }
    if (cx.value) add("value " + std::to_string(*cx.value));
    if (cx.block) add("block " + std::to_string(*cx.block));
    if (!who.empty()) out_ += "  counterexample: " + who + '\n';
    if (!cx.iteration.empty()) {
      std::string at;
      for (const auto& [name, value] : cx.iteration)
        at += (at.empty() ? "" : ", ") + name + '=' + std::to_string(value);
      out_ += "  at iteration " + at + '\n';
    }
    for (const auto& [name, value] : cx.facts) out_ += "  " + name + ": " + value + '\n';
    for (const Label& step : cx.trace) note(step);
  }

  void fixit(const FixIt& fix, bool hintedUnderPrimary) {
    std::string old = escapeForQuote(file_.slice(fix.range));
    std::string replacement = escapeForQuote(fix.replacement);
    std::string edit;
    if (old.empty() && replacement.empty()) edit = "no change";
    else if (old.empty()) edit = "insert '" + replacement + "'";
    else if (replacement.empty()) edit = "remove '" + old + "'";
    else edit = "replace '" + old + "' with '" + replacement + "'";
    // A message that only restates the edit ("replace with 'load'") adds nothing.
    bool restates = !replacement.empty() && fix.message.find("'" + replacement + "'") != std::string::npos;
    if (!fix.message.empty() && !restates) edit = fix.message + ": " + edit;
    if (!hintedUnderPrimary) location(fix.range);
    paint(kGreen, "fix-it:");
    out_ += ' ' + edit + '\n';
    if (!hintedUnderPrimary) snippet(fix.range, {&fix});
  }

  const SourceFile& file_;
  const TextRenderOptions& options_;
  std::string out_;
};

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + ' ' + word + (n == 1 ? "" : "s");
}

}  // namespace

bool isFileLevel(const Diagnostic& diag, const SourceFile& file) {
  if (diag.range.begin < diag.range.end) return false;
  return file.text().empty() || std::string_view(diag.code()).rfind("AG0", 0) == 0;
}

std::string renderTextDiagnostic(const Diagnostic& diag, const SourceFile& file,
                                 const TextRenderOptions& options) {
  TextWriter writer(file, options);
  writer.diagnostic(diag);
  return writer.take();
}

std::string renderText(const std::vector<Diagnostic>& diags, const SourceFile& file,
                       const TextRenderOptions& options) {
  std::string out;
  size_t errors = 0, warnings = 0;
  for (const Diagnostic& d : diags) {
    out += renderTextDiagnostic(d, file, options);
    errors += d.severity == Severity::Error;
    warnings += d.severity == Severity::Warning;
  }
  if (errors && warnings) out += plural(errors, "error") + ", " + plural(warnings, "warning") + " generated.\n";
  else if (errors) out += plural(errors, "error") + " generated.\n";
  else if (warnings) out += plural(warnings, "warning") + " generated.\n";
  return out;
}

}  // namespace argus
