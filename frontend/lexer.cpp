// The indentation-aware token source over the generated ANTLR lexer, and
// `tokenize` for `--emit=tokens`. Literal decoding is in lexer_literals.cpp.
#include "frontend/lexer.h"

#include <algorithm>

#include "ArgusParser.h"
#include "frontend/lexer_internal.h"

namespace argus::frontend {

using antlr4::Token;
using grammar::ArgusLexer;
using grammar::ArgusParser;

// ---------------------------------------------------------------- source as code points

SourceCharStream::SourceCharStream(std::string_view utf8) : antlr4::ANTLRInputStream(std::string()) {
  byteSize_ = static_cast<uint32_t>(utf8.size());
  _data.reserve(utf8.size());
  bool ascii = std::all_of(utf8.begin(), utf8.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) {
    for (char c : utf8) _data.push_back(static_cast<char32_t>(c));
    return;
  }
  offsets_.reserve(utf8.size() + 1);
  for (size_t i = 0; i < utf8.size();) {
    char32_t cp = 0;
    size_t len = decodeUtf8At(utf8, i, &cp);
    if (len == 0) {
      cp = 0xFFFD;  // one replacement character per bad byte
      len = 1;
    }
    offsets_.push_back(static_cast<uint32_t>(i));
    _data.push_back(cp);
    i += len;
  }
}

uint32_t SourceCharStream::byteOffset(size_t codePoint) const {
  if (offsets_.empty()) return static_cast<uint32_t>(std::min<size_t>(codePoint, byteSize_));
  return codePoint < offsets_.size() ? offsets_[codePoint] : byteSize_;
}

SourceRange tokenRange(const SourceCharStream& input, const Token& token) {
  size_t start = token.getStartIndex();
  size_t stop = token.getStopIndex();
  if (start == INVALID_INDEX) return {};
  uint32_t begin = input.byteOffset(start);
  // stop < start (or stop == start - 1 wrapped) marks an empty token.
  if (stop == INVALID_INDEX || stop + 1 <= start) return {begin, begin};
  return {begin, input.byteOffset(stop + 1)};
}

// ---------------------------------------------------------------- the indenting lexer

namespace {

// Tokens that can only begin a statement: seeing one at the start of a line
// inside brackets means a bracket was left open on an earlier line.
bool beginsStatementOnly(size_t type) {
  switch (type) {
    case ArgusLexer::DEF: case ArgusLexer::FOR: case ArgusLexer::WHILE: case ArgusLexer::IF:
    case ArgusLexer::ELIF: case ArgusLexer::ELSE: case ArgusLexer::RETURN: case ArgusLexer::PASS:
    case ArgusLexer::BREAK: case ArgusLexer::CONTINUE: case ArgusLexer::ASSERT:
      return true;
    default:
      return false;
  }
}

size_t closerOf(size_t opener) {
  return opener == ArgusLexer::LPAREN ? ArgusLexer::RPAREN
         : opener == ArgusLexer::LBRACK ? ArgusLexer::RBRACK
                                        : ArgusLexer::RBRACE;
}

const char* bracketSpelling(size_t type) {
  switch (type) {
    case ArgusLexer::LPAREN: return "(";
    case ArgusLexer::RPAREN: return ")";
    case ArgusLexer::LBRACK: return "[";
    case ArgusLexer::RBRACK: return "]";
    case ArgusLexer::LBRACE: return "{";
    default: return "}";
  }
}

std::string displayChar(std::string_view bytes, char32_t cp) {
  if (cp == 0xFFFD && bytes.size() == 1) {
    static const char* kHex = "0123456789ABCDEF";
    unsigned char b = static_cast<unsigned char>(bytes[0]);
    return std::string("\\x") + kHex[b >> 4] + kHex[b & 15];
  }
  if (cp < 0x20 || cp == 0x7F) {
    static const char* kHex = "0123456789ABCDEF";
    return std::string("\\x") + kHex[(cp >> 4) & 15] + kHex[cp & 15];
  }
  return std::string(bytes);
}

// Why a BAD_NUMBER token is not a number, in the user's terms.
std::string badNumberNote(std::string_view text) {
  auto lower = [&](size_t i) { return i < text.size() ? static_cast<char>(text[i] | 0x20) : '\0'; };
  if (text.size() >= 2 && text[0] == '0' && lower(1) == 'o')
    return "octal literals are not supported; write the value in decimal or hexadecimal ('0x...')";
  if (text.size() >= 2 && text[0] == '0' && (lower(1) == 'x' || lower(1) == 'b')) {
    bool hex = lower(1) == 'x';
    size_t digits = 0;
    for (size_t i = 2; i < text.size(); ++i) digits += text[i] != '_';
    if (digits == 0)
      return std::string("'0") + text[1] + "' must be followed by " + (hex ? "hexadecimal digits" : "binary digits (0 or 1)");
    if (!hex) return "binary literals use only the digits 0 and 1";
  }
  if (text.find("__") != std::string_view::npos || text.back() == '_' || text.find("_.") != std::string_view::npos ||
      text.find("._") != std::string_view::npos)
    return "'_' may only stand between two digits, as in 1_000";
  char last = static_cast<char>(text.back() | 0x20);
  size_t firstLetter = text.find_first_not_of("0123456789._");
  if (firstLetter != std::string_view::npos && firstLetter + 1 == text.size() && (last == 'f' || last == 'l' || last == 'u'))
    return "number literals have no type suffix; write the number alone, or cast(x, dtype) for another type";
  return "a number cannot run into a name; separate them with an operator or a space";
}

}  // namespace

IndentingLexer::IndentingLexer(SourceCharStream& input, const SourceFile& file, DiagnosticSink& diags)
    : ArgusLexer(&input), input_(input), file_(file), diags_(diags) {
  removeErrorListeners();  // every lexical problem is reported by us, never printed
}

SourceRange IndentingLexer::bytes(size_t start, size_t end) const {
  return {input_.byteOffset(start), input_.byteOffset(end)};
}

void IndentingLexer::markDamaged(uint32_t offset) {
  damaged_.insert(std::upper_bound(damaged_.begin(), damaged_.end(), offset), offset);
}

void IndentingLexer::pushToken(size_t type, size_t start, size_t stop, const std::string& text) {
  pending_.push_back(_factory->create({this, _input}, type, text, Token::DEFAULT_CHANNEL, start, stop, 0, 0));
}

std::unique_ptr<Token> IndentingLexer::nextToken() {
  while (pending_.empty()) {
    if (finished_) {
      size_t end = input_.codePoints().size();
      pushToken(Token::EOF, end, end - 1, "<EOF>");
      break;
    }
    pump();
  }
  std::unique_ptr<Token> token = std::move(pending_.front());
  pending_.pop_front();
  return token;
}

void IndentingLexer::pump() {
  std::unique_ptr<Token> token = ArgusLexer::nextToken();
  SourceRange range = tokenRange(input_, *token);
  auto* common = static_cast<antlr4::CommonToken*>(token.get());
  switch (token->getType()) {
    case NEWLINE:
      onNewline(std::move(token));
      return;
    case Token::EOF:
      onEndOfFile(std::move(token));
      return;
    case ERROR_CHAR: {
      char32_t cp = input_.codePoints()[token->getStartIndex()];
      Diagnostic& d = diags_.report(DiagId::UnexpectedCharacter, range, {displayChar(file_.slice(range), cp)});
      switch (cp) {
        case '!': d.notes.push_back("Argus writes logical negation as 'not' (and 'not equal' as '!=')"); break;
        case ';': d.notes.push_back("write one statement per line"); break;
        case '?': d.notes.push_back("there is no conditional operator; use where(cond, a, b)"); break;
        case '\\': d.notes.push_back("a '\\' continues a line only as the last character of the line"); break;
        case '$': case '`': break;
        default:
          if (cp == 0xFFFD) d.notes.push_back("the file is not valid UTF-8 here");
          else if (cp >= 0x80) d.notes.push_back("names are made of ASCII letters, digits and '_'");
          d.fixits.push_back({range, "", "delete the character"});
      }
      markDamaged(range.begin);
      return;  // dropped: the parser never sees it
    }
    case UNTERMINATED_STRING: {
      std::string_view text = file_.slice(range);
      bool triple = text.size() >= 3 && text[1] == text[0] && text[2] == text[0];
      std::string quote = triple ? std::string(3, text[0]) : std::string(1, text[0]);
      if (triple) {
        Diagnostic& d = diags_.report(DiagId::UnterminatedString, {range.begin, range.begin + 3});
        d.notes.push_back("the string runs to the end of the file; close it with " + quote);
      } else {
        Diagnostic& d = diags_.report(DiagId::UnterminatedString, range);
        d.notes.push_back("a string must end on the line where it starts");
        d.fixits.push_back({{range.end, range.end}, quote, "close the string"});
      }
      common->setType(STRING);
      markDamaged(range.begin);
      // The string swallowed the rest of the line, closing brackets included:
      // those brackets are not the mistake, and must not swallow more lines.
      brackets_.clear();
      break;
    }
    case BAD_NUMBER: {
      std::string text(file_.slice(range));
      Diagnostic& d = diags_.report(DiagId::BadNumber, range, {text});
      d.notes.push_back(badNumberNote(text));
      common->setType(INT);
      markDamaged(range.begin);
      break;
    }
    case INT: case FLOAT: case STRING:
      checkLiteral(*token);
      break;
    default:
      break;
  }
  onSignificant(std::move(token));
}

void IndentingLexer::checkLiteral(Token& token) {
  SourceRange range = tokenRange(input_, token);
  std::string_view text = file_.slice(range);
  LiteralError error;
  if (token.getType() == INT) {
    if (!decodeInt(text, &error)) {
      diags_.report(DiagId::BadNumber, range, {std::string(text)}).notes.push_back(error.note);
      markDamaged(range.begin);
    }
  } else if (token.getType() == FLOAT) {
    if (!decodeFloat(text, &error)) {
      diags_.report(DiagId::BadNumber, range, {std::string(text)}).notes.push_back(error.note);
      markDamaged(range.begin);
    }
  } else {
    std::vector<BadEscape> bad;
    decodeString(text, &bad);
    for (const BadEscape& escape : bad) {
      SourceRange at{range.begin + escape.offset, range.begin + escape.offset + static_cast<uint32_t>(escape.spelling.size())};
      Diagnostic& d = diags_.report(DiagId::UnknownEscape, at, {escape.spelling});
      d.notes.push_back("the escapes are \\\\, \\\", \\', \\n, \\t, \\r and \\0");
      d.fixits.push_back({{at.begin, at.begin + 1}, "\\\\", "write the backslash itself as '\\\\'"});
    }
  }
}

void IndentingLexer::onNewline(std::unique_ptr<Token> token) {
  if (!anySignificant_) return;  // blank lines before the first token
  if (!lineBreak_) lineBreak_ = std::move(token);
}

void IndentingLexer::onSignificant(std::unique_ptr<Token> token) {
  size_t start = token->getStartIndex();
  if (lineBreak_ && !brackets_.empty()) {
    if (beginsStatementOnly(token->getType())) {
      reportUnclosedBrackets(0);  // the break ends the broken line after all
      brackets_.clear();
    } else {
      lineBreak_.reset();  // a continuation line inside brackets
    }
  }
  if (lineBreak_) {
    // The NEWLINE token keeps only its line break; the indentation it matched
    // becomes INDENT/DEDENT.
    const std::u32string& cps = input_.codePoints();
    size_t b = lineBreak_->getStartIndex();
    size_t stop = (cps[b] == U'\r' && b + 1 < cps.size() && cps[b + 1] == U'\n') ? b + 1 : b;
    static_cast<antlr4::CommonToken*>(lineBreak_.get())->setStopIndex(stop);
    pending_.push_back(std::move(lineBreak_));
    applyIndentation(start);
  } else if (!anySignificant_) {
    applyIndentation(start);
  }
  trackBracket(*token);
  anySignificant_ = true;
  lastSignificantType_ = token->getType();
  pending_.push_back(std::move(token));
}

void IndentingLexer::trackBracket(const Token& token) {
  size_t type = token.getType();
  if (type == LPAREN || type == LBRACK || type == LBRACE) {
    brackets_.push_back({type, token.getStartIndex()});
    return;
  }
  if (type != RPAREN && type != RBRACK && type != RBRACE) return;
  auto match = std::find_if(brackets_.rbegin(), brackets_.rend(),
                            [&](const OpenBracket& b) { return closerOf(b.type) == type; });
  if (match == brackets_.rend()) {
    if (brackets_.empty()) return;  // a closer with no opener at all: the parser reports it in context
    // `f(a]`: the closer is the wrong kind. Take it as closing the innermost
    // bracket so that the rest of the file is not swallowed by an open '('.
    const OpenBracket& open = brackets_.back();
    SourceRange at = tokenRange(input_, token);
    SourceRange opener = bytes(open.start, open.start + 1);
    LineCol lc = file_.lineCol(opener.begin);
    std::string expected = bracketSpelling(closerOf(open.type));
    Diagnostic& d = diags_.report(DiagId::MismatchedBracket, at,
                                  {bracketSpelling(type), bracketSpelling(open.type), std::to_string(lc.line),
                                   std::to_string(lc.column)});
    d.labels.push_back({opener, "opened here"});
    d.fixits.push_back({at, expected, "close with '" + expected + "'"});
    markDamaged(at.begin);
    brackets_.pop_back();
    return;
  }
  size_t matchIndex = static_cast<size_t>(std::prev(match.base()) - brackets_.begin());
  reportUnclosedBrackets(matchIndex + 1);  // `f(a[1)`: the '[' is the culprit
  brackets_.erase(brackets_.begin() + static_cast<std::ptrdiff_t>(matchIndex), brackets_.end());
}

void IndentingLexer::reportUnclosedBrackets(size_t from) {
  for (size_t i = from; i < brackets_.size(); ++i) {
    const OpenBracket& open = brackets_[i];
    SourceRange range = bytes(open.start, open.start + 1);
    Diagnostic& d = diags_.report(DiagId::UnbalancedBracket, range, {bracketSpelling(open.type)});
    d.notes.push_back(std::string("add the matching '") + bracketSpelling(closerOf(open.type)) + "'");
    markDamaged(range.begin);
  }
}

void IndentingLexer::checkIndentChars(size_t lineStart, size_t wsEnd) {
  if (reportedIndentChars_ || wsEnd == lineStart) return;
  const std::u32string& cps = input_.codePoints();
  bool tab = false, space = false;
  uint32_t width = 0;
  for (size_t i = lineStart; i < wsEnd; ++i) {
    tab |= cps[i] == U'\t';
    space |= cps[i] == U' ';
    width = cps[i] == U'\t' ? (width / 8 + 1) * 8 : cps[i] == U' ' ? width + 1 : 0;
  }
  uint32_t line = file_.lineCol(input_.byteOffset(lineStart)).line;
  std::string note;
  if (tab && space) {
    note = "this line's indentation contains both tabs and spaces";
  } else if (tab || space) {
    char32_t used = tab ? U'\t' : U' ';
    if (!indentChar_) {
      indentChar_ = used;
      indentCharLine_ = line;
      return;
    }
    if (used == indentChar_) return;
    note = std::string("this line indents with ") + (tab ? "tabs" : "spaces") + ", but line " +
           std::to_string(indentCharLine_) + " indents with " + (tab ? "spaces" : "tabs");
  } else {
    return;  // form feeds only
  }
  SourceRange range = bytes(lineStart, wsEnd);
  Diagnostic& d = diags_.report(DiagId::TabIndentation, range);
  d.notes.push_back(note);
  d.notes.push_back("indent with spaces only (a tab counts as up to 8 columns)");
  d.fixits.push_back({range, std::string(width, ' '), "indent with " + std::to_string(width) + " spaces"});
  reportedIndentChars_ = true;
  markDamaged(range.end);  // the first token of the line: its indentation is a guess
}

void IndentingLexer::applyIndentation(size_t tokenStart) {
  const std::u32string& cps = input_.codePoints();
  size_t lineStart = tokenStart;
  while (lineStart > 0 && cps[lineStart - 1] != U'\n' && cps[lineStart - 1] != U'\r') --lineStart;
  size_t wsEnd = lineStart;
  while (wsEnd < tokenStart && (cps[wsEnd] == U' ' || cps[wsEnd] == U'\t' || cps[wsEnd] == U'\f')) ++wsEnd;
  checkIndentChars(lineStart, wsEnd);
  // The width is the token's column: characters dropped before it (already
  // reported) count like spaces, so they do not change the block structure.
  uint32_t width = 0;
  for (size_t i = lineStart; i < tokenStart; ++i)
    width = cps[i] == U'\t' ? (width / 8 + 1) * 8 : cps[i] == U'\f' ? 0 : width + 1;

  auto matches = [&](const Level& level) { return width == level.width || width == level.alias; };
  const Level& top = levels_.back();
  if (matches(top)) return;
  if (width > top.width && (top.alias < 0 || width > top.alias)) {
    levels_.push_back({width, -1});
    std::string ws;
    for (size_t i = lineStart; i < wsEnd; ++i) ws += static_cast<char>(cps[i]);
    pushToken(ArgusParser::INDENT, lineStart, wsEnd - 1, ws);
    return;
  }
  // Dedent to a known level.
  size_t target = levels_.size() - 1;
  while (target > 0 && !matches(levels_[target]) && levels_[target].width > width) --target;
  if (matches(levels_[target])) {
    while (levels_.size() > target + 1) {
      levels_.pop_back();
      pushToken(ArgusParser::DEDENT, tokenStart, tokenStart - 1, "");
    }
    return;
  }

  // A width between two known levels. Closing blocks here would leave the
  // correctly indented lines that follow at levels that no longer exist (one
  // error each), so the block structure is left as it is: the line stays in
  // the current block, and its width becomes a second spelling of the current
  // level, so that lines indented the same way are not reported again.
  SourceRange range = bytes(lineStart, wsEnd);
  if (range.empty()) range = bytes(tokenStart, tokenStart + 1);
  Diagnostic& d = diags_.report(DiagId::InconsistentDedent, range);
  std::string list;
  for (size_t i = 0; i < levels_.size(); ++i)
    list += (i ? (i + 1 == levels_.size() ? " or " : ", ") : "") + std::to_string(levels_[i].width);
  d.notes.push_back("this line is indented by " + std::to_string(width) + " columns; the enclosing blocks by " + list);
  // Suggest the nearer level (the deeper one on a tie).
  uint32_t lower = levels_[target].width;
  uint32_t upper = target + 1 < levels_.size() ? levels_[target + 1].width : lower;
  uint32_t suggested = upper - width <= width - lower ? upper : lower;
  if (indentChar_ != U'\t')
    d.fixits.push_back({bytes(lineStart, wsEnd), std::string(suggested, ' '), "indent by " + std::to_string(suggested) + " columns"});
  if (lastSignificantType_ == COLON) {
    // The first line of a block, indented less than its header: it still is
    // the block (the header's line is not followed by a missing-block error),
    // as a level that this width spells and that the header's width closes.
    levels_.push_back({levels_.back().width + 1, width});
    pushToken(ArgusParser::INDENT, lineStart, wsEnd - 1, "");
  } else {
    levels_.back().alias = width;
  }
  markDamaged(input_.byteOffset(tokenStart));
}

void IndentingLexer::onEndOfFile(std::unique_ptr<Token> token) {
  reportUnclosedBrackets(0);
  brackets_.clear();
  size_t end = input_.codePoints().size();
  if (anySignificant_) {
    if (lineBreak_) {
      const std::u32string& cps = input_.codePoints();
      size_t b = lineBreak_->getStartIndex();
      size_t stop = (cps[b] == U'\r' && b + 1 < cps.size() && cps[b + 1] == U'\n') ? b + 1 : b;
      static_cast<antlr4::CommonToken*>(lineBreak_.get())->setStopIndex(stop);
      pending_.push_back(std::move(lineBreak_));
    } else {
      pushToken(NEWLINE, end, end - 1, "");  // the file does not end with a line break
    }
  }
  lineBreak_.reset();
  while (levels_.size() > 1) {
    levels_.pop_back();
    pushToken(ArgusParser::DEDENT, end, end - 1, "");
  }
  pending_.push_back(std::move(token));
  finished_ = true;
}

std::string IndentingLexer::kindName(size_t type) const {
  if (type == ArgusParser::INDENT) return "INDENT";
  if (type == ArgusParser::DEDENT) return "DEDENT";
  if (type == Token::EOF) return "EOF";
  return getVocabulary().getDisplayName(type);
}

}  // namespace argus::frontend

namespace argus {

std::vector<TokenInfo> tokenize(const SourceFile& file, DiagnosticSink& diags) {
  std::vector<TokenInfo> tokens;
  try {
    frontend::SourceCharStream input(file.text());
    frontend::IndentingLexer lexer(input, file, diags);
    for (;;) {
      std::unique_ptr<antlr4::Token> token = lexer.nextToken();
      SourceRange range = frontend::tokenRange(input, *token);
      bool eof = token->getType() == antlr4::Token::EOF;
      tokens.push_back({lexer.kindName(token->getType()), eof ? "" : std::string(file.slice(range)), range});
      if (eof) break;
    }
  } catch (const std::exception& e) {
    // Not expected (the lexer has a catch-all rule); keep the contract anyway.
    uint32_t end = static_cast<uint32_t>(file.text().size());
    diags.report(DiagId::InternalSyntaxError, {end, end}, {"lexer", e.what()});
    tokens.push_back({"EOF", "", {end, end}});
  }
  return tokens;
}

}  // namespace argus
