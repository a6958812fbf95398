#include "checker/narrow_width.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "checker/formula_walk.h"

namespace argus::checker {

namespace {

using Wide = __int128;

struct Interval {
  Wide lo, hi;
  bool operator==(const Interval&) const = default;
};

Wide minSigned(unsigned w) { return -(Wide(1) << (w - 1)); }
Wide maxSigned(unsigned w) { return (Wide(1) << (w - 1)) - 1; }
Interval fullRange(unsigned w) { return {minSigned(w), maxSigned(w)}; }
bool fits(const Interval& i, unsigned w) { return i.lo >= minSigned(w) && i.hi <= maxSigned(w); }
// A result past the width wraps around: then it may be any value.
Interval wrapped(const Interval& i, unsigned w) { return fits(i, w) ? i : fullRange(w); }
unsigned signedBits(const Interval& i) {
  unsigned b = 1;
  while (b < 127 && !fits(i, b)) ++b;
  return b;
}
Wide floorDiv(Wide a, Wide b) {  // b > 0
  Wide q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
Interval hull(std::initializer_list<Wide> values) {
  return {*std::min_element(values.begin(), values.end()), *std::max_element(values.begin(), values.end())};
}
Interval join(const Interval& a, const Interval& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

bool isComparison(Z3_decl_kind k) {
  switch (k) {
    case Z3_OP_ULEQ: case Z3_OP_SLEQ: case Z3_OP_UGEQ: case Z3_OP_SGEQ:
    case Z3_OP_ULT: case Z3_OP_SLT: case Z3_OP_UGT: case Z3_OP_SGT:
      return true;
    default:
      return false;
  }
}

// Truncated division of intervals (SMT-LIB's bvsdiv: x / 0 is -1 for x >= 0, 1 otherwise).
Interval divide(const Interval& a, const Interval& b) {
  std::vector<Wide> out;
  auto corners = [&](Wide blo, Wide bhi) {
    for (Wide x : {a.lo, a.hi})
      for (Wide y : {blo, bhi}) out.push_back(x / y);
    if (a.lo < 0 && a.hi > 0) out.push_back(0);
  };
  if (b.hi >= 1) corners(std::max<Wide>(b.lo, 1), b.hi);
  if (b.lo <= -1) corners(b.lo, std::min<Wide>(b.hi, -1));
  if (b.lo <= 0 && b.hi >= 0) {
    if (a.hi >= 0) out.push_back(-1);
    if (a.lo < 0) out.push_back(1);
  }
  return {*std::min_element(out.begin(), out.end()), *std::max_element(out.begin(), out.end())};
}

class Narrower {
 public:
  Narrower(const z3::expr& formula, unsigned maxWidth)
      : ctx_(formula.ctx()), formula_(formula), maxWidth_(maxWidth), order_(postorder(formula)) {}

  std::optional<z3::expr> run() {
    bool circuits = false;
    for (const z3::expr& e : order_) {
      if (!e.is_app() || (e.is_bv() && e.get_sort().bv_size() > 64)) return std::nullopt;
      circuits = circuits || hasCircuit(e);
    }
    for (int round = 0; round < 8; ++round) {
      computeIntervals();
      if (!refineBounds()) break;
      if (empty_) return ctx_.bool_val(false);  // bounds no value meets: no model
    }
    // Without a multiplier or divider the bit-blasted formula is small at
    // any width, and a second question would cost more than it saves.
    if (!circuits) return std::nullopt;
    // An unknown whose bound is wider than the width keeps no bound: the
    // narrowed formula cannot state it, and no interval may rely on it.
    for (;;) {
      computeIntervals();
      std::optional<unsigned> width = neededWidth();
      if (!width) return std::nullopt;
      width_ = *width;
      bool dropped = false;
      for (auto it = bounds_.begin(); it != bounds_.end();)
        if (!fits(it->second, width_)) {
          it = bounds_.erase(it);
          dropped = true;
        } else {
          ++it;
        }
      if (!dropped) break;
    }
    return rebuild();
  }

 private:
  // A product of two unknowns, or a division or remainder by anything but a power of two.
  static bool hasCircuit(const z3::expr& e) {
    if (!e.is_bv() || e.num_args() < 2) return false;
    switch (e.decl().decl_kind()) {
      case Z3_OP_BMUL: {
        unsigned unknown = 0;
        for (unsigned i = 0; i < e.num_args(); ++i) unknown += e.arg(i).is_numeral() ? 0 : 1;
        return unknown >= 2;
      }
      case Z3_OP_BSDIV: case Z3_OP_BUDIV: case Z3_OP_BSREM: case Z3_OP_BUREM: case Z3_OP_BSMOD: {
        const z3::expr d = e.arg(1);
        if (!d.is_numeral()) return true;
        uint64_t v = 0;
        return !d.is_numeral_u64(v) || v == 0 || (v & (v - 1)) != 0;
      }
      default: return false;
    }
  }

  Interval& interval(const z3::expr& e) { return intervals_[e.id()]; }
  unsigned widthOf(const z3::expr& e) const { return e.get_sort().bv_size(); }
  bool narrowed(const z3::expr& e) const { return e.is_bv() && widthOf(e) > width_; }

  static bool isVariable(const z3::expr& e) { return e.is_const() && !e.is_numeral() && e.decl().decl_kind() == Z3_OP_UNINTERPRETED; }

  Interval numeralValue(const z3::expr& e) {
    unsigned w = widthOf(e);
    Wide v = 0;
    for (char c : e.get_decimal_string(0)) v = v * 10 + (c - '0');
    if (v > maxSigned(w)) v -= Wide(1) << w;
    return {v, v};
  }

  void computeIntervals() {
    truths_.clear();
    opaque_.clear();
    for (const z3::expr& e : order_) {
      if (e.is_bool()) {
        if (std::optional<bool> t = truthOf(e)) truths_[e.id()] = *t;
      } else if (e.is_bv()) {
        interval(e) = intervalOf(e);
        if (isOpaque(e)) opaque_.insert(e.id());
      }
    }
  }

  // A value the formula only compares for equality: an uninterpreted
  // function's (a tag), or a choice between such values and constants. Any
  // w-bit values that are equal where the wide ones are serve as well, so its
  // width asks nothing, as long as its only readers are = and distinct.
  bool isOpaque(const z3::expr& e) const {
    if (e.num_args() == 0) return false;
    Z3_decl_kind k = e.decl().decl_kind();
    if (k == Z3_OP_UNINTERPRETED) return true;
    if (k != Z3_OP_ITE) return false;
    bool some = false;
    for (unsigned i = 1; i < 3; ++i) {
      const z3::expr& branch = e.arg(i);
      bool opaque = opaque_.count(branch.id()) > 0;
      auto it = intervals_.find(branch.id());
      if (!opaque && (it == intervals_.end() || it->second.lo != it->second.hi)) return false;
      some = some || opaque;
    }
    return some;
  }

  std::optional<bool> truth(const z3::expr& e) const {
    auto it = truths_.find(e.id());
    if (it == truths_.end()) return std::nullopt;
    return it->second;
  }

  // A condition the intervals decide (a constant one included): the same in every model.
  std::optional<bool> truthOf(const z3::expr& e) {
    if (e.is_true()) return true;
    if (e.is_false()) return false;
    if (!e.is_app() || e.num_args() == 0) return std::nullopt;
    switch (e.decl().decl_kind()) {
      case Z3_OP_NOT:
        if (std::optional<bool> t = truth(e.arg(0))) return !*t;
        return std::nullopt;
      case Z3_OP_AND: case Z3_OP_OR: {
        const bool isAnd = e.decl().decl_kind() == Z3_OP_AND;
        bool all = true;
        for (unsigned i = 0; i < e.num_args(); ++i) {
          std::optional<bool> t = truth(e.arg(i));
          if (t && *t != isAnd) return !isAnd;  // a false conjunct, a true disjunct
          all = all && t.has_value();
        }
        if (all) return isAnd;
        return std::nullopt;
      }
      default: return decided(e);
    }
  }

  Interval intervalOf(const z3::expr& e) {
    const unsigned w = widthOf(e);
    if (e.is_numeral()) return numeralValue(e);
    if (isVariable(e)) {
      auto it = bounds_.find(e.id());
      return it == bounds_.end() ? fullRange(w) : it->second;
    }
    auto arg = [&](unsigned i) { return interval(e.arg(i)); };
    const unsigned n = e.num_args();
    switch (e.decl().decl_kind()) {
      case Z3_OP_BADD: {
        Interval r = arg(0);
        for (unsigned i = 1; i < n; ++i) r = wrapped({r.lo + arg(i).lo, r.hi + arg(i).hi}, w);
        return r;
      }
      case Z3_OP_BSUB: return wrapped({arg(0).lo - arg(1).hi, arg(0).hi - arg(1).lo}, w);
      case Z3_OP_BNEG: return wrapped({-arg(0).hi, -arg(0).lo}, w);
      case Z3_OP_BMUL: {
        Interval r = arg(0);
        for (unsigned i = 1; i < n; ++i) {
          Interval b = arg(i);
          if (!fits(r, 64) || !fits(b, 64)) return fullRange(w);
          r = wrapped(hull({r.lo * b.lo, r.lo * b.hi, r.hi * b.lo, r.hi * b.hi}), w);
        }
        return r;
      }
      case Z3_OP_BSDIV: return wrapped(divide(arg(0), arg(1)), w);
      case Z3_OP_BUDIV:
        if (arg(0).lo < 0 || arg(1).lo < 0) return fullRange(w);
        return wrapped(divide(arg(0), arg(1)), w);
      case Z3_OP_BSREM: {
        Interval a = arg(0), b = arg(1);
        Wide m = std::max(b.hi, -b.lo);
        Interval r{a.lo < 0 ? std::max(a.lo, 1 - m) : 0, a.hi > 0 ? std::min(a.hi, m - 1) : 0};
        if (b.lo <= 0 && b.hi >= 0) r = join(r, a);  // x rem 0 is x
        return r;
      }
      case Z3_OP_BUREM: {
        Interval a = arg(0), b = arg(1);
        if (a.lo < 0 || b.lo < 0) return fullRange(w);
        Interval r{0, std::max<Wide>(0, std::min(a.hi, b.hi - 1))};
        if (b.lo == 0) r = join(r, a);
        return r;
      }
      case Z3_OP_BSMOD: {
        Interval b = arg(1);
        if (b.lo > 0) return {0, b.hi - 1};
        if (b.hi < 0) return {b.lo + 1, 0};
        return fullRange(w);
      }
      case Z3_OP_BAND: {
        Wide hi = -1;
        for (unsigned i = 0; i < n; ++i)
          if (arg(i).lo >= 0) hi = hi < 0 ? arg(i).hi : std::min(hi, arg(i).hi);
        return hi < 0 ? fullRange(w) : Interval{0, hi};
      }
      case Z3_OP_BOR: case Z3_OP_BXOR: {
        Wide hi = 0;
        for (unsigned i = 0; i < n; ++i) {
          if (arg(i).lo < 0) return fullRange(w);
          hi = std::max(hi, arg(i).hi);
        }
        Wide all = 1;
        while (all <= hi) all <<= 1;
        return wrapped({0, all - 1}, w);
      }
      case Z3_OP_BNOT: return {-arg(0).hi - 1, -arg(0).lo - 1};
      case Z3_OP_BSHL: {
        Interval k = arg(1);
        if (k.lo != k.hi || k.lo < 0 || k.lo >= w || !fits(arg(0), 64)) return fullRange(w);
        Wide f = Wide(1) << static_cast<unsigned>(k.lo);
        return wrapped({arg(0).lo * f, arg(0).hi * f}, w);
      }
      case Z3_OP_BASHR: {
        Interval k = arg(1);
        if (k.lo < 0 || k.hi >= w) return fullRange(w);
        Interval a = arg(0);
        Wide fLo = Wide(1) << static_cast<unsigned>(k.lo), fHi = Wide(1) << static_cast<unsigned>(k.hi);
        return hull({floorDiv(a.lo, fLo), floorDiv(a.lo, fHi), floorDiv(a.hi, fLo), floorDiv(a.hi, fHi)});
      }
      case Z3_OP_BLSHR: {
        Interval k = arg(1), a = arg(0);
        if (k.lo < 0 || k.hi >= w || a.lo < 0) return fullRange(w);
        return {a.lo >> static_cast<unsigned>(k.hi), a.hi >> static_cast<unsigned>(k.lo)};
      }
      case Z3_OP_SIGN_EXT: return arg(0);
      case Z3_OP_ZERO_EXT:
        if (arg(0).lo >= 0) return arg(0);
        return {0, (Wide(1) << widthOf(e.arg(0))) - 1};
      case Z3_OP_EXTRACT: {
        unsigned lo = e.lo();
        Interval a = arg(0);
        Wide f = Wide(1) << lo;
        return wrapped({floorDiv(a.lo, f), floorDiv(a.hi, f)}, w);
      }
      case Z3_OP_ITE:
        if (std::optional<bool> t = truth(e.arg(0))) return *t ? arg(1) : arg(2);
        return join(arg(1), arg(2));
      default: return fullRange(w);
    }
  }

  // Tightens the unknowns' intervals by the conjuncts that compare one with
  // a term; true when one changed.
  bool refineBounds() {
    bool changed = false;
    std::vector<std::pair<z3::expr, bool>> work{{formula_, true}};
    while (!work.empty()) {
      auto [e, positive] = work.back();
      work.pop_back();
      Z3_decl_kind k = e.decl().decl_kind();
      if (positive && k == Z3_OP_AND) {
        for (unsigned i = 0; i < e.num_args(); ++i) work.emplace_back(e.arg(i), true);
      } else if (!positive && k == Z3_OP_OR) {
        for (unsigned i = 0; i < e.num_args(); ++i) work.emplace_back(e.arg(i), false);
      } else if (k == Z3_OP_NOT) {
        work.emplace_back(e.arg(0), !positive);
      } else if ((isComparison(k) || (k == Z3_OP_EQ && positive)) && e.arg(0).is_bv()) {
        changed = bound(e.arg(0), e.arg(1), k, positive, false) || changed;
        changed = bound(e.arg(1), e.arg(0), k, positive, true) || changed;
      }
    }
    return changed;
  }

  // What `x op y` (`y op x` when `flipped`, negated unless `positive`) says
  // of x, projected onto the unknowns x is made of.
  bool bound(const z3::expr& x, const z3::expr& y, Z3_decl_kind op, bool positive, bool flipped) {
    if (!positive) {
      switch (op) {  // not (a < b) is a >= b, and so on
        case Z3_OP_ULT: op = Z3_OP_UGEQ; break;
        case Z3_OP_ULEQ: op = Z3_OP_UGT; break;
        case Z3_OP_UGT: op = Z3_OP_ULEQ; break;
        case Z3_OP_UGEQ: op = Z3_OP_ULT; break;
        case Z3_OP_SLT: op = Z3_OP_SGEQ; break;
        case Z3_OP_SLEQ: op = Z3_OP_SGT; break;
        case Z3_OP_SGT: op = Z3_OP_SLEQ; break;
        case Z3_OP_SGEQ: op = Z3_OP_SLT; break;
        default: return false;
      }
    }
    if (flipped) {
      switch (op) {  // y < x is x > y
        case Z3_OP_ULT: op = Z3_OP_UGT; break;
        case Z3_OP_ULEQ: op = Z3_OP_UGEQ; break;
        case Z3_OP_UGT: op = Z3_OP_ULT; break;
        case Z3_OP_UGEQ: op = Z3_OP_ULEQ; break;
        case Z3_OP_SLT: op = Z3_OP_SGT; break;
        case Z3_OP_SLEQ: op = Z3_OP_SGEQ; break;
        case Z3_OP_SGT: op = Z3_OP_SLT; break;
        case Z3_OP_SGEQ: op = Z3_OP_SLEQ; break;
        default: break;
      }
    }
    const unsigned w = widthOf(x);
    const Interval other = interval(y);
    Interval limit = fullRange(w);
    switch (op) {
      case Z3_OP_EQ: limit = other; break;
      case Z3_OP_SLT: limit.hi = other.hi - 1; break;
      case Z3_OP_SLEQ: limit.hi = other.hi; break;
      case Z3_OP_SGT: limit.lo = other.lo + 1; break;
      case Z3_OP_SGEQ: limit.lo = other.lo; break;
      // Unsigned: below a bound that is a non-negative signed value as
      // well, x is non-negative as a signed value too.
      case Z3_OP_ULT:
        if (other.lo >= 0 && other.hi - 1 <= maxSigned(w)) limit = {0, other.hi - 1};
        break;
      case Z3_OP_ULEQ:
        if (other.lo >= 0 && other.hi <= maxSigned(w)) limit = {0, other.hi};
        break;
      default: break;
    }
    if (limit == fullRange(w)) return false;
    return project(x, limit);
  }

  // Narrows the unknowns under `term` so that it stays within `limit`
  // (interval propagation backwards, through the operations that do not wrap
  // in the current intervals): true when an unknown's bound changed.
  bool project(const z3::expr& term, const Interval& limit) {
    bool changed = false;
    std::vector<std::pair<z3::expr, Interval>> work{{term, limit}};
    while (!work.empty()) {
      auto [e, lim] = work.back();
      work.pop_back();
      const Interval current = isVariable(e) ? variableBound(e) : interval(e);
      const Interval in{std::max(current.lo, lim.lo), std::min(current.hi, lim.hi)};
      if (in == current) continue;
      if (in.lo > in.hi) {
        empty_ = true;
        return true;
      }
      if (isVariable(e)) {
        bounds_[e.id()] = in;
        changed = true;
        continue;
      }
      if (e.num_args() == 0) continue;
      const unsigned w = widthOf(e);
      auto arg = [&](unsigned i) { return interval(e.arg(i)); };
      switch (e.decl().decl_kind()) {
        case Z3_OP_SIGN_EXT: work.emplace_back(e.arg(0), in); break;
        case Z3_OP_ZERO_EXT:  // the operand's unsigned value, its signed one below 2^(width-1)
          if (arg(0).lo >= 0 || (in.lo >= 0 && in.hi <= maxSigned(widthOf(e.arg(0))))) work.emplace_back(e.arg(0), in);
          break;
        case Z3_OP_EXTRACT:
          if (e.lo() == 0 && fits(arg(0), w)) work.emplace_back(e.arg(0), in);
          break;
        case Z3_OP_BADD: {
          Wide lo = 0, hi = 0;
          for (unsigned i = 0; i < e.num_args(); ++i) lo += arg(i).lo, hi += arg(i).hi;
          if (!fits({lo, hi}, w)) break;
          for (unsigned i = 0; i < e.num_args(); ++i)
            work.emplace_back(e.arg(i), Interval{in.lo - (hi - arg(i).hi), in.hi - (lo - arg(i).lo)});
          break;
        }
        case Z3_OP_BSUB: {
          Interval a = arg(0), b = arg(1);
          if (!fits({a.lo - b.hi, a.hi - b.lo}, w)) break;
          work.emplace_back(e.arg(0), Interval{in.lo + b.lo, in.hi + b.hi});
          work.emplace_back(e.arg(1), Interval{a.lo - in.hi, a.hi - in.lo});
          break;
        }
        case Z3_OP_BMUL: {
          if (e.num_args() != 2) break;
          for (unsigned i = 0; i < 2; ++i) {
            Interval c = arg(i), x = arg(1 - i);
            if (c.lo != c.hi || c.lo <= 0 || !fits(x, 64) || !fits({x.lo * c.lo, x.hi * c.lo}, w)) continue;
            work.emplace_back(e.arg(1 - i), Interval{-floorDiv(-in.lo, c.lo), floorDiv(in.hi, c.lo)});
            break;
          }
          break;
        }
        default: break;
      }
    }
    return changed;
  }

  Interval variableBound(const z3::expr& v) {
    auto it = bounds_.find(v.id());
    return it == bounds_.end() ? fullRange(widthOf(v)) : it->second;
  }

  // A comparison the intervals decide: the same in every model.
  std::optional<bool> decided(const z3::expr& e) {
    if (e.num_args() != 2 || !e.arg(0).is_bv()) return std::nullopt;
    const Interval a = interval(e.arg(0)), b = interval(e.arg(1));
    Z3_decl_kind k = e.decl().decl_kind();
    bool unsignedOrder = k == Z3_OP_ULT || k == Z3_OP_ULEQ || k == Z3_OP_UGT || k == Z3_OP_UGEQ;
    if (unsignedOrder && (a.lo < 0 || b.lo < 0)) return std::nullopt;
    switch (k) {
      case Z3_OP_EQ: case Z3_OP_DISTINCT: {
        std::optional<bool> equal;
        if (a.hi < b.lo || b.hi < a.lo) equal = false;
        else if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) equal = true;
        if (!equal) return std::nullopt;
        return k == Z3_OP_EQ ? *equal : !*equal;
      }
      case Z3_OP_ULT: case Z3_OP_SLT:
        if (a.hi < b.lo) return true;
        if (a.lo >= b.hi) return false;
        return std::nullopt;
      case Z3_OP_ULEQ: case Z3_OP_SLEQ:
        if (a.hi <= b.lo) return true;
        if (a.lo > b.hi) return false;
        return std::nullopt;
      case Z3_OP_UGT: case Z3_OP_SGT:
        if (a.lo > b.hi) return true;
        if (a.hi <= b.lo) return false;
        return std::nullopt;
      case Z3_OP_UGEQ: case Z3_OP_SGEQ:
        if (a.lo >= b.hi) return true;
        if (a.hi < b.lo) return false;
        return std::nullopt;
      default: return std::nullopt;
    }
  }

  // The width every value read by a width-sensitive operation fits in, with
  // a bit to spare (no INT_MIN / -1): nullopt when it is not below both the
  // narrowest term it would narrow and `maxWidth_`.
  std::optional<unsigned> neededWidth() {
    unsigned need = 8, narrowest = 64;
    bool anyWide = false, opaqueValues = false;
    for (const z3::expr& e : order_) {
      if (e.is_bv() && widthOf(e) > maxWidth_) {
        anyWide = true;
        narrowest = std::min(narrowest, widthOf(e));
      }
      if (e.num_args() == 0) continue;
      Z3_decl_kind k = e.decl().decl_kind();
      auto reads = [&](unsigned i, bool nonNegative) {
        const z3::expr a = e.arg(i);
        if (!a.is_bv()) return true;
        if (opaque_.count(a.id())) {
          opaqueValues = true;
          return k == Z3_OP_EQ || k == Z3_OP_DISTINCT;
        }
        Interval v = interval(a);
        if (nonNegative && v.lo < 0) return false;
        need = std::max(need, signedBits(v) + 1);
        return true;
      };
      bool ok = true;
      switch (k) {
        case Z3_OP_BSDIV: case Z3_OP_BSREM: case Z3_OP_BSMOD: case Z3_OP_BASHR:
          ok = reads(0, false) && reads(1, false);
          break;
        case Z3_OP_BUDIV: case Z3_OP_BUREM: case Z3_OP_BLSHR:
          ok = reads(0, true) && reads(1, true);
          break;
        case Z3_OP_BSHL: ok = reads(1, false); break;
        case Z3_OP_EXTRACT:
          if (e.lo() > 0) ok = reads(0, false);
          break;
        case Z3_OP_EQ: case Z3_OP_DISTINCT:
          if (truth(e)) break;
          for (unsigned i = 0; i < e.num_args() && ok; ++i) ok = reads(i, false);
          break;
        case Z3_OP_UNINTERPRETED:  // equal arguments, equal values: they are read whole
          for (unsigned i = 0; i < e.num_args() && ok; ++i) ok = reads(i, false);
          break;
        default:
          if (isComparison(k) && !truth(e)) ok = reads(0, false) && reads(1, false);
          break;
      }
      if (!ok) return std::nullopt;
    }
    // Room for every compared value to stay distinct from the others.
    if (opaqueValues) need = std::max(need, 16u);
    if (!anyWide || need >= narrowest || need > maxWidth_) return std::nullopt;
    return need;
  }

  z3::expr numeral(Wide v, unsigned w) {
    uint64_t bits = static_cast<uint64_t>(v) & (w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1);
    return ctx_.bv_val(bits, w);
  }

  std::optional<z3::expr> rebuild() {
    std::unordered_map<unsigned, z3::expr> to;
    z3::expr_vector ranges(ctx_);
    for (const z3::expr& e : order_) {
      std::optional<z3::expr> out = rebuilt(e, to, ranges);
      if (!out) return std::nullopt;
      to.emplace(e.id(), *out);
    }
    z3::expr result = to.at(formula_.id());
    for (const z3::expr& r : ranges) result = result && r;
    return result;
  }

  std::optional<z3::expr> rebuilt(const z3::expr& e, const std::unordered_map<unsigned, z3::expr>& to,
                                  z3::expr_vector& ranges) {
    const unsigned n = e.num_args();
    z3::expr_vector args(ctx_);
    bool sameSorts = true;
    for (unsigned i = 0; i < n; ++i) {
      const z3::expr& a = to.at(e.arg(i).id());
      args.push_back(a);
      sameSorts = sameSorts && z3::eq(a.get_sort(), e.arg(i).get_sort());
    }
    if (n > 0 && e.decl().decl_kind() == Z3_OP_UNINTERPRETED && (!sameSorts || narrowed(e))) {
      // The same function over the narrowed arguments, to w-bit values if wider.
      z3::sort_vector domain(ctx_);
      for (unsigned i = 0; i < n; ++i) domain.push_back(args[i].get_sort());
      z3::sort range = narrowed(e) ? ctx_.bv_sort(width_) : e.get_sort();
      return ctx_.function((e.decl().name().str() + "!narrow").c_str(), domain, range)(args);
    }
    if (!narrowed(e)) {
      if (n == 0) {
        // An unknown already narrow keeps its bound too: the conditions its
        // bound decided are constants now.
        if (auto it = bounds_.find(e.id()); it != bounds_.end() && e.is_bv())
          ranges.push_back(e >= numeral(it->second.lo, widthOf(e)) && e <= numeral(it->second.hi, widthOf(e)));
        return e;
      }
      if (e.is_bool())
        if (std::optional<bool> known = truth(e)) return ctx_.bool_val(*known);
      if (sameSorts) return e.decl()(args);
      Z3_decl_kind k = e.decl().decl_kind();
      switch (k) {
        case Z3_OP_EQ: return args[0] == args[1];
        case Z3_OP_DISTINCT: return z3::distinct(args);
        case Z3_OP_ITE: return z3::ite(args[0], args[1], args[2]);
        case Z3_OP_ULEQ: return z3::ule(args[0], args[1]);
        case Z3_OP_SLEQ: return args[0] <= args[1];
        case Z3_OP_UGEQ: return z3::uge(args[0], args[1]);
        case Z3_OP_SGEQ: return args[0] >= args[1];
        case Z3_OP_ULT: return z3::ult(args[0], args[1]);
        case Z3_OP_SLT: return args[0] < args[1];
        case Z3_OP_UGT: return z3::ugt(args[0], args[1]);
        case Z3_OP_SGT: return args[0] > args[1];
        case Z3_OP_EXTRACT: {  // of a narrowed term: its low bits, or (fitting) shifted ones
          const unsigned hi = e.hi(), lo = e.lo();
          z3::expr from = args[0];
          if (hi >= width_) from = z3::sext(from, hi + 1 - width_);
          return from.extract(hi, lo);
        }
        default: return std::nullopt;
      }
    }
    const unsigned w = width_;
    if (e.is_numeral()) return numeral(numeralValue(e).lo, w);
    if (isVariable(e)) {
      z3::expr v = ctx_.bv_const((e.decl().name().str() + "!narrow").c_str(), w);
      if (auto it = bounds_.find(e.id()); it != bounds_.end())
        ranges.push_back(v >= numeral(it->second.lo, w) && v <= numeral(it->second.hi, w));
      return v;
    }
    auto fold = [&](auto op) {
      z3::expr r = args[0];
      for (unsigned i = 1; i < n; ++i) r = op(r, args[i]);
      return r;
    };
    switch (e.decl().decl_kind()) {
      case Z3_OP_BADD: return fold([](const z3::expr& a, const z3::expr& b) { return a + b; });
      case Z3_OP_BMUL: return fold([](const z3::expr& a, const z3::expr& b) { return a * b; });
      case Z3_OP_BAND: return fold([](const z3::expr& a, const z3::expr& b) { return a & b; });
      case Z3_OP_BOR: return fold([](const z3::expr& a, const z3::expr& b) { return a | b; });
      case Z3_OP_BXOR: return fold([](const z3::expr& a, const z3::expr& b) { return a ^ b; });
      case Z3_OP_BSUB: return args[0] - args[1];
      case Z3_OP_BNEG: return -args[0];
      case Z3_OP_BNOT: return ~args[0];
      case Z3_OP_BSDIV: return args[0] / args[1];
      case Z3_OP_BUDIV: return z3::udiv(args[0], args[1]);
      case Z3_OP_BSREM: return z3::srem(args[0], args[1]);
      case Z3_OP_BUREM: return z3::urem(args[0], args[1]);
      case Z3_OP_BSMOD: return z3::smod(args[0], args[1]);
      case Z3_OP_BSHL: return z3::shl(args[0], args[1]);
      case Z3_OP_BASHR: return z3::ashr(args[0], args[1]);
      case Z3_OP_BLSHR: return z3::lshr(args[0], args[1]);
      case Z3_OP_ITE: return z3::ite(args[0], args[1], args[2]);
      case Z3_OP_SIGN_EXT: case Z3_OP_ZERO_EXT: {
        // The low bits of an extension are the operand's.
        const unsigned from = args[0].get_sort().bv_size();
        if (from == w) return args[0];
        if (from > w) return std::nullopt;
        return e.decl().decl_kind() == Z3_OP_SIGN_EXT ? z3::sext(args[0], w - from) : z3::zext(args[0], w - from);
      }
      case Z3_OP_EXTRACT: {
        const unsigned from = args[0].get_sort().bv_size();
        if (from != w) return std::nullopt;
        return e.lo() == 0 ? args[0] : z3::ashr(args[0], numeral(e.lo(), w));
      }
      default: return std::nullopt;
    }
  }

  z3::context& ctx_;
  z3::expr formula_;
  unsigned maxWidth_;
  unsigned width_ = 64;
  std::vector<z3::expr> order_;
  std::unordered_map<unsigned, Interval> intervals_;
  std::unordered_map<unsigned, Interval> bounds_;  // of the unknowns, by term id
  std::unordered_map<unsigned, bool> truths_;      // of the conditions the intervals decide
  std::unordered_set<unsigned> opaque_;            // isOpaque
  bool empty_ = false;
};

}  // namespace

z3::expr unknownsWithin(const z3::expr& formula, int64_t bound) {
  z3::context& ctx = formula.ctx();
  z3::expr all = ctx.bool_val(true);
  for (const z3::expr& e : postorder(formula)) {
    if (!e.is_bv() || !e.is_const() || e.is_numeral() || e.decl().decl_kind() != Z3_OP_UNINTERPRETED) continue;
    const unsigned w = e.get_sort().bv_size();
    if (w < 16) continue;
    all = all && e >= ctx.bv_val(-bound, w) && e <= ctx.bv_val(bound, w);
  }
  return all;
}

std::optional<z3::expr> narrowedFormula(const z3::expr& formula, unsigned maxWidth) {
  if (!formula.is_bool()) return std::nullopt;
  return Narrower(formula, maxWidth).run();
}

}  // namespace argus::checker
