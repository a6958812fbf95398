// SizeExpr evaluation (the semantics of ir::LaunchExpr::evaluate) and the
// parser of `--flops` expressions.
#include <cctype>
#include <limits>

#include "launch_metadata.h"

namespace argus::gpu {
namespace {

// Two's-complement wrapping, as the compiler's launch expressions do.
int64_t wrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  bool parse(SizeExpr& out, std::string& error) {
    if (!sum(out)) { error = error_; return false; }
    skipSpace();
    if (pos_ != text_.size()) {
      error = "unexpected '" + text_.substr(pos_, 1) + "' at column " + std::to_string(pos_ + 1) + " of '" + text_ + "'";
      return false;
    }
    return true;
  }

 private:
  const std::string& text_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;

  void skipSpace() { while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_; }
  bool take(const char* token) {
    skipSpace();
    size_t n = std::char_traits<char>::length(token);
    if (text_.compare(pos_, n, token) != 0) return false;
    pos_ += n;
    return true;
  }
  bool fail(const std::string& what) {
    if (error_.empty()) {
      error_ = pos_ < text_.size() ? what + " at column " + std::to_string(pos_ + 1) + " of '" + text_ + "'"
                                   : what + " at the end of '" + text_ + "'";
    }
    return false;
  }

  bool sum(SizeExpr& out) {
    if (!product(out)) return false;
    for (;;) {
      SizeExpr::Op op;
      if (take("+")) op = SizeExpr::Op::Add;
      else if (take("-")) op = SizeExpr::Op::Sub;
      else return true;
      SizeExpr rhs;
      if (!product(rhs)) return false;
      out = SizeExpr::apply(op, {std::move(out), std::move(rhs)});
    }
  }

  bool product(SizeExpr& out) {
    if (!unary(out)) return false;
    for (;;) {
      SizeExpr::Op op;
      if (take("//")) op = SizeExpr::Op::FloorDiv;
      else if (take("*")) op = SizeExpr::Op::Mul;
      else if (take("%")) op = SizeExpr::Op::Mod;
      else {
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == '/') return fail("use '//' for integer division");
        return true;
      }
      SizeExpr rhs;
      if (!unary(rhs)) return false;
      out = SizeExpr::apply(op, {std::move(out), std::move(rhs)});
    }
  }

  bool unary(SizeExpr& out) {
    if (take("-")) {
      SizeExpr operand;
      if (!unary(operand)) return false;
      out = SizeExpr::apply(SizeExpr::Op::Sub, {SizeExpr::constant(0), std::move(operand)});
      return true;
    }
    return primary(out);
  }

  bool primary(SizeExpr& out) {
    skipSpace();
    if (pos_ >= text_.size()) return fail("expected a number, a size name or '('");
    char c = text_[pos_];
    if (c == '(') {
      if (++depth_ > 200) return fail("expression nested too deeply");
      ++pos_;
      if (!sum(out)) return false;
      if (!take(")")) return fail("expected ')'");
      --depth_;
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        int digit = text_[pos_] - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) return fail("number too large");
        value = value * 10 + digit;
        ++pos_;
      }
      out = SizeExpr::constant(value);
      return true;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
      out = SizeExpr::named(text_.substr(start, pos_ - start));
      return true;
    }
    return fail("expected a number, a size name or '('");
  }
};

}  // namespace

bool SizeExpr::evaluate(const std::map<std::string, int64_t>& sizes, int64_t& out, std::string& error) const {
  using O = Op;
  if (op == O::Const) { out = value; return true; }
  if (op == O::Size) {
    auto it = sizes.find(size);
    if (it == sizes.end()) { error = "no value for size '" + size + "'"; return false; }
    out = it->second;
    return true;
  }
  size_t arity = op == O::Not ? 1 : 2;
  if (args.size() != arity) { error = "malformed launch expression"; return false; }
  int64_t a = 0, b = 0;
  if (!args[0].evaluate(sizes, a, error)) return false;
  if (arity == 2 && !args[1].evaluate(sizes, b, error)) return false;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  switch (op) {
    case O::Add: out = wrapAdd(a, b); return true;
    case O::Sub: out = wrapSub(a, b); return true;
    case O::Mul: out = wrapMul(a, b); return true;
    case O::FloorDiv: case O::CeilDiv: case O::Mod: {
      if (b == 0) { error = "division by zero"; return false; }
      int64_t n = op == O::CeilDiv ? wrapSub(wrapAdd(a, b), 1) : a;
      if (n == kMin && b == -1) { out = op == O::Mod ? 0 : kMin; return true; }
      out = op == O::Mod ? n % b : n / b;
      return true;
    }
    case O::Min: out = a < b ? a : b; return true;
    case O::Max: out = a > b ? a : b; return true;
    case O::Lt: out = a < b; return true;
    case O::Le: out = a <= b; return true;
    case O::Gt: out = a > b; return true;
    case O::Ge: out = a >= b; return true;
    case O::Eq: out = a == b; return true;
    case O::Ne: out = a != b; return true;
    case O::And: out = (a != 0) && (b != 0); return true;
    case O::Or: out = (a != 0) || (b != 0); return true;
    case O::Not: out = a == 0; return true;
    case O::Const: case O::Size: break;
  }
  error = "malformed launch expression";
  return false;
}

bool parseSizeExpression(const std::string& text, SizeExpr& out, std::string& error) {
  return Parser(text).parse(out, error);
}

}  // namespace argus::gpu
