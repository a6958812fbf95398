// The mutation operators of the checker's yardstick (bench/checker_mutants):
// each makes the edits it promises, only in kernel bodies, never in comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/mutants/evaluate.h"
#include "bench/mutants/mutate.h"
#include "tests/unit/test_sources.h"

namespace argus::mutants {
namespace {

// A double-buffered GEMM under a comment that names what the operators look for.
std::string gemmKernel() { return testing::readTestKernel("mutants/double_buffered_gemm.ag"); }

std::vector<Mutant> byOp(const std::string& op) {
  std::vector<Mutant> out;
  for (Mutant& m : mutantsOf("k.ag", gemmKernel()))
    if (m.op == op) out.push_back(m);
  return out;
}

bool hasLine(const Mutant& m, const std::string& line) { return m.text.find(line) != std::string::npos; }

TEST(Mutants, EveryOperatorButTheSwapOfNestedLoopVariablesFindsSomethingInAGemm) {
  for (const std::string& op : operatorNames()) {
    if (op == "loop-variable-swap") continue;
    EXPECT_FALSE(byOp(op).empty()) << op;
  }
}

TEST(Mutants, NestedLoopVariablesSwapOnlyWhereBothAreInScope) {
  const std::string nested = testing::readTestKernel("mutants/nested_loop_variables.ag");
  std::vector<std::string> swaps;
  for (const Mutant& m : mutantsOf("n.ag", nested))
    if (m.op == "loop-variable-swap") swaps.push_back(m.description);
  std::sort(swaps.begin(), swaps.end());
  EXPECT_EQ(swaps, (std::vector<std::string>{"kk -> kt", "kt -> kk"}));
}

TEST(Mutants, CommentsSignatureAndDecoratorAreNeverMutated) {
  const std::string text = gemmKernel();
  std::string head = text.substr(0, text.find("    a_s ="));
  for (const Mutant& m : mutantsOf("k.ag", text))
    EXPECT_EQ(m.text.substr(0, head.size()), head) << m.op << ": " << m.description;
}

TEST(Mutants, WaitCountsAndStageIndicesGoOffByOne) {
  auto mutants = byOp("int-off-by-one");
  EXPECT_TRUE(std::any_of(mutants.begin(), mutants.end(), [](const Mutant& m) { return hasLine(m, "wait_group(1)"); }));
  EXPECT_TRUE(std::any_of(mutants.begin(), mutants.end(), [](const Mutant& m) { return hasLine(m, "s = kt % 3"); }));
  // 0 never goes to -1.
  EXPECT_FALSE(std::any_of(mutants.begin(), mutants.end(), [](const Mutant& m) { return hasLine(m, "-1"); }));
}

TEST(Mutants, DroppedBarrierBecomesPassAtTheSameIndentation) {
  auto mutants = byOp("drop-sync");
  ASSERT_FALSE(mutants.empty());
  EXPECT_TRUE(std::any_of(mutants.begin(), mutants.end(), [](const Mutant& m) {
    return hasLine(m, "        wait_group(0)\n        pass\n        acc = dot");
  }));
}

TEST(Mutants, MovedBarrierSwapsWithItsNeighbour) {
  auto mutants = byOp("move-sync");
  EXPECT_TRUE(std::any_of(mutants.begin(), mutants.end(), [](const Mutant& m) {
    return hasLine(m, "        acc = dot(a_s[s], b_s[s], acc)\n        barrier()\n        barrier()");
  }));
}

TEST(Mutants, DotOperandsSwapAndSwizzleDropsOnOneSide) {
  auto dots = byOp("swap-dot-operands");
  ASSERT_EQ(dots.size(), 1u);
  EXPECT_TRUE(hasLine(dots[0], "dot(b_s[s], a_s[s], acc)"));
  auto swizzles = byOp("drop-swizzle");
  ASSERT_EQ(swizzles.size(), 1u);
  EXPECT_TRUE(hasLine(swizzles[0], "a_s = shared(f32, (2, BM, BK))\n"));
}

TEST(Mutants, TileCoordinatesTranspose) {
  auto mutants = byOp("transpose-subscript");
  EXPECT_TRUE(std::any_of(mutants.begin(), mutants.end(), [](const Mutant& m) {
    return hasLine(m, "C.tile((BM, BN))[program_id(1), program_id(0)] = acc");
  }));
}

TEST(Mutants, LoopBoundsAndLoopVariablesShift) {
  auto bounds = byOp("loop-bound");
  EXPECT_TRUE(std::any_of(bounds.begin(), bounds.end(),
                          [](const Mutant& m) { return hasLine(m, "range((cdiv(K, BK)) - 1)"); }));
  auto shifted = byOp("loop-variable-off-by-one");
  EXPECT_TRUE(std::any_of(shifted.begin(), shifted.end(), [](const Mutant& m) { return hasLine(m, "s = (kt + 1) % 2"); }));
  EXPECT_TRUE(std::any_of(shifted.begin(), shifted.end(),
                          [](const Mutant& m) { return hasLine(m, "A.tile((BM, BK))[program_id(0), (kt + 1)]"); }));
  auto rounded = byOp("cdiv-rounds-down");
  EXPECT_TRUE(std::any_of(rounded.begin(), rounded.end(), [](const Mutant& m) { return hasLine(m, "range((K) // (BK))"); }));
  // The loop header's own variable is not a use.
  EXPECT_FALSE(std::any_of(shifted.begin(), shifted.end(), [](const Mutant& m) { return hasLine(m, "for (kt + 1)"); }));
}

TEST(Mutants, NoMutantRepeatsOrEqualsTheOriginal) {
  const std::string original = gemmKernel();
  auto all = mutantsOf("k.ag", original);
  std::vector<std::string> texts;
  for (const Mutant& m : all) {
    EXPECT_NE(m.text, original);
    texts.push_back(m.text);
  }
  std::sort(texts.begin(), texts.end());
  EXPECT_EQ(std::adjacent_find(texts.begin(), texts.end()), texts.end());
}

}  // namespace
}  // namespace argus::mutants

namespace argus::mutants {
namespace {

// An example, read and prepared as the mutation report prepares it.
struct PreparedExample {
  std::string text;
  KernelUnderTest kernel;
};
PreparedExample prepareExample(const std::string& name, const EvalOptions& options) {
  const std::string path = std::string(ARGUS_SOURCE_DIR) + "/examples/" + name;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return {text.str(), prepare(path, text.str(), options)};
}

// Two mutants of moe_gemm_persistent.ag (X's K slice taken by the tile index,
// or its subscripts transposed) were flagged with witnesses of 2^31 rows: the
// small-launch tiers answered "unknown" under assumptions (TagFlow::preferSmall).
// Both witnesses are small launches now, and the first replays in the
// interpreter (the second does not yet: see bench/results/checker_mutants.md).
TEST(MutantsOracle, PersistentMoeWitnessesAreSmallLaunches) {
  EvalOptions options;
  options.sizeSets = 0;
  PreparedExample moe = prepareExample("moe_gemm_persistent.ag", options);
  const KernelUnderTest& k = moe.kernel;
  ASSERT_TRUE(k.skipReason.empty()) << k.skipReason;
  const std::string from = "copy_bulk(x_s, X.tile((BM, BK))[tm, kt])";
  for (const std::string to : {"copy_bulk(x_s, X.tile((BM, BK))[tm, tile])", "copy_bulk(x_s, X.tile((BM, BK))[kt, tm])"}) {
    std::string mutant = moe.text;
    size_t at = mutant.find(from);
    ASSERT_NE(at, std::string::npos);
    mutant.replace(at, from.size(), to);
    Verdict v = evaluate(k, mutant, options);
    ASSERT_FALSE(v.errorCodes.empty()) << to;
    EXPECT_EQ(v.errorCodes.front(), "AG2035") << to << ": " << v.firstError;
    // "E=193, K=232, N=123, NB=256, T=134": every size at most 4096 (the largest tier).
    std::stringstream sizes(v.witnessSizes);
    std::string item;
    ASSERT_FALSE(v.witnessSizes.empty()) << to;
    while (std::getline(sizes, item, ',')) {
      size_t eq = item.find('=');
      ASSERT_NE(eq, std::string::npos) << v.witnessSizes;
      EXPECT_LE(std::stoll(item.substr(eq + 1)), 4096) << to << ": " << v.witnessSizes;
    }
    if (to.find("tile])") != std::string::npos) {
      EXPECT_TRUE(v.witnessReplayed) << v.firstError << " at " << v.witnessSizes;
    }
  }
}

TEST(MutantsOracle, RandomSizesKeepTheKernelsRequirements) {
  // gemm_nn.ag copies A and B with TMA, which requires K % 8 == 0 and N % 8 == 0. The
  // random size sets are moved to sizes that keep both, so the oracle still runs the
  // kernel at ragged sizes beside its base ones (before: nearly every draw failed a
  // requirement and only the base sizes were left).
  EvalOptions options;
  options.sizeSets = 2;
  const KernelUnderTest k = prepareExample("gemm_nn.ag", options).kernel;
  ASSERT_TRUE(k.skipReason.empty()) << k.skipReason;
  ASSERT_EQ(k.sizeSets.size(), 3u);
  for (const Sizes& s : k.sizeSets) {
    EXPECT_EQ(s.at("K") % 8, 0);
    EXPECT_EQ(s.at("N") % 8, 0);
  }
}

}  // namespace
}  // namespace argus::mutants
