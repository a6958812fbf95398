#include "checker/integer_reading.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checker/formula_walk.h"

namespace argus::checker {

namespace {

class IntegerReading {
  static constexpr unsigned kMostDigits = 16;
  struct Slice {
    unsigned unknown;    // term id of the small unknown
    unsigned low, high;  // its digits low .. high - 1
  };

 public:
  explicit IntegerReading(z3::context& ctx) : ctx_(ctx) {}

  std::optional<z3::expr> run(const z3::expr& formula) {
    findSmallUnknowns(formula);
    for (const z3::expr& e : postorder(formula)) {
      std::optional<z3::expr> read = e.is_bool() ? readCondition(e) : readTerm(e);
      if (!read) return std::nullopt;
      read_.emplace(e.id(), *read);
    }
    productFacts();
    z3::expr_vector all(ctx_);  // one flat conjunction, not a chain as deep as the facts are many
    all.push_back(at(formula));
    for (const z3::expr& c : assumed_) all.push_back(c);
    return z3::mk_and(all);
  }

 private:
  const z3::expr& at(const z3::expr& e) const { return read_.at(e.id()); }
  z3::expr arg(const z3::expr& e, unsigned i) const { return at(e.arg(i)); }

  static bool signedConstant(const z3::expr& e, int64_t& value) {
    if (!e.is_numeral() || !e.is_bv() || e.get_sort().bv_size() > 64) return false;
    const unsigned w = e.get_sort().bv_size();
    uint64_t bits = e.get_numeral_uint64();
    if (w < 64 && (bits >> (w - 1)) & 1) bits |= ~uint64_t{0} << w;  // sign-extend
    value = static_cast<int64_t>(bits);
    return true;
  }

  // -2^(w-1) <= x <= 2^(w-1) - 1, for w up to 64.
  z3::expr fitsSigned(const z3::expr& x, unsigned w) const {
    const uint64_t half = uint64_t{1} << (w - 1);
    z3::expr most = ctx_.int_val(half - 1);
    return x >= -most - 1 && x <= most;
  }

  z3::expr power(unsigned k) const { return ctx_.int_val(static_cast<int64_t>(uint64_t{1} << k)); }

  std::optional<z3::expr> readCondition(const z3::expr& e) {
    if (!e.is_app()) return std::nullopt;
    const Z3_decl_kind kind = e.decl().decl_kind();
    switch (kind) {
      case Z3_OP_TRUE:
      case Z3_OP_FALSE:
        return e;
      case Z3_OP_UNINTERPRETED:
        return e.num_args() == 0 ? std::optional<z3::expr>(e) : std::nullopt;
      case Z3_OP_NOT:
        return !arg(e, 0);
      case Z3_OP_AND:
      case Z3_OP_OR: {
        z3::expr_vector parts(ctx_);
        for (unsigned i = 0; i < e.num_args(); ++i) parts.push_back(arg(e, i));
        return kind == Z3_OP_AND ? z3::mk_and(parts) : z3::mk_or(parts);
      }
      case Z3_OP_IMPLIES:
        return z3::implies(arg(e, 0), arg(e, 1));
      case Z3_OP_XOR:
        return arg(e, 0) != arg(e, 1);
      case Z3_OP_ITE:
        return z3::ite(arg(e, 0), arg(e, 1), arg(e, 2));
      case Z3_OP_EQ:
        return arg(e, 0) == arg(e, 1);
      case Z3_OP_DISTINCT: {
        z3::expr_vector parts(ctx_);
        for (unsigned i = 0; i < e.num_args(); ++i) parts.push_back(arg(e, i));
        return z3::distinct(parts);
      }
      case Z3_OP_SLEQ: return arg(e, 0) <= arg(e, 1);
      case Z3_OP_SLT: return arg(e, 0) < arg(e, 1);
      case Z3_OP_SGEQ: return arg(e, 0) >= arg(e, 1);
      case Z3_OP_SGT: return arg(e, 0) > arg(e, 1);
      case Z3_OP_ULEQ:
      case Z3_OP_ULT:
      case Z3_OP_UGEQ:
      case Z3_OP_UGT: {
        z3::expr a = unsignedArg(e, 0), b = unsignedArg(e, 1);
        if (kind == Z3_OP_ULEQ) return a <= b;
        if (kind == Z3_OP_ULT) return a < b;
        if (kind == Z3_OP_UGEQ) return a >= b;
        return a > b;
      }
      default:
        return std::nullopt;
    }
  }

  std::optional<z3::expr> readTerm(const z3::expr& e) {
    if (!e.is_bv() || e.get_sort().bv_size() > 64 || !e.is_app()) return std::nullopt;
    const unsigned w = e.get_sort().bv_size();
    int64_t value = 0;
    if (signedConstant(e, value)) return ctx_.int_val(value);
    const Z3_decl_kind kind = e.decl().decl_kind();
    switch (kind) {
      case Z3_OP_UNINTERPRETED: {
        if (e.num_args() != 0) return std::nullopt;
        if (auto small = smallUnknowns_.find(e.id()); small != smallUnknowns_.end()) return bitsOf(e, small->second);
        z3::expr x = ctx_.int_const(e.decl().name().str().c_str());
        assumed_.push_back(fitsSigned(x, w));
        return x;
      }
      case Z3_OP_BADD:
      case Z3_OP_BMUL: {
        z3::expr sum = arg(e, 0);
        for (unsigned i = 1; i < e.num_args(); ++i) sum = kind == Z3_OP_BADD ? sum + arg(e, i) : product(sum, arg(e, i));
        return sum;
      }
      case Z3_OP_BSUB:
        return arg(e, 0) - arg(e, 1);
      case Z3_OP_BNEG:
        return -arg(e, 0);
      case Z3_OP_SIGN_EXT:
        return arg(e, 0);
      case Z3_OP_ZERO_EXT:
        return unsignedArg(e, 0);
      case Z3_OP_EXTRACT: {
        // The low bits of a value that fits in them.
        if (Z3_get_decl_int_parameter(ctx_, e.decl(), 1) != 0) return std::nullopt;
        z3::expr x = arg(e, 0);
        assumed_.push_back(fitsSigned(x, w));
        return x;
      }
      case Z3_OP_ITE:
        return z3::ite(arg(e, 0), arg(e, 1), arg(e, 2));
      case Z3_OP_BASHR:
      case Z3_OP_BLSHR:
      case Z3_OP_BSHL: {
        int64_t shift = 0;
        if (!signedConstant(e.arg(1), shift) || shift < 0 || shift >= 63) return std::nullopt;
        z3::expr x = kind == Z3_OP_BLSHR ? unsignedArg(e, 0) : arg(e, 0);
        if (kind == Z3_OP_BSHL) return x * power(static_cast<unsigned>(shift));
        return z3::expr(ctx_, Z3_mk_div(ctx_, x, power(static_cast<unsigned>(shift))));  // floor: the arithmetic shift
      }
      case Z3_OP_BAND: {
        // x & (2^k - 1): the remainder of x by 2^k, non-negative for any x.
        if (e.num_args() != 2) return std::nullopt;
        for (unsigned side = 0; side < 2; ++side) {
          int64_t mask = 0;
          if (!signedConstant(e.arg(side), mask) || mask < 0 || (mask & (mask + 1)) != 0) continue;
          return z3::mod(arg(e, 1 - side), ctx_.int_val(mask + 1));
        }
        return std::nullopt;
      }
      case Z3_OP_BSDIV:
      case Z3_OP_BSDIV_I:
      case Z3_OP_BSREM:
      case Z3_OP_BSREM_I:
      case Z3_OP_BUDIV:
      case Z3_OP_BUDIV_I:
      case Z3_OP_BUREM:
      case Z3_OP_BUREM_I: {
        const bool quotient =
            kind == Z3_OP_BSDIV || kind == Z3_OP_BSDIV_I || kind == Z3_OP_BUDIV || kind == Z3_OP_BUDIV_I;
        const bool unsignedRead =
            kind == Z3_OP_BUDIV || kind == Z3_OP_BUDIV_I || kind == Z3_OP_BUREM || kind == Z3_OP_BUREM_I;
        if (auto sliced = sliceByPowerOfTwo(e, quotient)) return sliced;
        // Read as unsigned, both are non-negative: the signed division is the same.
        auto [q, r] = unsignedRead ? truncatedDivision(e, unsignedRead, unsignedArg(e, 0), unsignedArg(e, 1))
                                   : truncatedDivision(e, unsignedRead, arg(e, 0), arg(e, 1));
        return quotient ? q : r;
      }
      default:
        return std::nullopt;
    }
  }

  // A product of two unknowns as a function of them, with a few facts of
  // multiplication (productFacts): equal factors give equal products, and
  // two multiples of one non-negative factor are at least that factor apart.
  // That is what the proofs of tile orders use (two blocks with equal
  // quotients and divisors have equal products; tile = pid + j * grid in a
  // persistent loop, with pid below the grid, meets another block's tile
  // only at equal j), and it keeps the solver out of nonlinear arithmetic,
  // where it wandered (gemm_tc's separation: over 5 M resource units with
  // products, 1 M without; gemm_persistent's undecided at 5 M).
  z3::expr product(const z3::expr& a, const z3::expr& b) {
    if (a.is_numeral() || b.is_numeral()) return a * b;
    if (!times_) times_ = z3::function("times!", ctx_.int_sort(), ctx_.int_sort(), ctx_.int_sort());
    z3::expr p = (*times_)(a, b);
    products_.push_back({a, b, p});
    return p;
  }

  struct Product {
    z3::expr left, right, value;
  };

  void productFacts() {
    for (const Product& p : products_) {
      assumed_.push_back(z3::implies(p.left == 0 || p.right == 0, p.value == 0));
      assumed_.push_back(z3::implies(p.left >= 0 && p.right >= 0, p.value >= 0));

    }
    // x1 > x2 and y >= 0: x1 * y >= x2 * y + y.
    auto apart = [&](const z3::expr& x1, const z3::expr& p1, const z3::expr& x2, const z3::expr& p2, const z3::expr& y) {
      assumed_.push_back(z3::implies(x1 > x2 && y >= 0, p1 >= p2 + y));
      assumed_.push_back(z3::implies(x2 > x1 && y >= 0, p2 >= p1 + y));
    };
    for (size_t i = 0; i < products_.size(); ++i)
      for (size_t j = i + 1; j < products_.size(); ++j) {
        const Product &p = products_[i], &q = products_[j];
        if (z3::eq(p.right, q.right)) apart(p.left, p.value, q.left, q.value, p.right);
        else if (z3::eq(p.left, q.left)) apart(p.right, p.value, q.right, q.value, p.left);
        else if (z3::eq(p.left, q.right)) apart(p.right, p.value, q.left, q.value, p.left);
        else if (z3::eq(p.right, q.left)) apart(p.left, p.value, q.right, q.value, p.right);
      }
  }

  // Unknowns the formula bounds by x <u 2^n at its top level (a thread, a
  // value of a layout) are read as n binary digits: the layout's digit
  // arithmetic (divisions and remainders by powers of two) is then a sum
  // of digits, linear, where the integer solver would search for quotients.
  void findSmallUnknowns(const z3::expr& formula) {
    std::vector<z3::expr> work{formula};
    while (!work.empty()) {
      z3::expr e = work.back();
      work.pop_back();
      if (!e.is_app()) continue;
      if (e.decl().decl_kind() == Z3_OP_AND) {
        for (unsigned i = 0; i < e.num_args(); ++i) work.push_back(e.arg(i));
        continue;
      }
      int64_t bound = 0;
      if (e.decl().decl_kind() != Z3_OP_ULT || !e.arg(0).is_const() || e.arg(0).is_numeral() ||
          !signedConstant(e.arg(1), bound) || bound <= 0 || (bound & (bound - 1)) != 0)
        continue;
      unsigned digits = 0;
      while ((int64_t{1} << digits) < bound) ++digits;
      if (digits > kMostDigits) continue;
      auto [at, fresh] = smallUnknowns_.emplace(e.arg(0).id(), digits);
      if (!fresh) at->second = std::min(at->second, digits);
    }
  }

  z3::expr bitsOf(const z3::expr& x, unsigned digits) {
    Slice slice{x.id(), 0, digits};
    std::vector<z3::expr>& bits = digits_[x.id()];
    for (unsigned i = 0; i < digits; ++i) {
      z3::expr b = ctx_.int_const((x.decl().name().str() + "!digit" + std::to_string(i)).c_str());
      assumed_.push_back(b >= 0 && b <= 1);
      bits.push_back(b);
    }
    slices_.emplace(x.id(), slice);
    return sumOf(slice);
  }

  z3::expr sumOf(const Slice& slice) {
    const std::vector<z3::expr>& bits = digits_.at(slice.unknown);
    z3::expr sum = ctx_.int_val(0);
    for (unsigned i = slice.low; i < slice.high; ++i) sum = sum + bits[i] * power(i - slice.low);
    return sum;
  }

  // x / 2^k or x % 2^k of a slice of digits: another slice.
  std::optional<z3::expr> sliceByPowerOfTwo(const z3::expr& e, bool quotient) {
    auto found = slices_.find(e.arg(0).id());
    int64_t divisor = 0;
    if (found == slices_.end() || !signedConstant(e.arg(1), divisor) || divisor <= 0 || (divisor & (divisor - 1)) != 0)
      return std::nullopt;
    unsigned k = 0;
    while ((int64_t{1} << k) < divisor) ++k;
    Slice slice = found->second;
    if (quotient) slice.low = std::min(slice.high, slice.low + k);
    else slice.high = std::min(slice.high, slice.low + k);
    slices_.emplace(e.id(), slice);
    return sumOf(slice);
  }

  // Operand i of `e` read as unsigned: a constant by its unsigned value
  // (all ones is 2^w - 1, not -1), anything else as its signed value with
  // the assumption that it is not negative.
  z3::expr unsignedArg(const z3::expr& e, unsigned i) {
    const z3::expr operand = e.arg(i);
    if (operand.is_numeral() && operand.is_bv() && operand.get_sort().bv_size() <= 64)
      return ctx_.int_val(operand.get_numeral_uint64());
    z3::expr x = at(operand);
    assumed_.push_back(x >= 0);
    return x;
  }

  // C's quotient and remainder of a / b (truncating toward zero), exactly;
  // by zero as the bit-vectors define it (quotient -1 or 1, remainder a).
  // One pair per operands of `division`, shared by the division and the
  // remainder of the same operands.
  std::pair<z3::expr, z3::expr> truncatedDivision(const z3::expr& division, bool unsignedRead, const z3::expr& a,
                                                  const z3::expr& b) {
    auto key = std::make_tuple(division.arg(0).id(), division.arg(1).id(), unsignedRead);
    if (auto found = divisions_.find(key); found != divisions_.end()) return found->second;
    std::pair<z3::expr, z3::expr> qr(a, a);
    int64_t divisor = 0;
    if (b.is_numeral_i64(divisor) && divisor > 0) {
      qr = byConstant(a, b);
    } else {
      const std::string n = std::to_string(fresh_++);
      z3::expr q = ctx_.int_const(("quotient!" + n).c_str());
      z3::expr r = ctx_.int_const(("remainder!" + n).c_str());
      assumed_.push_back(z3::implies(b == 0, q == z3::ite(a >= 0, ctx_.int_val(-1), ctx_.int_val(1)) && r == a));
      assumed_.push_back(z3::implies(b != 0, a == product(q, b) + r && z3::implies(a >= 0, r >= 0) && z3::implies(a < 0, r <= 0) &&
                                                 z3::implies(b > 0, r < b && -r < b) && z3::implies(b < 0, r < -b && -r < -b)));
      qr = {q, r};
    }
    divisions_.emplace(key, qr);
    return qr;
  }

  // Linear: Z3's floor division by a positive constant, mirrored for a negative dividend.
  std::pair<z3::expr, z3::expr> byConstant(const z3::expr& a, const z3::expr& c) {
    z3::expr q = z3::ite(a >= 0, z3::expr(ctx_, Z3_mk_div(ctx_, a, c)), -z3::expr(ctx_, Z3_mk_div(ctx_, -a, c)));
    return {q, a - c * q};
  }


  z3::context& ctx_;
  std::unordered_map<unsigned, unsigned> smallUnknowns_;  // term id -> digits
  std::unordered_map<unsigned, std::vector<z3::expr>> digits_;
  std::unordered_map<unsigned, Slice> slices_;  // terms that are digits of a small unknown, by term id
  std::unordered_map<unsigned, z3::expr> read_;  // by term id
  std::map<std::tuple<unsigned, unsigned, bool>, std::pair<z3::expr, z3::expr>> divisions_;
  std::vector<z3::expr> assumed_;
  std::optional<z3::func_decl> times_;
  std::vector<Product> products_;
  int fresh_ = 0;
};

}  // namespace

std::optional<z3::expr> readAsIntegers(const z3::expr& formula) {
  if (!formula.is_bool()) return std::nullopt;
  return IntegerReading(formula.ctx()).run(formula);
}

}  // namespace argus::checker
