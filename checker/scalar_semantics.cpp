#include "checker/scalar_semantics.h"

namespace argus::checker {

using ir::BinaryKind;

z3::expr truncatingDivide(const z3::expr& x, const z3::expr& y, bool remainder) {
  z3::context& ctx = x.ctx();
  uint64_t divisor = 0;
  if (y.is_numeral_u64(divisor) && divisor > 1 && divisor < (uint64_t{1} << 30) && (divisor & (divisor - 1)) == 0) {
    int k = 0;
    while ((uint64_t{1} << k) != divisor) ++k;
    // A negative dividend rounds toward zero: add divisor - 1 before the shift.
    z3::expr bias = z3::ashr(x, ctx.bv_val(31, 32)) & ctx.bv_val(static_cast<int64_t>(divisor) - 1, 32);
    z3::expr q = z3::ashr(x + bias, ctx.bv_val(k, 32));
    return remainder ? x - z3::shl(q, ctx.bv_val(k, 32)) : q;
  }
  return remainder ? z3::srem(x, y) : z3::to_expr(ctx, Z3_mk_bvsdiv(ctx, x, y));
}

std::optional<z3::expr> launchDivisibility(const ir::LaunchExpr& eq,
                                           const std::function<std::optional<z3::expr>(const ir::LaunchExpr&)>& operand) {
  using K = ir::LaunchExpr::Kind;
  if (eq.kind != K::Eq || eq.operands.size() != 2) return std::nullopt;
  auto isZero = [](const ir::LaunchExpr& e) { return e.kind == K::Const && e.value == 0; };
  const ir::LaunchExpr& mod = isZero(eq.operands[1]) ? eq.operands[0] : eq.operands[1];
  if (!isZero(eq.operands[0]) && !isZero(eq.operands[1])) return std::nullopt;
  if (mod.kind != K::Mod || mod.operands.size() != 2 || mod.operands[1].kind != K::Const) return std::nullopt;
  const int64_t m = mod.operands[1].value;
  if (m < 2 || m > (int64_t{1} << 30) || (m & (m - 1)) != 0) return std::nullopt;
  std::optional<z3::expr> x = operand(mod.operands[0]);
  if (!x) return std::nullopt;
  unsigned bits = 0;
  while ((int64_t{1} << bits) != m) ++bits;
  return x->extract(bits - 1, 0) == x->ctx().bv_val(0, bits);
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

}  // namespace argus::checker
