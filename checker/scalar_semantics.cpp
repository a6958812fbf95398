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
