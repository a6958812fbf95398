#include "checker/scalar_semantics.h"

#include <functional>
#include <map>
#include <vector>

namespace argus::checker {

using ir::BinaryKind;

z3::expr truncatingDivide(const z3::expr& x, const z3::expr& y, bool remainder) {
  z3::context& ctx = x.ctx();
  const unsigned width = x.get_sort().bv_size();
  uint64_t divisor = 0;
  if (y.is_numeral_u64(divisor) && divisor > 1 && divisor < (uint64_t{1} << 30) && (divisor & (divisor - 1)) == 0) {
    int k = 0;
    while ((uint64_t{1} << k) != divisor) ++k;
    // The low k bits are the remainder of a non-negative x. A negative x whose low bits are
    // not all zero rounds toward zero: its quotient is the arithmetic shift (which rounds
    // down) plus one, its remainder the low bits minus the divisor. The remainder is then
    // bit wiring and one comparison, with no adder between x and its low bits.
    z3::expr low = x & ctx.bv_val(static_cast<int64_t>(divisor) - 1, width);
    z3::expr roundsUp = x < 0 && low != 0;
    if (remainder) return z3::ite(roundsUp, low - ctx.bv_val(static_cast<int64_t>(divisor), width), low);
    z3::expr floor = z3::ashr(x, ctx.bv_val(k, width));
    return z3::ite(roundsUp, floor + 1, floor);
  }
  return remainder ? z3::srem(x, y) : z3::to_expr(ctx, Z3_mk_bvsdiv(ctx, x, y));
}

std::optional<z3::expr> encodeLaunchInt(z3::context& ctx, const ir::LaunchExpr& e, const LaunchSizeTerm& size) {
  using K = ir::LaunchExpr::Kind;
  if (e.kind == K::Const) return ctx.bv_val(e.value, 64);
  if (e.kind == K::Size) return z3::sext(size(e.value), 32);
  const bool comparison = e.kind == K::Lt || e.kind == K::Le || e.kind == K::Gt || e.kind == K::Ge ||
                          e.kind == K::Eq || e.kind == K::Ne || e.kind == K::And || e.kind == K::Or || e.kind == K::Not;
  if (comparison) {
    std::optional<z3::expr> truth = encodeLaunchCondition(ctx, e, size);
    if (!truth) return std::nullopt;
    return z3::ite(*truth, ctx.bv_val(1, 64), ctx.bv_val(0, 64));
  }
  if (e.operands.size() != 2) return std::nullopt;
  std::optional<z3::expr> a = encodeLaunchInt(ctx, e.lhs(), size);
  std::optional<z3::expr> b = a ? encodeLaunchInt(ctx, e.rhs(), size) : std::nullopt;
  if (!b) return std::nullopt;
  switch (e.kind) {
    case K::Add: return *a + *b;
    case K::Sub: return *a - *b;
    case K::Mul: return *a * *b;
    case K::FloorDiv: return truncatingDivide(*a, *b, false);
    case K::CeilDiv: return truncatingDivide(*a + *b - 1, *b, false);
    case K::Mod: return truncatingDivide(*a, *b, true);
    case K::Min: return z3::ite(*a < *b, *a, *b);
    case K::Max: return z3::ite(*a > *b, *a, *b);
    default: return std::nullopt;
  }
}

std::optional<z3::expr> encodeLaunchCondition(z3::context& ctx, const ir::LaunchExpr& e, const LaunchSizeTerm& size) {
  using K = ir::LaunchExpr::Kind;
  auto integer = [&](const ir::LaunchExpr& o) { return encodeLaunchInt(ctx, o, size); };
  if (std::optional<z3::expr> divisible = launchDivisibility(e, integer)) return divisible;
  auto pair = [&](auto combine) -> std::optional<z3::expr> {
    if (e.operands.size() != 2) return std::nullopt;
    std::optional<z3::expr> a = integer(e.lhs());
    std::optional<z3::expr> b = a ? integer(e.rhs()) : std::nullopt;
    if (!b) return std::nullopt;
    return combine(*a, *b);
  };
  auto logic = [&](bool conjunction) -> std::optional<z3::expr> {
    if (e.operands.size() != 2) return std::nullopt;
    std::optional<z3::expr> a = encodeLaunchCondition(ctx, e.lhs(), size);
    std::optional<z3::expr> b = a ? encodeLaunchCondition(ctx, e.rhs(), size) : std::nullopt;
    if (!b) return std::nullopt;
    return conjunction ? (*a && *b) : (*a || *b);
  };
  switch (e.kind) {
    case K::Lt: return pair([](const z3::expr& x, const z3::expr& y) { return x < y; });
    case K::Le: return pair([](const z3::expr& x, const z3::expr& y) { return x <= y; });
    case K::Gt: return pair([](const z3::expr& x, const z3::expr& y) { return x > y; });
    case K::Ge: return pair([](const z3::expr& x, const z3::expr& y) { return x >= y; });
    case K::Eq: return pair([](const z3::expr& x, const z3::expr& y) { return x == y; });
    case K::Ne: return pair([](const z3::expr& x, const z3::expr& y) { return x != y; });
    case K::And: return logic(true);
    case K::Or: return logic(false);
    case K::Not: {
      if (e.operands.size() != 1) return std::nullopt;
      std::optional<z3::expr> a = encodeLaunchCondition(ctx, e.negated(), size);
      if (!a) return std::nullopt;
      return !*a;
    }
    default: {
      std::optional<z3::expr> value = integer(e);  // an integer used as a truth value
      if (!value) return std::nullopt;
      return *value != 0;
    }
  }
}

std::optional<z3::expr> launchDivisibility(const ir::LaunchExpr& eq,
                                           const std::function<std::optional<z3::expr>(const ir::LaunchExpr&)>& operand) {
  using K = ir::LaunchExpr::Kind;
  if (eq.kind != K::Eq || eq.operands.size() != 2) return std::nullopt;
  auto isZero = [](const ir::LaunchExpr& e) { return e.kind == K::Const && e.value == 0; };
  const ir::LaunchExpr& mod = isZero(eq.rhs()) ? eq.lhs() : eq.rhs();
  if (!isZero(eq.lhs()) && !isZero(eq.rhs())) return std::nullopt;
  if (mod.kind != K::Mod || mod.operands.size() != 2 || mod.rhs().kind != K::Const) return std::nullopt;
  const int64_t m = mod.rhs().value;
  if (m < 2 || m > (int64_t{1} << 30) || (m & (m - 1)) != 0) return std::nullopt;
  std::optional<z3::expr> x = operand(mod.lhs());
  if (!x) return std::nullopt;
  unsigned bits = 0;
  while ((int64_t{1} << bits) != m) ++bits;
  return x->extract(bits - 1, 0) == x->ctx().bv_val(0, bits);
}

z3::expr encodeI32Compare(ir::CmpKind kind, const z3::expr& x, const z3::expr& y) {
  switch (kind) {
    case ir::CmpKind::Eq: return x == y;
    case ir::CmpKind::Ne: return x != y;
    case ir::CmpKind::Lt: return x < y;
    case ir::CmpKind::Le: return x <= y;
    case ir::CmpKind::Gt: return x > y;
    case ir::CmpKind::Ge: return x >= y;
  }
  return x == y;  // not reached: every CmpKind is listed
}

std::optional<z3::expr> encodeI32Binary(BinaryKind kind, const z3::expr& x, const z3::expr& y) {
  switch (kind) {
    case BinaryKind::Add: return x + y;
    case BinaryKind::Sub: return x - y;
    case BinaryKind::Mul: return x * y;
    case BinaryKind::Div: return truncatingDivide(x, y, false);
    case BinaryKind::Rem: return truncatingDivide(x, y, true);
    case BinaryKind::Min: return z3::ite(x < y, x, y);
    case BinaryKind::Max: return z3::ite(x > y, x, y);
    case BinaryKind::And: return x & y;
    case BinaryKind::Or: return x | y;
    case BinaryKind::Xor: return x ^ y;
    case BinaryKind::Shl: return z3::shl(x, y);
    case BinaryKind::Shr: return z3::ashr(x, y);
    case BinaryKind::Pow: return std::nullopt;
  }
  return std::nullopt;
}

// Stage and parity indices divide by constants ((kt + 2) % 3, (kt / 3) % 2). Bit-blasted, each
// division is a divider circuit, and relating a dozen of them across the window takes seconds.
//
// The window's dividends are mostly one index at neighbouring iterations (kt, kt - 1, ...):
// t = t0 + delta, delta constant. So dividends that differ by a constant form a group with one
// floor division of its first dividend, t0 = F * c + R with 0 <= R < c (one multiplication
// for the bit-blaster), and each member follows from it exactly, for any sign:
// delta = k * c + s with 0 <= s < c gives floor(t / c) = F + k + carry and t mod c =
// R + s - carry * c, carry = (R + s >= c); a wrapped t0 + delta is delta -/+ 2^32; C's
// truncation is the floor plus one (remainder minus c) for a negative t that c does not divide.
z3::expr withoutDivisions(z3::context& ctx, const z3::expr& formula) {
  struct Group {
    z3::expr t0, floorQ, floorR;
    int64_t c;
  };
  std::vector<Group> groups;
  auto bv = [&](int64_t v) { return ctx.bv_val(v, 32); };
  auto fresh = [&](const char* prefix) { return z3::to_expr(ctx, Z3_mk_fresh_const(ctx, prefix, ctx.bv_sort(32))); };
  // floor(t0 + d) / c and its remainder, from the group's floor division of t0.
  auto shifted = [&](const Group& g, int64_t d) -> std::pair<z3::expr, z3::expr> {
    if (d == 0) return {g.floorQ, g.floorR};
    int64_t k = d >= 0 ? d / g.c : -((-d + g.c - 1) / g.c);
    z3::expr sum = g.floorR + bv(d - k * g.c);
    z3::expr carry = sum >= bv(g.c);
    return {g.floorQ + bv(static_cast<int64_t>(static_cast<uint32_t>(static_cast<uint64_t>(k)))) + z3::ite(carry, bv(1), bv(0)),
            z3::ite(carry, sum - bv(g.c), sum)};
  };
  std::map<unsigned, z3::expr> memo;
  std::function<z3::expr(const z3::expr&)> walk = [&](const z3::expr& e) -> z3::expr {
    if (auto it = memo.find(e.id()); it != memo.end()) return it->second;
    if (!e.is_app() || e.num_args() == 0) { memo.emplace(e.id(), e); return e; }
    z3::expr_vector args(ctx);
    for (unsigned i = 0; i < e.num_args(); ++i) args.push_back(walk(e.arg(i)));
    Z3_decl_kind kind = e.decl().decl_kind();
    bool div = kind == Z3_OP_BSDIV || kind == Z3_OP_BSDIV_I, rem = kind == Z3_OP_BSREM || kind == Z3_OP_BSREM_I;
    uint64_t bits = 0;
    z3::expr out = e;
    if ((div || rem) && args.size() == 2 && args[1].is_numeral_u64(bits) && bits > 0 && bits < (1u << 30) &&
        args[0].get_sort().bv_size() == 32) {
      const int64_t c = static_cast<int64_t>(bits);
      const z3::expr& t = args[0];
      const Group* group = nullptr;
      int64_t delta = 0;
      for (const Group& g : groups) {
        uint64_t d = 0;
        if (g.c != c || !(t - g.t0).simplify().is_numeral_u64(d)) continue;
        group = &g;
        delta = static_cast<int32_t>(static_cast<uint32_t>(d));
        break;
      }
      if (!group) {
        groups.push_back(Group{t, fresh("quot"), fresh("rem"), c});
        group = &groups.back();
      }
      auto [floorQ, floorR] = shifted(*group, delta);
      if (delta != 0) {
        auto [upQ, upR] = shifted(*group, delta - (int64_t{1} << 32));
        auto [downQ, downR] = shifted(*group, delta + (int64_t{1} << 32));
        z3::expr wrappedUp = delta > 0 ? t < group->t0 : ctx.bool_val(false);
        z3::expr wrappedDown = delta < 0 ? t > group->t0 : ctx.bool_val(false);
        floorQ = z3::ite(wrappedUp, upQ, z3::ite(wrappedDown, downQ, floorQ));
        floorR = z3::ite(wrappedUp, upR, z3::ite(wrappedDown, downR, floorR));
      }
      z3::expr towardZero = t < 0 && floorR != 0;
      out = div ? z3::ite(towardZero, floorQ + 1, floorQ) : z3::ite(towardZero, floorR - bv(c), floorR);
    } else if (e.num_args() > 0) {
      out = e.decl()(args);
    }
    memo.emplace(e.id(), out);
    return out;
  };
  z3::expr body = walk(formula);
  // |F * c| <= |t0| + c, so the 64-bit product cannot wrap.
  for (const Group& g : groups)
    body = body && z3::sext(g.t0, 32) == z3::sext(g.floorQ, 32) * ctx.bv_val(g.c, 64) + z3::sext(g.floorR, 32) &&
           g.floorR >= 0 && g.floorR < bv(g.c);
  return body;
}

}  // namespace argus::checker
