// The meaning of the IR's i32 arithmetic as Z3 bit-vector terms, in one place
// (internal to the checker): every encoder of scalars (invariant_scalar,
// sync_encode, tag_scalars) builds its binary operations here, so the three
// agree, and a rewrite that makes the solver faster applies to all of them.
#pragma once

#include <z3++.h>

#include <functional>
#include <optional>

#include "ir/ir.h"

namespace argus::checker {

// x `kind` y on 32-bit two's complement values, as the generated code computes
// it: + - * wrap, / and % truncate toward zero (C), >> is arithmetic. Nothing
// for an operation with no i32 meaning here (Pow): the caller treats the
// result as an unknown value.
std::optional<z3::expr> encodeI32Binary(ir::BinaryKind kind, const z3::expr& x, const z3::expr& y);

// The truth of x `kind` y on 32-bit two's complement values (signed, as the generated code
// compares i32).
z3::expr encodeI32Compare(ir::CmpKind kind, const z3::expr& x, const z3::expr& y);

// C's truncating x / y or x % y. By a power-of-two constant it is the low
// bits (the remainder) or an arithmetic shift (the quotient), corrected for a
// negative dividend: bit wiring instead of a divider circuit. Measured
// (resource units of the mbarrier check, 2026-12-06): with the older form
// (add divisor - 1 to a negative x, then shift) gemm_wgmma took 21.0 M, with
// this one 3.4 M; attention_wgmma 18.0 M -> 2.3 M.
z3::expr truncatingDivide(const z3::expr& x, const z3::expr& y, bool remainder);

// Launch expressions (grid extents, require(...) conditions) as the host and every
// runtime evaluate them (ir::LaunchExpr::evaluate): 64-bit wrapping arithmetic, C's
// truncating `//` and `%` (by a power of two as bits, truncatingDivide), comparisons
// and logic as 0/1. `size(i)` is size i's 32-bit term; each analysis names its own.
// Nothing for an expression it cannot encode (a malformed one): the caller assumes
// nothing about it. Every checker analysis encodes launches here; the shared vectors
// (tests/data/launch_expr_vectors.json) check it against the evaluator.
using LaunchSizeTerm = std::function<z3::expr(int64_t sizeIndex)>;
std::optional<z3::expr> encodeLaunchInt(z3::context& ctx, const ir::LaunchExpr& e, const LaunchSizeTerm& size);
std::optional<z3::expr> encodeLaunchCondition(z3::context& ctx, const ir::LaunchExpr& e, const LaunchSizeTerm& size);

// A launch condition `x % m == 0` (either side) with m a positive power-of-two
// constant, as the low log2(m) bits of x being zero: exactly C's remainder being
// zero, for negative x too, and nothing for the solver to divide. TMA's row rule
// (K % 8 == 0, added by copy_bulk) is such a requirement of every TMA kernel;
// as a remainder it slowed their checks by up to 90%. `operand` encodes a launch
// operand (any width). nullopt for any other condition.
std::optional<z3::expr> launchDivisibility(const ir::LaunchExpr& eq,
                                           const std::function<std::optional<z3::expr>(const ir::LaunchExpr&)>& operand);

// `formula` with every i32 division and remainder by a positive constant
// rewritten exactly for the bit-blaster: dividends that differ by a constant
// (one index at neighbouring iterations) share one floor division, so a
// window of S stages multiplies once, not S times, and divides never.
// Fresh constants stand for the quotients; a model of the result is a model
// of `formula` on the formula's own constants.
z3::expr withoutDivisions(z3::context& ctx, const z3::expr& formula);

}  // namespace argus::checker
