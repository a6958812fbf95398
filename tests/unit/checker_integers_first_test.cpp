// Cheap before exact: questions that hold are asked over the integers first
// (SolverBudget::unsatOverIntegers), whose answer covers every launch in which
// no index computation wraps around. The mbarrier check asks its stage-parity
// questions that way past the loops' first iterations (mbarrier_check.cpp,
// solve); the first iterations, where the history's absent instances hold
// wrapped terms, stay with the bit-vectors, and the planted ring bugs of
// checker_mbarrier_ring_test.cpp (several in iterations 0 to 2) are still found.
#include <gtest/gtest.h>
#include <z3++.h>

#include <string>

#include "checker/checker.h"
#include "checker/solver_budget.h"
#include "tests/unit/checker_corpus_util.h"
#include "tests/unit/checker_only.h"

namespace argus {
namespace {

TEST(SolverBudgetIntegers, AnswersForLaunchesWithoutWrapAroundOnly) {
  z3::context ctx;
  checker::Options options;
  checker::SolverBudget budget(options);
  z3::expr x = ctx.bv_const("x", 32), j = ctx.bv_const("j", 32);
  // x + 1 < x holds only where x + 1 wraps: no such launch over the integers.
  EXPECT_TRUE(budget.unsatOverIntegers(x + 1 < x, 100'000));
  // A stage parity: (j / 3) % 2 == 1 with j in 0..5 is iteration 3..5, satisfiable.
  EXPECT_FALSE(budget.unsatOverIntegers(j >= 0 && j < 6 && z3::srem(j / 3, ctx.bv_val(2, 32)) == 1, 100'000));
  // The same parity of two iterations STAGES apart always differs.
  z3::expr parity = z3::srem(j / 3, ctx.bv_val(2, 32)), later = z3::srem((j + 3) / 3, ctx.bv_val(2, 32));
  EXPECT_TRUE(budget.unsatOverIntegers(j >= 0 && j < 1000000 && parity == later, 100'000));
  // An operation the reading does not model is no proof.
  EXPECT_FALSE(budget.unsatOverIntegers((x ^ j) == 1 && x == j, 100'000));
}

// The mbarrier check's resource units on the wgmma kernels: their stage-parity questions,
// settled over the integers, took the bit-blaster 9.3 M (attention_wgmma_d64) and 3.4 M
// (gemm_wgmma) units before; with the integers first, 0.8 M and 1.9 M.
TEST(MbarrierIntegers, WgmmaPipelinesSettleTheirStageParitiesCheaply) {
  for (const auto& [path, ceiling] : {std::pair{"examples/attention_wgmma_d64.ag", 3'000'000},
                                      std::pair{"examples/gemm_wgmma.ag", 3'000'000}}) {
    SCOPED_TRACE(path);
    const std::string source = corpus::readFile(std::string(ARGUS_SOURCE_DIR) + "/" + path);
    Compilation compilation(SourceFile(path, source), CompileOptions{});
    ASSERT_FALSE(compilation.hasErrors());
    DiagnosticSink diags;
    checker::Profile profile;
    checker::Options options;
    options.profile = &profile;
    checker::check(compilation.ir(), diags, &compilation.source(), options);
    EXPECT_TRUE(testing::beyondTileOrderLimit(diags).empty()) << testing::describe(diags);
    const checker::Profile::Phase* mbarrier = nullptr;
    for (const auto& phase : profile.phases)
      if (phase.name == "mbarrier") mbarrier = &phase;
    ASSERT_NE(mbarrier, nullptr);
    EXPECT_GT(mbarrier->queries, 0);
    EXPECT_LT(mbarrier->units, static_cast<uint64_t>(ceiling));
  }
}

}  // namespace
}  // namespace argus
