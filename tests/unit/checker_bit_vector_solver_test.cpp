// bitVectorSolver (checker/solver_budget.h) keeps the guarantees of every
// checker query: the resource limit stops a hard query with "unknown" (never a
// hang), a model is a model of the formula, and push/pop keep working.
#include <gtest/gtest.h>
#include <z3++.h>

#include "checker/solver_budget.h"

namespace argus::checker {
namespace {

TEST(BitVectorSolver, ResourceLimitStopsAHardQuery) {
  z3::context ctx;
  z3::solver solver = bitVectorSolver(ctx);
  z3::params params(ctx);
  params.set("rlimit", 2000u);
  solver.set(params);
  // Factoring a 64-bit semiprime: far beyond 2000 resource units.
  z3::expr x = ctx.bv_const("x", 64), y = ctx.bv_const("y", 64);
  solver.add(x * y == ctx.bv_val(static_cast<uint64_t>(4294967291ull * 4294967279ull), 64));
  solver.add(z3::ugt(x, ctx.bv_val(1, 64)) && z3::ugt(y, ctx.bv_val(1, 64)));
  solver.add(z3::ult(x, ctx.bv_val(uint64_t{1} << 32, 64)) && z3::ult(y, ctx.bv_val(uint64_t{1} << 32, 64)));
  EXPECT_EQ(solver.check(), z3::unknown);
}

TEST(BitVectorSolver, ModelsAndScopes) {
  z3::context ctx;
  z3::solver solver = bitVectorSolver(ctx);
  z3::expr n = ctx.bv_const("n", 32);
  solver.add(n * 4 == 28);
  solver.push();
  solver.add(n != 7);
  ASSERT_EQ(solver.check(), z3::sat);  // 32-bit wrap admits n = 7 + k * 2^30
  z3::expr value = solver.get_model().eval(n, true);
  EXPECT_NE(value.get_numeral_uint64(), 7u);
  EXPECT_EQ((value * 4).simplify().get_numeral_uint64(), 28u);
  solver.pop();
  solver.add(z3::ult(n, ctx.bv_val(100, 32)));
  ASSERT_EQ(solver.check(), z3::sat);
  EXPECT_EQ(solver.get_model().eval(n, true).get_numeral_uint64(), 7u);
}

}  // namespace
}  // namespace argus::checker
