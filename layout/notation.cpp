#include "layout/notation.h"

#include <cctype>
#include <limits>

namespace argus::layout {
namespace {

struct Token {
  enum class Kind { Int, Ident, Punct, End, Bad };
  Kind kind = Kind::End;
  TextRange range;
  int64_t value = 0;
  std::string text;
};

constexpr int64_t kLargestLiteral = int64_t{1} << 40;
constexpr int kDeepestNesting = 64;  // keeps the recursive descent off the end of the stack

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) { advance(); }

  ParseResult parseAll() {
    ExprNode node;
    if (!parseExpr(node)) return error_;
    if (token_.kind != Token::Kind::End)
      return fail("unexpected '" + token_.text + "' after the end of the expression", token_.range);
    return node;
  }

 private:
  // --- lexer -------------------------------------------------------------------
  void advance() {
    lastEnd_ = token_.range.end;
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    token_ = Token{};
    token_.range = {pos_, pos_};
    if (pos_ >= text_.size()) {
      token_.text = "end of expression";
      return;
    }
    size_t start = pos_;
    char c = text_[pos_];
    bool staticInt = c == '_' && pos_ + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_ + 1]));
    if (std::isdigit(static_cast<unsigned char>(c)) || staticInt) {
      if (staticInt) ++pos_;
      int64_t value = 0;
      bool tooLarge = false;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        value = value * 10 + (text_[pos_] - '0');
        if (value > kLargestLiteral) {
          tooLarge = true;
          value = kLargestLiteral;
        }
        ++pos_;
      }
      token_.kind = tooLarge ? Token::Kind::Bad : Token::Kind::Int;
      token_.value = value;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      token_.kind = Token::Kind::Ident;
    } else if (std::string_view("(),:<>-").find(c) != std::string_view::npos) {
      ++pos_;
      token_.kind = Token::Kind::Punct;
    } else {
      ++pos_;
      token_.kind = Token::Kind::Bad;
    }
    token_.range = {start, pos_};
    token_.text = std::string(text_.substr(start, pos_ - start));
  }

  bool isPunct(char c) const { return token_.kind == Token::Kind::Punct && token_.text[0] == c; }
  bool isWord(std::string_view w) const { return token_.kind == Token::Kind::Ident && token_.text == w; }

  ExpressionError fail(std::string message, TextRange range) {
    error_ = ExpressionError{std::move(message), range};
    return error_;
  }
  bool failed(std::string message, TextRange range) {
    fail(std::move(message), range);
    return false;
  }
  bool failHere(const std::string& expected) {
    if (token_.kind == Token::Kind::Bad && !token_.text.empty() && std::isdigit(static_cast<unsigned char>(token_.text.back())))
      return failed("the integer " + token_.text + " is too large (at most 2^40)", token_.range);
    if (token_.kind == Token::Kind::Bad)
      return failed("unexpected character '" + token_.text + "'; expected " + expected, token_.range);
    return failed("expected " + expected + ", found " +
                      (token_.kind == Token::Kind::End ? token_.text : "'" + token_.text + "'"),
                  token_.range);
  }
  bool expectPunct(char c, const std::string& what, TextRange opener) {
    if (isPunct(c)) {
      advance();
      return true;
    }
    if (token_.kind == Token::Kind::End)
      return failed("expected '" + std::string(1, c) + "' " + what + " (opened at column " +
                        std::to_string(opener.begin + 1) + ")",
                    token_.range);
    return failHere("'" + std::string(1, c) + "' " + what);
  }

  // --- grammar -----------------------------------------------------------------
  bool parseInteger(int64_t& value, TextRange& range) {
    range = token_.range;
    bool negative = false;
    if (isPunct('-')) {
      negative = true;
      advance();
    }
    if (token_.kind != Token::Kind::Int) return failHere("an integer");
    value = negative ? -token_.value : token_.value;
    range.end = token_.range.end;
    advance();
    return true;
  }

  // Counts nesting for the duration of one recursive parse.
  struct Nesting {
    int& depth;
    explicit Nesting(int& d) : depth(++d) {}
    ~Nesting() { --depth; }
  };
  bool tooDeep() {
    if (depth_ <= kDeepestNesting) return false;
    return !failed("the expression nests deeper than " + std::to_string(kDeepestNesting) + " levels", token_.range);
  }

  bool parseTuple(IntTuple& out, TextRange& range) {
    Nesting nesting(depth_);
    if (tooDeep()) return false;
    range = token_.range;
    if (!isPunct('(')) {
      int64_t value = 0;
      if (!parseInteger(value, range)) return false;
      out = IntTuple(value);
      return true;
    }
    TextRange opener = token_.range;
    advance();
    std::vector<IntTuple> children;
    do {
      if (!children.empty()) advance();  // the ','
      IntTuple child;
      TextRange childRange;
      if (!parseTuple(child, childRange)) return false;
      children.push_back(std::move(child));
    } while (isPunct(','));
    range.end = token_.range.end;
    if (!expectPunct(')', "to close the tuple", opener)) return false;
    out = IntTuple::tuple(std::move(children));
    return true;
  }

  bool parseList(std::vector<ExprNode>& out, char close, TextRange opener, const std::string& what) {
    if (isPunct(close)) {
      advance();
      return true;
    }
    while (true) {
      ExprNode arg;
      if (!parseExpr(arg)) return false;
      out.push_back(std::move(arg));
      if (isPunct(',')) {
        advance();
        continue;
      }
      return expectPunct(close, what, opener);
    }
  }

  // After a '(' token: does a name or a tiler follow (a grouped expression, not a tuple)?
  bool groupFollows() const {
    size_t p = token_.range.end;
    while (p < text_.size() && std::isspace(static_cast<unsigned char>(text_[p]))) ++p;
    if (p >= text_.size()) return false;
    char c = text_[p];
    bool staticInt = c == '_' && p + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p + 1]));
    return c == '<' || ((std::isalpha(static_cast<unsigned char>(c)) || c == '_') && !staticInt);
  }

  bool parsePrimary(ExprNode& node) {
    node.range = token_.range;
    if (isPunct('(') && groupFollows()) {
      TextRange opener = token_.range;
      advance();
      if (!parseExpr(node)) return false;
      return expectPunct(')', "to close the parenthesis", opener);
    }
    if (token_.kind == Token::Kind::Int || isPunct('(') || isPunct('-')) {
      TextRange range;
      if (!parseTuple(node.shape, range)) return false;
      node.kind = ExprNode::Kind::Tuple;
      node.range = range;
      if (isPunct(':')) {
        advance();
        TextRange strideRange;
        if (!parseTuple(node.stride, strideRange)) return false;
        node.kind = ExprNode::Kind::Layout;
        node.range.end = strideRange.end;
      }
      return true;
    }
    if (isPunct('<')) {
      TextRange opener = token_.range;
      advance();
      node.kind = ExprNode::Kind::Tiler;
      size_t start = node.range.begin;
      if (!parseList(node.children, '>', opener, "to close the tiler")) return false;
      node.range = {start, lastEnd_};
      if (node.children.empty()) return failed("a tiler needs at least one mode", node.range);
      return true;
    }
    if (token_.kind == Token::Kind::Ident) {
      node.name = token_.text;
      advance();
      if ((node.name == "Swizzle" || node.name == "Sw") && isPunct('<')) {
        TextRange opener = token_.range;
        advance();
        for (int i = 0; i < 3; ++i) {
          if (i > 0 && !expectPunct(',', "between the swizzle's B, M and S", opener)) return false;
          int64_t value = 0;
          TextRange range;
          if (!parseInteger(value, range)) return false;
          if (value < -64 || value > 64) return failed("swizzle parameters lie in [-64, 64]", range);
          node.swizzle[i] = static_cast<int>(value);
        }
        if (!expectPunct('>', "to close the swizzle", opener)) return false;
        node.kind = ExprNode::Kind::Swizzle;
        node.range.end = lastEnd_;
        return true;
      }
      if (isPunct('(')) {
        TextRange opener = token_.range;
        advance();
        node.kind = ExprNode::Kind::Call;
        if (!parseList(node.children, ')', opener, "to close the argument list of '" + node.name + "'"))
          return false;
        node.range.end = lastEnd_;
        return true;
      }
      node.kind = ExprNode::Kind::Word;
      return true;
    }
    return failHere("a layout, a tuple, a tiler '<...>' or a function call");
  }

  bool parsePostfix(ExprNode& node) {
    if (!parsePrimary(node)) return false;
    while (isPunct('(') && node.kind != ExprNode::Kind::Word) {
      TextRange opener = token_.range;
      advance();
      ExprNode apply;
      apply.kind = ExprNode::Kind::Apply;
      apply.children.push_back(std::move(node));
      if (!parseList(apply.children, ')', opener, "to close the coordinate")) return false;
      apply.range = {apply.children[0].range.begin, lastEnd_};
      node = std::move(apply);
    }
    return true;
  }

  bool parseExpr(ExprNode& node) {
    Nesting nesting(depth_);
    if (tooDeep()) return false;
    if (!parsePostfix(node)) return false;
    while (isWord("o")) {
      advance();
      ExprNode right;
      if (!parsePostfix(right)) return false;
      ExprNode compose;
      compose.kind = ExprNode::Kind::Compose;
      compose.range = {node.range.begin, right.range.end};
      compose.children.push_back(std::move(node));
      compose.children.push_back(std::move(right));
      node = std::move(compose);
    }
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t lastEnd_ = 0;
  int depth_ = 0;
  Token token_;
  ExpressionError error_;
};

}  // namespace

ParseResult parseExpression(std::string_view text) { return Parser(text).parseAll(); }

}  // namespace argus::layout
