// Syntax errors in the user's terms. ANTLR knows the offending token and the
// set of tokens it expected; this file turns that (plus the rule being parsed
// and the token before) into "expected ':' at the end of the 'for' header".
#include <algorithm>

#include "frontend/parser_internal.h"

namespace argus::frontend {

using antlr4::Token;

namespace {

bool startsExpression(size_t type) {
  switch (type) {
    case P::NAME: case P::INT: case P::FLOAT: case P::STRING: case P::TRUE: case P::FALSE:
    case P::NONE: case P::ELLIPSIS: case P::LPAREN: case P::LBRACK: case P::MINUS:
    case P::PLUS: case P::TILDE: case P::NOT:
      return true;
    default:
      return false;
  }
}

bool endsExpression(size_t type) {
  switch (type) {
    case P::NAME: case P::INT: case P::FLOAT: case P::STRING: case P::TRUE: case P::FALSE:
    case P::NONE: case P::ELLIPSIS: case P::RPAREN: case P::RBRACK:
      return true;
    default:
      return false;
  }
}

bool endsLine(size_t type) {
  return type == P::NEWLINE || type == Token::EOF || type == P::DEDENT || type == P::INDENT;
}

// The keyword of the header being parsed ("for", "def"...), if any.
std::string headerKeyword(antlr4::RuleContext* ctx) {
  for (; ctx; ctx = dynamic_cast<antlr4::RuleContext*>(ctx->parent)) {
    switch (ctx->getRuleIndex()) {
      case P::RuleDef_header: return "def";
      case P::RuleFor_header: return "for";
      case P::RuleWhile_header: return "while";
      case P::RuleIf_header: return "if";
      case P::RuleElif_header: return "elif";
      case P::RuleElse_header: return "else";
      default: break;
    }
  }
  return {};
}

// The innermost bracket that is open at the error: its opening token and what
// its elements are called.
struct OpenBracket {
  Token* open = nullptr;
  size_t closer = 0;
  const char* element = "element";
};

OpenBracket innermostBracket(antlr4::RuleContext* ctx) {
  for (; ctx; ctx = dynamic_cast<antlr4::RuleContext*>(ctx->parent)) {
    if (auto* call = dynamic_cast<P::CallExprContext*>(ctx); call && call->open && !call->close)
      return {call->open, P::RPAREN, "argument"};
    if (auto* sub = dynamic_cast<P::SubscriptExprContext*>(ctx); sub && sub->open && !sub->close)
      return {sub->open, P::RBRACK, "index"};
    if (auto* paren = dynamic_cast<P::ParenExprContext*>(ctx); paren && paren->open && !paren->close)
      return {paren->open, P::RPAREN, "element"};
    if (auto* list = dynamic_cast<P::ListExprContext*>(ctx); list && list->open && !list->close)
      return {list->open, P::RBRACK, "element"};
    if (auto* def = dynamic_cast<P::Def_headerContext*>(ctx); def && def->open && !def->close)
      return {def->open, P::RPAREN, "parameter"};
    if (auto* deco = dynamic_cast<P::DecoratorContext*>(ctx); deco && deco->open && !deco->close)
      return {deco->open, P::RPAREN, "argument"};
  }
  return {};
}

bool insideParams(antlr4::RuleContext* ctx) {
  for (; ctx; ctx = dynamic_cast<antlr4::RuleContext*>(ctx->parent))
    if (ctx->getRuleIndex() == P::RuleParams || ctx->getRuleIndex() == P::RuleParam) return true;
  return false;
}

const char* reservedNote(const std::string& word) {
  if (word == "import" || word == "from") return "an Argus file is self-contained: every builtin is always in scope";
  if (word == "class") return "write kernels as '@kernel' functions and helpers as '@device' functions";
  if (word == "lambda") return "write a '@device' function instead";
  if (word == "with" || word == "try" || word == "except" || word == "finally" || word == "raise")
    return "kernels have no exceptions; state launch requirements with require(cond, \"message\")";
  if (word == "yield" || word == "async" || word == "await")
    return "kernels run to completion; there are no generators or coroutines";
  if (word == "global" || word == "nonlocal") return "a function sees only its parameters and its own variables";
  if (word == "del") return "a variable lives until the end of its function; there is nothing to delete";
  return nullptr;
}

}  // namespace

void SyntaxErrorStrategy::reportError(antlr4::Parser* parser, const antlr4::RecognitionException& e) {
  if (failed_) return;  // one error per logical line
  failed_ = true;
  reported_ = true;
  translate(parser, e.getOffendingToken(), e.getExpectedTokens());
}

antlr4::Token* SyntaxErrorStrategy::recoverInline(antlr4::Parser* parser) {
  // Never invent or delete a token: report, then let the rule give up.
  throw antlr4::InputMismatchException(parser);
}

void SyntaxErrorStrategy::recover(antlr4::Parser* parser, std::exception_ptr) {
  // Skip to the end of the logical line; the rules around return with what
  // they have, and the next line starts clean.
  antlr4::TokenStream* tokens = parser->getTokenStream();
  while (!endsLine(tokens->LA(1))) parser->consume();
}

void SyntaxErrorStrategy::translate(antlr4::Parser* parser, Token* offending, const antlr4::misc::IntervalSet& expectedIn) {
  antlr4::TokenStream* tokens = parser->getTokenStream();
  if (!offending) offending = tokens->LT(1);
  antlr4::misc::IntervalSet expected = expectedIn;
  expected.remove(Token::EPSILON);
  auto has = [&](size_t tokenType) { return expected.contains(tokenType); };
  size_t type = offending->getType();
  size_t index = offending->getTokenIndex();
  Token* prev = index != INVALID_INDEX && index > 0 ? tokens->get(index - 1) : nullptr;
  size_t prevType = prev ? prev->getType() : Token::INVALID_TYPE;
  antlr4::RuleContext* ctx = parser->getContext();

  SourceRange offRange = tokenRange(input_, *offending);
  SourceRange prevEnd = prev ? SourceRange{tokenRange(input_, *prev).end, tokenRange(input_, *prev).end} : offRange;
  // Where to point: at the token, or just after the previous one when the line ended.
  SourceRange at = endsLine(type) && type != P::INDENT ? prevEnd : offRange;
  std::string text(file_.slice(offRange));
  std::string prevText = prev ? std::string(file_.slice(tokenRange(input_, *prev))) : "";

  std::string found;
  switch (type) {
    case Token::EOF: found = "the end of the file"; break;
    case P::NEWLINE: found = "the end of the line"; break;
    case P::INDENT: found = "an indented line"; break;
    case P::DEDENT: found = "the end of the block"; break;
    case P::NAME: found = "name '" + text + "'"; break;
    case P::INT: case P::FLOAT: found = "number " + text; break;
    case P::STRING: found = "a string"; break;
    default: found = "'" + text + "'"; break;
  }
  // The common case (AG1005): "expected <what>, found <found>".
  auto expectedFound = [&](SourceRange range, const std::string& what) -> Diagnostic& {
    return diags_.report(DiagId::SyntaxError, range, {what, found});
  };

  bool lineStart = !prev || prevType == P::NEWLINE || prevType == P::INDENT || prevType == P::DEDENT;

  // Python words and operators that Argus does not have.
  if (type == P::RESERVED) {
    Diagnostic& d = diags_.report(DiagId::UnsupportedSyntax, offRange, {"'" + text + "'"});
    if (const char* note = reservedNote(text)) d.notes.push_back(note);
    if (text == "is") {
      Token* next = tokens->get(std::min(index + 1, tokens->size() - 1));
      bool isNot = next->getType() == P::NOT;
      SourceRange whole = isNot ? joinRanges(offRange, tokenRange(input_, *next)) : offRange;
      d.range = whole;
      d.fixits.push_back({whole, isNot ? "!=" : "==", isNot ? "compare with '!='" : "compare with '=='"});
    }
    return;
  }
  if (type == P::LBRACE) {
    Diagnostic& d = diags_.report(DiagId::UnsupportedSyntax, offRange, {"a '{...}' literal (dictionary or set)"});
    d.notes.push_back("use a tuple '(...)' or a list '[...]'");
    return;
  }
  if (prev && prevEnd.end == offRange.begin && ((prevType == P::AMP && type == P::AMP) || (prevType == P::PIPE && type == P::PIPE))) {
    bool andOp = type == P::AMP;
    SourceRange both = joinRanges(tokenRange(input_, *prev), offRange);
    Diagnostic& d = diags_.report(DiagId::UnsupportedSyntax, both, {andOp ? "'&&'" : "'||'"});
    d.fixits.push_back({both, andOp ? "and" : "or", andOp ? "use 'and'" : "use 'or'"});
    return;
  }
  if (prevType == P::COLON && type == P::ASSIGN && prevEnd.end == offRange.begin) {
    SourceRange both = joinRanges(tokenRange(input_, *prev), offRange);
    Diagnostic& d = diags_.report(DiagId::UnsupportedSyntax, both, {"':='"});
    d.fixits.push_back({both, "=", "assign with '='"});
    return;
  }
  if (type == P::IF && !lineStart && prevType != P::ELSE) {
    Diagnostic& d = diags_.report(DiagId::UnsupportedSyntax, offRange, {"a conditional expression 'a if cond else b'"});
    d.notes.push_back("use where(cond, a, b) to choose per element, or an 'if' statement");
    return;
  }
  if (type == P::FOR && !lineStart) {
    Diagnostic& d = diags_.report(DiagId::UnsupportedSyntax, offRange, {"a comprehension"});
    d.notes.push_back("write a 'for' loop, or build the tile with arange(n) and elementwise operations");
    return;
  }
  if (prevType == P::ELSE && type == P::IF) {
    SourceRange both = joinRanges(tokenRange(input_, *prev), offRange);
    Diagnostic& d = diags_.report(DiagId::ElseIf, both);
    d.fixits.push_back({both, "elif", "use 'elif'"});
    return;
  }

  std::string keyword = headerKeyword(ctx);
  bool expression = has(P::NAME) && has(P::INT);
  OpenBracket bracket = innermostBracket(ctx);

  // A closing bracket that closes nothing, or the wrong bracket.
  if ((type == P::RPAREN || type == P::RBRACK || type == P::RBRACE) && !has(type) && !expression) {
    if (bracket.open && bracket.closer != type) {
      // The lexer reports a closer of the wrong kind first (and the parser is
      // quiet on that line); this is the same message should one get here.
      SourceRange open = tokenRange(input_, *bracket.open);
      LineCol lc = file_.lineCol(open.begin);
      std::string closer = bracket.closer == P::RPAREN ? ")" : "]";
      Diagnostic& d = diags_.report(DiagId::MismatchedBracket, offRange,
                                    {text, bracket.open->getText(), std::to_string(lc.line), std::to_string(lc.column)});
      d.labels.push_back({open, "opened here"});
      d.fixits.push_back({offRange, closer, "close with '" + closer + "'"});
      return;
    }
    if (!bracket.open) {
      diags_.report(DiagId::UnmatchedClosingBracket, offRange, {text});
      return;
    }
  }

  if (expression) {
    if (lineStart && (type == P::ELIF || type == P::ELSE)) {
      Diagnostic& d = diags_.report(DiagId::ClauseWithoutIf, at, {text});
      d.notes.push_back("'elif' and 'else' follow the block of an 'if', at the same indentation as the 'if'");
      return;
    }
    if (lineStart) {
      expectedFound(at, "a statement");
      return;
    }
    if (prevType == P::FOR) {
      expectedFound(at, "a loop variable after 'for'");
      return;
    }
    if (prevType == P::ASSIGN && type == P::ASSIGN) {
      SourceRange both = joinRanges(tokenRange(input_, *prev), offRange);
      Diagnostic& d = diags_.report(DiagId::SpacedEquals, both);
      d.fixits.push_back({both, "==", "write '=='"});
      return;
    }
    if (!endsExpression(prevType)) {
      diags_.report(DiagId::MissingExpression, at, {prevText, found});
      return;
    }
    expectedFound(at, "an expression");
    return;
  }

  if (!keyword.empty() && has(P::COLON)) {
    if (endsLine(type)) {
      Diagnostic& d = diags_.report(DiagId::MissingHeaderColon, at, {keyword});
      d.fixits.push_back({prevEnd, ":", "insert ':'"});
      return;
    }
    Diagnostic& d = expectedFound(offRange, "':' at the end of the '" + keyword + "' header");
    if (type == P::ASSIGN && (keyword == "if" || keyword == "elif" || keyword == "while")) {
      d.notes.push_back("'=' assigns; to compare, write '=='");
      d.fixits.push_back({offRange, "==", "compare with '=='"});
    }
    return;
  }

  if (bracket.open && has(bracket.closer) && !endsLine(type)) {
    std::string closer = bracket.closer == P::RPAREN ? ")" : "]";
    if (prev == bracket.open) {
      std::string element = bracket.element;
      std::string article = element == "argument" || element == "element" || element == "index" ? "an " : "a ";
      Diagnostic& d = expectedFound(at, article + element + " or '" + closer + "' after '" + prevText + "'");
      if (element == "parameter" && (type == P::STAR || type == P::POWER))
        d.notes.push_back("'*args' and '**kwargs' parameters are not part of the Argus language");
      return;
    }
    Diagnostic& d = expectedFound(at, "',' or '" + closer + "' after the " + bracket.element);
    if (std::string(bracket.element) == "parameter" && (type == P::STAR || type == P::POWER))
      d.notes.push_back("'*args' and '**kwargs' parameters are not part of the Argus language");
    if (startsExpression(type) && endsExpression(prevType)) {
      d.notes.push_back("did you forget a ','?");
      d.fixits.push_back({prevEnd, ",", "insert ','"});
    }
    return;
  }

  if (has(P::NEWLINE) && !endsLine(type)) {
    Diagnostic& d = expectedFound(offRange, "the end of the statement after '" + prevText + "'");
    if (startsExpression(type) && endsExpression(prevType)) d.notes.push_back("did you forget an operator or a ','?");
    if (type == P::COLON) d.notes.push_back("only the header of a 'def', 'for', 'while', 'if', 'elif' or 'else' ends with ':'");
    return;
  }

  if (has(P::NAME)) {
    std::string what = "a name";
    if (prevType == P::DEF) what = "the function name";
    else if (prevType == P::DOT) what = "an attribute name";
    else if (prevType == P::AT) what = "a decorator name";
    else if (prevType == P::FOR) what = "a loop variable";
    else if (insideParams(ctx)) what = "a parameter name";
    std::string after = prev && !lineStart ? " after '" + prevText + "'" : "";
    Diagnostic& d = expectedFound(at, what + after);
    if (insideParams(ctx) && (type == P::STAR || type == P::POWER))
      d.notes.push_back("'*args' and '**kwargs' parameters are not part of the Argus language");
    return;
  }
  if (has(P::IN)) {
    expectedFound(at, "'in' after the loop variable");
    return;
  }
  if (has(P::LPAREN) && keyword == "def") {
    expectedFound(at, "'(' after the function name '" + prevText + "'");
    return;
  }
  if (type == P::ASSIGN && has(P::RPAREN)) {
    Diagnostic& d = diags_.report(DiagId::UnexpectedToken, offRange, {found});
    d.notes.push_back("keyword arguments are written 'name=value'");
    return;
  }

  // Fall back to listing what would have been valid, when the list is short.
  std::vector<std::string> names;
  for (const antlr4::misc::Interval& interval : expected.getIntervals())
    for (ssize_t t = interval.a; t <= interval.b && names.size() <= 4; ++t)
      names.push_back(t == P::NEWLINE ? "the end of the line" : parser->getVocabulary().getDisplayName(static_cast<size_t>(t)));
  if (!names.empty() && names.size() <= 4) {
    std::string list;
    for (size_t i = 0; i < names.size(); ++i)
      list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    expectedFound(at, list);
    return;
  }
  diags_.report(DiagId::UnexpectedToken, at, {found});
}

}  // namespace argus::frontend
