// The canonical formatter. It re-emits the significant tokens of each logical
// line with canonical spacing, and recovers comments, blank lines, backslash
// continuations and the line breaks inside brackets from the source text
// between tokens (the lexer drops comments), so nothing written is lost.
#include "frontend/format.h"

#include <algorithm>
#include <cctype>

#include "frontend/lexer.h"
#include "frontend/parser.h"

namespace argus {

namespace {

bool isPunct(const TokenInfo& t) { return !t.kind.empty() && t.kind[0] == '\''; }
bool isKeyword(const TokenInfo& t) {
  return isPunct(t) && !t.text.empty() && (std::isalpha(static_cast<unsigned char>(t.text[0])) || t.text[0] == '_');
}
bool isAtomKeyword(const TokenInfo& t) {
  return isKeyword(t) && (t.text == "True" || t.text == "False" || t.text == "None");
}
bool isWord(const TokenInfo& t) { return !isPunct(t) || isKeyword(t); }
bool isSymbol(const TokenInfo& t, const char* text) { return isPunct(t) && !isKeyword(t) && t.text == text; }
bool isOpener(const TokenInfo& t) { return isSymbol(t, "(") || isSymbol(t, "[") || isSymbol(t, "{"); }
bool isCloser(const TokenInfo& t) { return isSymbol(t, ")") || isSymbol(t, "]") || isSymbol(t, "}"); }
// Punctuation that is not an operator: brackets, separators, member access.
bool isSeparatorPunct(const TokenInfo& t) {
  return isOpener(t) || isCloser(t) || isSymbol(t, ",") || isSymbol(t, ":") || isSymbol(t, ".") || isSymbol(t, ";");
}
bool isOperator(const TokenInfo& t) { return isPunct(t) && !isKeyword(t) && !isSeparatorPunct(t); }

// One line of the text between two tokens after its first line break.
struct GapLine {
  bool comment = false;
  std::string text;     // the comment, from `#`, without trailing whitespace
  uint32_t column = 0;  // bytes of indentation before the comment
};

// The text between two significant tokens.
struct Gap {
  std::optional<std::string> trailingComment;  // on the first token's line
  bool backslash = false;
  bool lineBreak = false;
  std::vector<GapLine> lines;  // complete lines after the first break (blank or a comment)
};

bool isBlankChar(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\r'; }

std::string trimRight(std::string s) {
  while (!s.empty() && isBlankChar(s.back())) s.pop_back();
  return s;
}

Gap parseGap(std::string_view text) {
  Gap gap;
  size_t i = 0, n = text.size();
  auto readComment = [&]() {
    size_t end = text.find('\n', i);
    if (end == std::string_view::npos) end = n;
    std::string comment = trimRight(std::string(text.substr(i, end - i)));
    i = end;
    return comment;
  };
  // The rest of the first token's line.
  while (i < n && text[i] != '\n') {
    if (text[i] == '#') {
      gap.trailingComment = readComment();
      break;
    }
    if (text[i] == '\\') gap.backslash = true;
    ++i;
  }
  if (i >= n) return gap;
  gap.lineBreak = true;
  ++i;
  // Whole lines up to the indentation of the next token.
  while (i < n) {
    size_t lineStart = i;
    while (i < n && (isBlankChar(text[i]) || text[i] == '\\')) {
      if (text[i] == '\\') gap.backslash = true;
      ++i;
    }
    if (i >= n) break;  // the next token's indentation
    GapLine line;
    if (text[i] == '#') {
      line.comment = true;
      line.column = static_cast<uint32_t>(i - lineStart);
      line.text = readComment();
    }
    if (i < n && text[i] == '\n') ++i;
    gap.lines.push_back(std::move(line));
  }
  return gap;
}

// `#comment` -> `# comment`, like black (`#!`, `#:` and `##` banners are kept).
std::string normalizeComment(const std::string& comment) {
  if (comment.size() >= 2 && comment[0] == '#') {
    char next = comment[1];
    if (next != ' ' && next != '!' && next != ':' && next != '#') return "# " + comment.substr(1);
  }
  return comment;
}

struct LogicalLine {
  std::vector<size_t> tokens;  // indices of significant tokens
  int depth = 0;
  uint32_t originalIndent = 0;  // bytes before the first token on its line
};

class Formatter {
 public:
  Formatter(const SourceFile& file, const std::vector<TokenInfo>& tokens, const FormatOptions& options)
      : file_(file), tokens_(tokens), options_(options) {}

  std::string run() {
    collectLines();
    std::vector<uint32_t> widthAtDepth;  // original indentation of the latest line at each depth
    int lastTopLevel = -1;                // index of the latest depth-0 line
    for (size_t i = 0; i < lines_.size(); ++i) {
      const LogicalLine& line = lines_[i];
      uint32_t gapBegin = i == 0 ? 0 : tokens_[lines_[i - 1].tokens.back()].range.end;
      std::string_view gapText = file_.slice({gapBegin, tokens_[line.tokens.front()].range.begin});
      // The file's first lines are whole lines, not the rest of a token's line.
      Gap gap = i == 0 ? parseGap("\n" + std::string(gapText)) : parseGap(gapText);
      if (i > 0) finishLine(gap);
      std::vector<int> depths = commentDepths(gap, i == 0 ? line.depth : lines_[i - 1].depth, line.depth, widthAtDepth);
      int forcedBlanks = -1;
      bool afterDecorator = i > 0 && isDecorator(lines_[i - 1]);
      if (i > 0 && line.depth == 0 && !afterDecorator &&
          (isDefinitionStart(line) || (lastTopLevel >= 0 && isDefinitionStart(lines_[lastTopLevel]))))
        forcedBlanks = 2;
      emitGapLines(gap, depths, line.depth, i == 0, afterDecorator, forcedBlanks);
      emitLogicalLine(line);
      if (static_cast<int>(widthAtDepth.size()) <= line.depth) widthAtDepth.resize(line.depth + 1);
      widthAtDepth[line.depth] = line.originalIndent;
      if (line.depth == 0) lastTopLevel = static_cast<int>(i);
    }
    // Comments after the last statement; trailing blank lines go.
    uint32_t tailBegin = lines_.empty() ? 0 : tokens_[lines_.back().tokens.back()].range.end;
    std::string_view tailText = file_.slice({tailBegin, static_cast<uint32_t>(file_.text().size())});
    Gap tail = lines_.empty() ? parseGap("\n" + std::string(tailText)) : parseGap(tailText);
    if (!lines_.empty()) finishLine(tail);
    while (!tail.lines.empty() && !tail.lines.back().comment) tail.lines.pop_back();
    if (lines_.empty()) {
      // Only comments: each keeps its own line at the left margin.
      std::vector<int> depths(tail.lines.size(), 0);
      emitGapLines(tail, depths, 0, true, false, -1);
    } else {
      std::vector<int> depths = commentDepths(tail, lines_.back().depth, 0, widthAtDepth);
      emitGapLines(tail, depths, 0, false, false, -1);
    }
    return out_;
  }

 private:
  const SourceFile& file_;
  const std::vector<TokenInfo>& tokens_;
  const FormatOptions& options_;
  std::vector<LogicalLine> lines_;
  std::string out_;

  std::string indent(uint32_t columns) const { return std::string(columns, ' '); }
  uint32_t depthColumns(int depth) const { return static_cast<uint32_t>(depth) * options_.indentWidth; }

  uint32_t currentColumn() const {
    size_t lastBreak = out_.rfind('\n');
    return static_cast<uint32_t>(lastBreak == std::string::npos ? out_.size() : out_.size() - lastBreak - 1);
  }

  void collectLines() {
    int depth = 0;
    LogicalLine current;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const TokenInfo& t = tokens_[i];
      if (t.kind == "INDENT") ++depth;
      else if (t.kind == "DEDENT") depth = std::max(0, depth - 1);
      else if (t.kind == "NEWLINE" || t.kind == "EOF") {
        if (!current.tokens.empty()) lines_.push_back(std::move(current));
        current = LogicalLine{};
      } else {
        if (current.tokens.empty()) {
          current.depth = depth;
          uint32_t lineStart = file_.offsetOf(file_.lineCol(t.range.begin).line, 1);
          current.originalIndent = t.range.begin - lineStart;
        }
        current.tokens.push_back(i);
      }
    }
  }

  const TokenInfo& first(const LogicalLine& line) const { return tokens_[line.tokens.front()]; }
  bool isDecorator(const LogicalLine& line) const { return isSymbol(first(line), "@"); }
  bool isDefinitionStart(const LogicalLine& line) const {
    return line.depth == 0 && (isDecorator(line) || (isKeyword(first(line)) && first(line).text == "def"));
  }

  // The previous line's trailing comment, then its line break.
  void finishLine(const Gap& gap) {
    if (gap.trailingComment) out_ += "  " + normalizeComment(*gap.trailingComment);
    out_ += '\n';
  }

  // Which block depth each comment line of a gap belongs to. Going deeper, or
  // staying, comments take the next line's depth; coming out of blocks, a
  // comment stays in the deepest block whose original indentation it reaches.
  std::vector<int> commentDepths(const Gap& gap, int previousDepth, int nextDepth,
                                 const std::vector<uint32_t>& widthAtDepth) const {
    std::vector<int> depths;
    for (const GapLine& line : gap.lines) {
      int depth = nextDepth;
      if (line.comment && previousDepth > nextDepth) {
        for (int d = previousDepth; d > nextDepth; --d) {
          if (d < static_cast<int>(widthAtDepth.size()) && line.column >= widthAtDepth[d]) {
            depth = d;
            break;
          }
        }
      }
      depths.push_back(depth);
    }
    return depths;
  }

  // Blank and comment lines before a logical line. `forcedBlanks` >= 0 sets the
  // blank lines before the comments attached to the next line (those at its
  // depth with no blank line in between).
  void emitGapLines(const Gap& gap, const std::vector<int>& depths, int nextDepth, bool atFileStart,
                    bool afterDecorator, int forcedBlanks) {
    size_t attached = gap.lines.size();
    while (attached > 0 && gap.lines[attached - 1].comment && depths[attached - 1] == nextDepth) --attached;
    bool anyOutput = !atFileStart;
    unsigned blanks = 0;
    auto flushBlanks = [&](bool beforeAttached) {
      unsigned count = std::min(blanks, options_.maxBlankLines);
      if (beforeAttached && forcedBlanks >= 0) count = static_cast<unsigned>(forcedBlanks);
      if (!anyOutput || afterDecorator) count = 0;
      out_.append(count, '\n');
      blanks = 0;
    };
    for (size_t k = 0; k < gap.lines.size(); ++k) {
      if (k == attached) flushBlanks(true);
      const GapLine& line = gap.lines[k];
      if (!line.comment) {
        ++blanks;
        continue;
      }
      if (k < attached) flushBlanks(false);
      out_ += indent(depthColumns(depths[k])) + normalizeComment(line.text) + "\n";
      anyOutput = true;
    }
    flushBlanks(attached == gap.lines.size());
  }

  struct Frame {
    const TokenInfo* opener;
    uint32_t contentColumn;  // the column just after the bracket
    uint32_t lineIndent;     // indentation of the output line holding the bracket
    bool hanging;            // a line break follows the bracket
    bool annotatedItem;      // the current item has a `:` annotation (`BM: const = 64`)
  };

  void emitLogicalLine(const LogicalLine& line) {
    uint32_t lineIndent = depthColumns(line.depth);
    out_ += indent(lineIndent);
    std::vector<Frame> frames;
    const TokenInfo* previous = nullptr;
    bool previousUnary = false;
    bool previousSpacedEquals = true;
    for (size_t k = 0; k < line.tokens.size(); ++k) {
      const TokenInfo& token = tokens_[line.tokens[k]];
      bool spacedEquals = frames.empty() || (frames.back().annotatedItem && isSymbol(*frames.back().opener, "("));
      if (previous) {
        Gap gap = parseGap(file_.slice({previous->range.end, token.range.begin}));
        if (gap.lineBreak) {
          if (gap.trailingComment) out_ += "  " + normalizeComment(*gap.trailingComment);
          else if (gap.backslash) out_ += " \\";
          uint32_t column = continuationColumn(frames, &token, line.depth);
          // Comment lines sit with the content, even just before a closing bracket.
          uint32_t commentColumn = continuationColumn(frames, nullptr, line.depth);
          for (const GapLine& g : gap.lines)
            if (g.comment) out_ += "\n" + indent(commentColumn) + normalizeComment(g.text);
          out_ += "\n" + indent(column);
          lineIndent = column;
        } else {
          out_ += separator(*previous, token, frames, previousUnary, previousSpacedEquals, spacedEquals);
        }
      }
      out_ += token.text;
      // A decorator's `@` binds to its name like a prefix operator.
      bool unary = isUnaryOperator(previous, token) || (!previous && isSymbol(token, "@"));
      if (isOpener(token)) {
        bool hanging = false;
        if (k + 1 < line.tokens.size())
          hanging = parseGap(file_.slice({token.range.end, tokens_[line.tokens[k + 1]].range.begin})).lineBreak;
        frames.push_back({&token, currentColumn(), lineIndent, hanging, false});
      } else if (isCloser(token) && !frames.empty()) {
        frames.pop_back();
      } else if (!frames.empty() && isSymbol(token, ",")) {
        frames.back().annotatedItem = false;
      } else if (!frames.empty() && isSymbol(token, ":")) {
        frames.back().annotatedItem = true;
      }
      previous = &token;
      previousUnary = unary;
      previousSpacedEquals = spacedEquals;
    }
  }

  // Where a token that starts a continuation line goes: a closing bracket
  // under the line that opened it, content after a hanging bracket one level
  // in, other content aligned with the first item after its bracket.
  uint32_t continuationColumn(const std::vector<Frame>& frames, const TokenInfo* token, int depth) const {
    if (frames.empty()) return depthColumns(depth + 1);  // backslash continuation
    const Frame& frame = frames.back();
    if (token && isCloser(*token)) return frame.lineIndent;
    return frame.hanging ? frame.lineIndent + options_.indentWidth : frame.contentColumn;
  }

  static bool isUnaryOperator(const TokenInfo* previous, const TokenInfo& token) {
    if (!(isSymbol(token, "-") || isSymbol(token, "+") || isSymbol(token, "~"))) return false;
    if (!previous) return true;
    if (isOperator(*previous) || isOpener(*previous) || isSymbol(*previous, ",") || isSymbol(*previous, ":")) return true;
    return isKeyword(*previous) && !isAtomKeyword(*previous);
  }

  // The spacing between two tokens on one output line.
  static std::string separator(const TokenInfo& previous, const TokenInfo& token, const std::vector<Frame>& frames,
                               bool previousUnary, bool previousSpacedEquals, bool spacedEquals) {
    if (isCloser(token) || isSymbol(token, ",") || isSymbol(token, ";")) return "";
    if (isOpener(previous)) return "";
    if (isSymbol(previous, ",") || isSymbol(previous, ";")) return " ";
    if (isSymbol(token, ":")) return "";
    if (isSymbol(previous, ":")) return !frames.empty() && isSymbol(*frames.back().opener, "[") ? "" : " ";
    if (isSymbol(token, ".") || isSymbol(previous, ".")) return "";
    if (previousUnary) return "";
    if (isSymbol(token, "=")) return spacedEquals ? " " : "";
    if (isSymbol(previous, "=")) return previousSpacedEquals ? " " : "";
    if (isOperator(token) || isOperator(previous)) return " ";
    if (isOpener(token)) return isKeyword(previous) && !isAtomKeyword(previous) ? " " : "";
    if (isKeyword(token) || isKeyword(previous)) return " ";  // `(a) and b`, `not x`
    if (isWord(previous) && isWord(token)) return " ";
    return "";
  }
};

}  // namespace

std::vector<Diagnostic> formatBlockers(const SourceFile& file) {
  DiagnosticSink lexDiags;
  tokenize(file, lexDiags);
  DiagnosticSink parseDiags;
  parseModule(file, parseDiags);
  std::vector<Diagnostic> blockers;
  for (const DiagnosticSink* sink : {&lexDiags, &parseDiags})
    for (const Diagnostic& d : sink->diagnostics())
      if (d.severity == Severity::Error) blockers.push_back(d);
  // The parser re-lexes: keep each problem once.
  std::vector<Diagnostic> unique;
  for (const Diagnostic& d : blockers) {
    bool seen = std::any_of(unique.begin(), unique.end(), [&](const Diagnostic& u) {
      return u.id == d.id && u.range == d.range && u.message == d.message;
    });
    if (!seen) unique.push_back(d);
  }
  return unique;
}

std::optional<std::string> formatSource(const SourceFile& file, const FormatOptions& options, std::string* whyNot) {
  std::vector<Diagnostic> blockers = formatBlockers(file);
  if (!blockers.empty()) {
    if (whyNot) {
      LineCol at = file.lineCol(blockers.front().range.begin);
      *whyNot = "the file has syntax errors (" + file.name() + ":" + std::to_string(at.line) + ":" +
                std::to_string(at.column) + ": " + blockers.front().message + ")";
    }
    return std::nullopt;
  }
  DiagnosticSink diags;
  std::vector<TokenInfo> tokens = tokenize(file, diags);
  return Formatter(file, tokens, options).run();
}

}  // namespace argus
