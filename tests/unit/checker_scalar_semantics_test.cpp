// The checker's i32 division encodings (checker/scalar_semantics.h) against
// C's own / and %: the power-of-two shortcut of truncatingDivide and the
// grouped floor divisions of withoutDivisions must be exact for every sign,
// at the wrap-around edges, and for dividends that differ by a constant (the
// case the grouping derives from one division). Each case fixes the dividend,
// asks the solver for the quotient and remainder, and compares with C.
#include <gtest/gtest.h>
#include <z3++.h>

#include <climits>
#include <cstdint>
#include <vector>

#include "checker/scalar_semantics.h"

namespace argus::checker {
namespace {

const std::vector<int32_t> kDividends = {INT32_MIN, INT32_MIN + 1, INT32_MIN + 5, -1000001, -9, -8, -7, -6, -5,
                                         -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1000003,
                                         INT32_MAX - 5, INT32_MAX - 1, INT32_MAX};

int32_t wrappingAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

// The solver's values of `terms` once `x` is fixed to `value`: one solver per
// formula, one push per dividend.
std::vector<int64_t> solved(z3::solver& solver, const z3::expr& x, int32_t value, const std::vector<z3::expr>& terms) {
  solver.push();
  solver.add(x == solver.ctx().bv_val(value, 32));
  EXPECT_EQ(solver.check(), z3::sat) << value;
  z3::model m = solver.get_model();
  solver.pop();
  std::vector<int64_t> out;
  for (const z3::expr& e : terms)
    out.push_back(static_cast<int32_t>(static_cast<uint32_t>(m.eval(e, true).get_numeral_uint64())));
  return out;
}

TEST(CheckerScalarSemantics, PowerOfTwoDivisionTruncatesLikeC) {
  z3::context ctx;
  z3::expr x = ctx.bv_const("x", 32);
  for (int32_t divisor : {2, 4, 8, 64, 1 << 20}) {
    z3::expr q = ctx.bv_const("q", 32), r = ctx.bv_const("r", 32);
    z3::expr formula = q == truncatingDivide(x, ctx.bv_val(divisor, 32), false) &&
                       r == truncatingDivide(x, ctx.bv_val(divisor, 32), true);
    z3::solver solver(ctx, "QF_BV");
    solver.add(formula);
    for (int32_t t : kDividends) {
      std::vector<int64_t> v = solved(solver, x, t, {q, r});
      EXPECT_EQ(v[0], t / divisor) << t << " / " << divisor;
      EXPECT_EQ(v[1], t % divisor) << t << " % " << divisor;
    }
  }
}

TEST(CheckerScalarSemantics, GroupedDivisionsByConstantsMatchC) {
  z3::context ctx;
  z3::expr x = ctx.bv_const("x", 32);
  for (int32_t divisor : {3, 5, 6, 7, 1000}) {
    z3::expr c = ctx.bv_val(divisor, 32);
    for (int32_t delta : {-7, -3, -1, 1, 2, 5, 13, INT32_MAX, INT32_MIN}) {
      z3::expr shifted = x + ctx.bv_val(delta, 32);
      z3::expr q0 = ctx.bv_const("q0", 32), r0 = ctx.bv_const("r0", 32);
      z3::expr q1 = ctx.bv_const("q1", 32), r1 = ctx.bv_const("r1", 32);
      // Both dividends in one formula: the second is encoded from the first's division.
      z3::expr formula = withoutDivisions(
          ctx, q0 == z3::to_expr(ctx, Z3_mk_bvsdiv(ctx, x, c)) && r0 == z3::srem(x, c) &&
                   q1 == z3::to_expr(ctx, Z3_mk_bvsdiv(ctx, shifted, c)) && r1 == z3::srem(shifted, c));
      z3::solver solver(ctx, "QF_BV");
      solver.add(formula);
      for (int32_t t : kDividends) {
        std::vector<int64_t> v = solved(solver, x, t, {q0, r0, q1, r1});
        EXPECT_EQ(v[0], t / divisor) << t << " / " << divisor;
        EXPECT_EQ(v[1], t % divisor) << t << " % " << divisor;
        int32_t u = wrappingAdd(t, delta);
        EXPECT_EQ(v[2], u / divisor) << t << " + " << delta << " = " << u << " / " << divisor;
        EXPECT_EQ(v[3], u % divisor) << t << " + " << delta << " = " << u << " % " << divisor;
      }
    }
  }
}

// The rewrite is exact, not merely satisfiable: no other quotient is possible.
TEST(CheckerScalarSemantics, GroupedDivisionLeavesNoOtherQuotient) {
  z3::context ctx;
  z3::expr x = ctx.bv_const("x", 32);
  z3::expr c = ctx.bv_val(3, 32);
  z3::expr q = ctx.bv_const("q", 32);
  // x's division comes first, so x - 1's quotient is the one derived from it.
  z3::expr formula = withoutDivisions(ctx, z3::srem(x, c) == z3::srem(x, c) &&
                                               q == z3::to_expr(ctx, Z3_mk_bvsdiv(ctx, x - 1, c)));
  for (int32_t t : {INT32_MIN, -4, -1, 0, 2, 7, INT32_MAX}) {
    z3::solver solver(ctx, "QF_BV");
    int32_t expected = wrappingAdd(t, -1) / 3;
    solver.add(formula && x == ctx.bv_val(t, 32) && q != ctx.bv_val(expected, 32));
    EXPECT_EQ(solver.check(), z3::unsat) << t;
  }
}

}  // namespace
}  // namespace argus::checker
