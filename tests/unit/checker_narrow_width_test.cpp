// Narrowing (checker/narrow_width.h): the narrowed formula must be satisfiable
// exactly when the formula is, and a model of it must be one of the formula's
// once widened. Checked on random index arithmetic against Z3 itself.
#include <gtest/gtest.h>
#include <z3++.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "checker/narrow_width.h"

namespace {

using argus::checker::narrowedFormula;
using argus::checker::unknownsWithin;

z3::check_result solve(z3::context& ctx, const z3::expr& f, z3::model* model = nullptr) {
  z3::solver s(ctx, "QF_BV");
  s.add(f);
  z3::check_result r = s.check();
  if (r == z3::sat && model) *model = s.get_model();
  return r;
}

unsigned widthOfSomeUnknown(const z3::expr& f) {
  // The narrowed unknowns are named "<name>!narrow".
  std::vector<z3::expr> work{f};
  while (!work.empty()) {
    z3::expr e = work.back();
    work.pop_back();
    if (e.is_const() && e.is_bv() && !e.is_numeral() && e.decl().name().str().find("!narrow") != std::string::npos)
      return e.get_sort().bv_size();
    for (unsigned i = 0; i < e.num_args(); ++i) work.push_back(e.arg(i));
  }
  return 0;
}

TEST(NarrowWidth, GroupedTileOrderInASmallLaunchNarrowsAndKeepsItsAnswer) {
  // Two tiles of a grouped order with M, N <= 256 never coincide: the
  // separation question of a grouped GEMM, in miniature.
  z3::context ctx;
  z3::expr m = ctx.bv_const("M", 32), n = ctx.bv_const("N", 32);
  z3::expr t1 = ctx.bv_const("t1", 32), t2 = ctx.bv_const("t2", 32);
  auto cdiv = [&](const z3::expr& x, int d) { return (x + ctx.bv_val(d - 1, 32)) / ctx.bv_val(d, 32); };
  z3::expr tilesM = cdiv(m, 64), tilesN = cdiv(n, 64), group = ctx.bv_val(8, 32);
  auto tile = [&](const z3::expr& t) {
    z3::expr g = t / (group * tilesN);
    z3::expr rows = z3::ite(tilesM - g * group < group, tilesM - g * group, group);
    return std::make_pair(g * group + z3::srem(t, rows), z3::srem(t, group * tilesN) / rows);
  };
  auto [m1, n1] = tile(t1);
  auto [m2, n2] = tile(t2);
  z3::expr f = z3::ule(m, ctx.bv_val(256, 32)) && z3::ule(n, ctx.bv_val(256, 32)) && m >= 1 && n >= 1 &&
               t1 >= 0 && t1 < tilesM * tilesN && t2 >= 0 && t2 < tilesM * tilesN && t1 != t2 && m1 == m2 && n1 == n2;
  std::optional<z3::expr> narrowed = narrowedFormula(f);
  ASSERT_TRUE(narrowed.has_value());
  EXPECT_LT(widthOfSomeUnknown(*narrowed), 24u);
  EXPECT_EQ(solve(ctx, f), z3::unsat);
  EXPECT_EQ(solve(ctx, *narrowed), z3::unsat);
}

TEST(NarrowWidth, UnboundedUnknownOrWrappingProductIsNotNarrowed) {
  z3::context ctx;
  z3::expr x = ctx.bv_const("x", 32), y = ctx.bv_const("y", 32);
  // x has no bound: x / 3 reads all of it.
  EXPECT_FALSE(narrowedFormula(x / ctx.bv_val(3, 32) == ctx.bv_val(5, 32)).has_value());
  // x * y up to 2^40 wraps in 32 bits; the comparison reads the wrapped value.
  z3::expr big = z3::ule(x, ctx.bv_val(1 << 20, 32)) && z3::ule(y, ctx.bv_val(1 << 20, 32));
  EXPECT_FALSE(narrowedFormula(big && x * y > ctx.bv_val(7, 32)).has_value());
  // Bounded by the search for a small model, it narrows.
  z3::expr f = x / ctx.bv_val(3, 32) == ctx.bv_val(5, 32);
  EXPECT_TRUE(narrowedFormula(f && unknownsWithin(f, 4096)).has_value());
}

TEST(NarrowWidth, ContradictoryBoundsAreFalse) {
  // AG2040 asking whether block 0 writes an element its tile cannot reach.
  z3::context ctx;
  z3::expr pid = ctx.bv_const("pid", 32), row = ctx.bv_const("row", 32);
  z3::expr f = pid == ctx.bv_val(0, 32) && row >= 0 && row < ctx.bv_val(64, 32) &&
               pid * ctx.bv_val(64, 32) + row == ctx.bv_val(199, 32);
  std::optional<z3::expr> narrowed = narrowedFormula(f);
  ASSERT_TRUE(narrowed.has_value());
  EXPECT_TRUE(narrowed->is_false());
  EXPECT_EQ(solve(ctx, f), z3::unsat);
}

TEST(NarrowWidth, TagsComparedForEqualityNarrowWithTheirFunction) {
  // A tag is an uninterpreted function of the iteration: only ever compared
  // for equality, its values need no particular width.
  z3::context ctx;
  z3::sort bv32 = ctx.bv_sort(32);
  z3::func_decl tag = ctx.function("tag", bv32, bv32);
  z3::expr j = ctx.bv_const("j", 32), k = ctx.bv_const("k", 32);
  z3::expr bounds = j >= 0 && j < ctx.bv_val(4, 32) && k >= 0 && k < ctx.bv_val(4, 32);
  for (bool sameIteration : {true, false}) {
    // The same iteration's tags differ: impossible; two iterations' tags equal: possible.
    // (A stage j % 3: the divider circuit that makes narrowing worth it.)
    z3::expr stage = z3::srem(j, ctx.bv_val(3, 32));
    z3::expr f = sameIteration ? bounds && j == k && tag(stage) != tag(z3::srem(k, ctx.bv_val(3, 32)))
                               : bounds && j != k && z3::ite(j < k, tag(stage), ctx.bv_val(7, 32)) == tag(k);
    std::optional<z3::expr> narrowed = narrowedFormula(f);
    ASSERT_TRUE(narrowed.has_value());
    EXPECT_EQ(solve(ctx, f), sameIteration ? z3::unsat : z3::sat);
    EXPECT_EQ(solve(ctx, *narrowed), sameIteration ? z3::unsat : z3::sat);
  }
  // Arithmetic on a tag reads its value: no narrowed form.
  EXPECT_FALSE(narrowedFormula(bounds && tag(j / ctx.bv_val(3, 32)) + 1 > tag(k)).has_value());
  // Nor does a formula without a multiplier or divider: it is cheap as it is.
  EXPECT_FALSE(narrowedFormula(bounds && tag(j) == tag(k + 1)).has_value());
}

TEST(NarrowWidth, AnUnknownAlreadyNarrowKeepsTheBoundThatDecidedItsConditions) {
  // s is 8 bits, narrower than the width chosen: its bound s < 100 decides
  // the conditions on it, which become constants, so the bound must stay.
  z3::context ctx;
  z3::expr s = ctx.bv_const("s", 8), x = ctx.bv_const("x", 32);
  z3::expr wide = z3::sext(s, 24);
  z3::expr f = z3::ult(s, ctx.bv_val(100, 8)) && x >= 0 && x < ctx.bv_val(1000, 32) &&
               x / ctx.bv_val(3, 32) == wide + ctx.bv_val(200, 32);
  std::optional<z3::expr> narrowed = narrowedFormula(f);
  ASSERT_TRUE(narrowed.has_value());
  EXPECT_EQ(solve(ctx, f), solve(ctx, *narrowed));
  // s = 120 meets x / 3 == s + 200 (x = 960) but not s < 100: the narrowed
  // formula must still say no.
  EXPECT_EQ(solve(ctx, *narrowed && s == ctx.bv_val(120, 8)), z3::unsat);
}

// Random index arithmetic over bounded unknowns: the narrowed formula, where
// there is one, has the formula's answer, and its model, widened by sign
// extension, satisfies the formula.
TEST(NarrowWidth, RandomIndexArithmeticKeepsItsAnswerAndModels) {
  std::mt19937 rng(20261207);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  int narrowedCount = 0, satCount = 0;
  for (int round = 0; round < 120; ++round) {
    z3::context ctx;
    std::vector<z3::expr> vars;
    z3::expr f = ctx.bool_val(true);
    for (int i = 0; i < 3; ++i) {
      z3::expr v = ctx.bv_const(("v" + std::to_string(i)).c_str(), 32);
      vars.push_back(v);
      int bound = 1 + pick(300);
      f = f && (pick(2) ? z3::ule(v, ctx.bv_val(bound, 32)) : (v >= ctx.bv_val(-bound, 32) && v < ctx.bv_val(bound, 32)));
    }
    std::vector<z3::expr> terms = vars;
    for (int k = 0; k < 6; ++k) {
      z3::expr a = terms[static_cast<size_t>(pick(static_cast<int>(terms.size())))];
      z3::expr b = pick(3) == 0 ? ctx.bv_val(pick(64) - 16, 32) : terms[static_cast<size_t>(pick(static_cast<int>(terms.size())))];
      switch (pick(9)) {
        case 0: terms.push_back(a + b); break;
        case 1: terms.push_back(a - b); break;
        case 2: terms.push_back(a * b); break;
        case 3: terms.push_back(a / b); break;
        case 4: terms.push_back(z3::srem(a, b)); break;
        case 5: terms.push_back(z3::ashr(a, ctx.bv_val(pick(5), 32))); break;
        case 6: terms.push_back(a & ctx.bv_val(pick(256), 32)); break;
        case 7: terms.push_back(z3::ite(a < b, a, b)); break;
        default: terms.push_back(z3::zext(a.extract(15, 0), 16) + z3::sext(b.extract(15, 0), 16)); break;
      }
    }
    z3::expr lhs = terms.back(), rhs = terms[static_cast<size_t>(pick(static_cast<int>(terms.size())))];
    f = f && (pick(2) ? lhs == rhs + ctx.bv_val(pick(7), 32) : (lhs > rhs && z3::ult(rhs, ctx.bv_val(pick(100), 32))));
    std::optional<z3::expr> narrowed = narrowedFormula(f);
    if (!narrowed) continue;
    ++narrowedCount;
    z3::model model(ctx);
    z3::check_result wide = solve(ctx, f), narrow = solve(ctx, *narrowed, &model);
    ASSERT_EQ(wide, narrow) << f << "\nnarrowed:\n" << *narrowed;
    if (narrow != z3::sat) continue;
    ++satCount;
    z3::expr_vector from(ctx), to(ctx);
    for (const z3::expr& v : vars) {
      z3::expr n = ctx.bv_const((v.decl().name().str() + "!narrow").c_str(), widthOfSomeUnknown(*narrowed));
      z3::expr value = model.eval(n, true);
      from.push_back(v);
      to.push_back(z3::sext(value, 32 - value.get_sort().bv_size()).simplify());
    }
    EXPECT_TRUE(z3::expr(f).substitute(from, to).simplify().is_true()) << f;
  }
  // The test means something only if most formulas narrow, both ways.
  EXPECT_GT(narrowedCount, 50) << "of 120";
  EXPECT_GT(satCount, 20) << narrowedCount << " narrowed";
  std::printf("%d narrowed, %d satisfiable\n", narrowedCount, satCount);
}

}  // namespace
