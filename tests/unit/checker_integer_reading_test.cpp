// Reading bit-vector formulas over the integers (checker/integer_reading.h).
// An unsatisfiable reading is a proof for every model in which no term wraps
// around, so the oracle is the bit-vector formula itself with "no term wraps"
// written out in bit-vectors (Z3's overflow predicates, operands read as
// unsigned non-negative, extractions that keep the value): whenever that has
// a model the reading must have one too, and without products of two
// unknowns and divisions by one (the only things the reading abstracts) the
// answers are equal.
#include <gtest/gtest.h>
#include <z3++.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "checker/formula_walk.h"
#include "checker/integer_reading.h"

namespace {

using argus::checker::postorder;
using argus::checker::readAsIntegers;

z3::check_result solve(z3::solver solver, const z3::expr& f) {
  z3::params params(f.ctx());
  params.set("rlimit", 3'000'000u);  // a formula the solver cannot settle is skipped, and counted
  solver.set(params);
  solver.add(f);
  return solver.check();
}

z3::check_result solveBits(z3::context& ctx, const z3::expr& f) { return solve(z3::solver(ctx, "QF_BV"), f); }
z3::check_result solveIntegers(z3::context& ctx, const z3::expr& f) { return solve(z3::solver(ctx), f); }

// "No term of `f` wraps around", in bit-vectors: the integer reading's domain.
z3::expr noTermWraps(const z3::expr& f) {
  z3::context& ctx = f.ctx();
  z3::expr all = ctx.bool_val(true);
  auto nonNegative = [&](const z3::expr& x) {
    return x.is_numeral() ? ctx.bool_val(true) : x >= ctx.bv_val(0, x.get_sort().bv_size());
  };
  for (const z3::expr& e : postorder(f)) {
    if (!e.is_app() || e.num_args() == 0) continue;
    const z3::expr a = e.arg(0);
    switch (e.decl().decl_kind()) {
      case Z3_OP_BADD: all = all && z3::bvadd_no_overflow(a, e.arg(1), true) && z3::bvadd_no_underflow(a, e.arg(1)); break;
      case Z3_OP_BSUB: all = all && z3::bvsub_no_overflow(a, e.arg(1)) && z3::bvsub_no_underflow(a, e.arg(1), true); break;
      case Z3_OP_BMUL: all = all && z3::bvmul_no_overflow(a, e.arg(1), true) && z3::bvmul_no_underflow(a, e.arg(1)); break;
      case Z3_OP_BNEG: all = all && z3::bvneg_no_overflow(a); break;
      case Z3_OP_BSDIV:
      case Z3_OP_BSREM: all = all && z3::bvsdiv_no_overflow(a, e.arg(1)); break;
      case Z3_OP_BUDIV:
      case Z3_OP_BUREM:
      case Z3_OP_ULT:
      case Z3_OP_ULEQ: all = all && nonNegative(a) && nonNegative(e.arg(1)); break;
      case Z3_OP_ZERO_EXT: all = all && nonNegative(a); break;
      case Z3_OP_EXTRACT: all = all && z3::sext(e, a.get_sort().bv_size() - e.get_sort().bv_size()) == a; break;
      default: break;
    }
  }
  return all;
}

TEST(IntegerReading, GroupedTileOrderIsInjectiveOverTheIntegers) {
  // Triton's grouped order: two different blocks below the grid never get
  // the same (pid_m, pid_n). Over i32 bit-vectors with unbounded sizes the
  // bit-blaster gives up; over the integers it is a short proof.
  z3::context ctx;
  auto bv = [&](int64_t v) { return ctx.bv_val(v, 32); };
  z3::expr m = ctx.bv_const("M", 32), n = ctx.bv_const("N", 32);
  z3::expr tilesM = (m + bv(127)) / bv(128), tilesN = (n + bv(127)) / bv(128);
  auto tile = [&](const z3::expr& pid) {
    z3::expr group = bv(8) * tilesN;
    z3::expr first = pid / group * bv(8);
    z3::expr rows = z3::ite(tilesM - first < bv(8), tilesM - first, bv(8));
    return std::make_pair(first + z3::srem(z3::srem(pid, group), rows), z3::srem(pid, group) / rows);
  };
  z3::expr p = ctx.bv_const("p", 32), q = ctx.bv_const("q", 32);
  auto [pm, pn] = tile(p);
  auto [qm, qn] = tile(q);
  z3::expr grid = tilesM * tilesN;
  z3::expr f = m >= 0 && n >= 0 && p >= 0 && q >= 0 && p < grid && q < grid && p != q && pm == qm && pn == qn &&
               pm * bv(128) < m;
  std::optional<z3::expr> overIntegers = readAsIntegers(f);
  ASSERT_TRUE(overIntegers);
  z3::solver solver(ctx);
  z3::params params(ctx);
  params.set("arith.solver", 2u);
  solver.set(params);
  solver.add(*overIntegers);
  EXPECT_EQ(solver.check(), z3::unsat);
}

TEST(IntegerReading, UnsignedConstantsKeepTheirUnsignedValue) {
  // j <u 0xffffffff holds for j = 0; read as j < -1 it would not (a real
  // conflict the separation check once proved absent this way).
  z3::context ctx;
  z3::expr j = ctx.bv_const("j", 32);
  z3::expr f = z3::ult(j, ctx.bv_val(-1, 32)) && j == ctx.bv_val(0, 32);
  std::optional<z3::expr> overIntegers = readAsIntegers(f);
  ASSERT_TRUE(overIntegers);
  EXPECT_EQ(solveIntegers(ctx, *overIntegers), z3::sat);
}

TEST(IntegerReading, SixtyFourBitUnknownsKeepTheirWholeRange) {
  // The bounds of a 64-bit unknown are -2^63 and 2^63 - 1 (computed at first
  // by negating an int64_t -2^63: undefined behaviour that happened to give
  // the right bound).
  z3::context ctx;
  z3::expr x = ctx.bv_const("x", 64);
  std::optional<z3::expr> lowest = readAsIntegers(x == ctx.bv_val(INT64_MIN, 64));
  std::optional<z3::expr> highest = readAsIntegers(x == ctx.bv_val(INT64_MAX, 64) && x > ctx.bv_val(0, 64));
  ASSERT_TRUE(lowest && highest);
  EXPECT_EQ(solveIntegers(ctx, *lowest), z3::sat);
  EXPECT_EQ(solveIntegers(ctx, *highest), z3::sat);
}

TEST(IntegerReading, ShiftsByAVariableAreNotRead) {
  z3::context ctx;
  z3::expr x = ctx.bv_const("x", 32), s = ctx.bv_const("s", 32);
  EXPECT_FALSE(readAsIntegers(z3::shl(x, s) == ctx.bv_val(4, 32)));
}

// Random index arithmetic over three 10-bit unknowns: bounded like threads
// (v <u 2^k, read as digits) or signed ranges, seven operations of the kinds
// the checker's encoders build, and a comparison at the end.
struct RandomFormula {
  std::vector<z3::expr> unknowns, terms;
  z3::expr formula;
  bool abstracted = false;  // a product of unknowns or a division by one: read as a function
};

RandomFormula randomFormula(z3::context& ctx, std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const unsigned w = 10;
  auto bv = [&](int64_t v) { return ctx.bv_val(v, w); };
  RandomFormula r{{}, {}, ctx.bool_val(true)};
  for (int i = 0; i < 3; ++i) {
    z3::expr v = ctx.bv_const(("v" + std::to_string(i)).c_str(), w);
    r.unknowns.push_back(v);
    r.terms.push_back(v);
    if (pick(3) == 0) r.formula = r.formula && z3::ult(v, bv(int64_t{1} << (2 + pick(5))));
    else if (pick(2)) r.formula = r.formula && v >= bv(-(1 + pick(300))) && v <= bv(1 + pick(300));
  }
  for (int k = 0; k < 7; ++k) {
    z3::expr a = r.terms[static_cast<size_t>(pick(static_cast<int>(r.terms.size())))];
    const bool constant = pick(2) == 0;
    z3::expr b = constant ? bv(pick(40) - 8) : r.terms[static_cast<size_t>(pick(static_cast<int>(r.terms.size())))];
    const int op = pick(12);
    r.abstracted = r.abstracted || (!constant && (op == 2 || op == 3 || op == 4 || op == 10));
    switch (op) {
      case 0: r.terms.push_back(a + b); break;
      case 1: r.terms.push_back(a - b); break;
      case 2: r.terms.push_back(a * b); break;
      case 3: r.terms.push_back(a / b); break;
      case 4: r.terms.push_back(z3::srem(a, b)); break;
      case 5: r.terms.push_back(z3::udiv(a, bv(int64_t{1} << pick(4)))); break;
      case 6: r.terms.push_back(z3::urem(a, bv(int64_t{1} << pick(4)))); break;
      case 7: r.terms.push_back(z3::ashr(a, bv(pick(5)))); break;
      case 8: r.terms.push_back(a & bv((int64_t{1} << pick(6)) - 1)); break;
      case 9: r.terms.push_back(z3::ite(a < b, a, b)); break;
      case 10: r.terms.push_back(z3::udiv(a, b)); break;
      default: r.terms.push_back(z3::sext(z3::zext(a.extract(w - 5, 0), 2), 2) - b); break;
    }
  }
  z3::expr lhs = r.terms.back(), rhs = r.terms[static_cast<size_t>(pick(static_cast<int>(r.terms.size())))];
  switch (pick(4)) {
    case 0: r.formula = r.formula && lhs == rhs + bv(pick(5)); break;
    case 1: r.formula = r.formula && lhs > rhs && z3::ult(rhs, bv(pick(100))); break;
    case 2: r.formula = r.formula && lhs != rhs && z3::ule(r.terms[1], lhs); break;
    default: r.formula = r.formula && z3::ult(lhs, bv(-1 - pick(4))) && lhs != rhs; break;  // a sign bit set
  }
  return r;
}

TEST(IntegerReading, RandomIndexArithmeticAgreesWithBitVectorsWithoutWrapping) {
  std::mt19937 rng(20261207);
  int read = 0, decided = 0, satisfiable = 0, exact = 0;
  z3::context ctx;  // one for every round: creating one costs more than a round
  for (int round = 0; round < 200; ++round) {
    RandomFormula random = randomFormula(ctx, rng);
    const z3::expr& f = random.formula;
    std::optional<z3::expr> overIntegers = readAsIntegers(f);
    if (!overIntegers) continue;
    ++read;
    const z3::check_result bits = solveBits(ctx, f && noTermWraps(f));
    const z3::check_result integers = solveIntegers(ctx, *overIntegers);
    if (bits == z3::unknown || integers == z3::unknown) continue;
    ++decided;
    if (bits == z3::sat) {
      ++satisfiable;
      ASSERT_EQ(integers, z3::sat) << "a model without wrap-around, but the reading is unsatisfiable:\n" << f;
    }
    if (!random.abstracted) {
      ASSERT_EQ(bits, integers) << f << "\nread as\n" << *overIntegers;
      ++exact;
    }
  }
  // The test means something only if most formulas are read, both ways.
  EXPECT_GT(read, 170) << "of 200";
  EXPECT_GT(decided, 160) << read << " read";
  EXPECT_GT(satisfiable, 50) << read << " read";
  EXPECT_GT(exact, 50) << read << " read";
  std::printf("%d read, %d decided, %d satisfiable without wrap-around, %d compared exactly\n", read, decided,
              satisfiable, exact);
}

// Each random term at a random point: where nothing wraps, the reading gives
// the term the bit-vectors' value and, unless it abstracts, no other.
TEST(IntegerReading, RandomTermsTakeTheirBitVectorValue) {
  std::mt19937 rng(7);
  int compared = 0, pinned = 0;
  z3::context ctx;
  for (int round = 0; round < 30; ++round) {
    RandomFormula random = randomFormula(ctx, rng);
    for (int point = 0; point < 3; ++point) {
      z3::expr at = ctx.bool_val(true);
      for (const z3::expr& v : random.unknowns) at = at && v == ctx.bv_val(static_cast<int>(rng() % 600) - 300, 10);
      for (size_t t = 3; t < random.terms.size(); ++t) {
        const z3::expr& term = random.terms[t];
        z3::solver valueOf(ctx, "QF_BV");
        valueOf.add(at && noTermWraps(term == term));
        if (valueOf.check() != z3::sat) continue;  // it wraps here
        const z3::expr value = valueOf.get_model().eval(term, true);
        std::optional<z3::expr> same = readAsIntegers(at && term == value);
        std::optional<z3::expr> other = readAsIntegers(at && term == value + ctx.bv_val(1, 10));
        ASSERT_TRUE(same && other) << term;
        ++compared;
        ASSERT_EQ(solveIntegers(ctx, *same), z3::sat) << term << " = " << value << " where " << at;
        if (random.abstracted) continue;
        ++pinned;
        ASSERT_EQ(solveIntegers(ctx, *other), z3::unsat) << term << " = " << value << " where " << at;
      }
    }
  }
  EXPECT_GT(compared, 150);
  EXPECT_GT(pinned, 50);
  std::printf("%d terms compared, %d pinned to one value\n", compared, pinned);
}

}  // namespace
