// The analytical cost model (agent/cost_model.h): the orderings the agent
// relies on, and the calibration fit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "agent/cost_model.h"
#include "driver/compilation.h"
#include "ir/ir.h"
#include "tests/unit/agent_eval_test_util.h"

namespace argus::agent {
namespace {

using argus::testing::readExample;
using argus::testing::replaced;

const Sizes k4096{{"M", 4096}, {"N", 4096}, {"K", 4096}};

CostEstimate estimate(const std::string& source, const Sizes& sizes = k4096, const std::string& arch = "sm_90") {
  CompileOptions options;
  options.arch = arch;
  Compilation c(SourceFile("k.ag", source), options);
  const ir::Module& module = c.ir();
  EXPECT_FALSE(c.hasErrors());
  EXPECT_FALSE(module.functions.empty());
  if (module.functions.empty()) return {};
  return estimateCost(*module.functions.front(), sizes);
}

// gemm_tc with one synchronous stage: copy, barrier, dot, barrier.
std::string singleStageTc() {
  std::string s = readExample("gemm_tc.ag");
  s = replaced(s, "for kt in pipelined(cdiv(K, BK), stages=STAGES):", "for kt in range(cdiv(K, BK)):");
  s = replaced(s, "copy_async(a_s,", "copy(a_s,");
  s = replaced(s, "copy_async(b_s,", "copy(b_s,");
  s = replaced(s, "        acc = dot(a_s, b_s, acc)\n", "        barrier()\n        acc = dot(a_s, b_s, acc)\n        barrier()\n");
  return s;
}

TEST(AgentCostModel, CountsTheGemmExactly) {
  CostEstimate tc = estimate(readExample("gemm_tc.ag"));
  EXPECT_DOUBLE_EQ(tc.flops, 2.0 * 4096 * 4096 * 4096);
  EXPECT_EQ(tc.blocks, 32 * 32);
  EXPECT_EQ(tc.warpsPerBlock, 4);
  EXPECT_TRUE(tc.tensorCores);
  EXPECT_EQ(tc.pipelineStages, 4);
  EXPECT_EQ(tc.sharedBytesPerBlock, 4 * (128 * 32 + 32 * 128) * 2);
  // Every block reads its 128-row strip of A and 128-column strip of B once (no cache).
  EXPECT_DOUBLE_EQ(tc.globalBytes, 1024.0 * (128.0 * 4096 + 4096.0 * 128) * 2 + 4096.0 * 4096 * 2);
  EXPECT_GT(tc.registersPerThread, 128);  // a 128x128 f32 accumulator over 128 threads
  EXPECT_GE(tc.blocksPerSm, 1);
  EXPECT_GT(tc.timeMs, 0);
  nlohmann::json j = tc.toJson();
  EXPECT_EQ(j["blocks"], 1024);
  EXPECT_EQ(j["tensor_cores"], true);
}

// Loop bounds are evaluated with the generated code's integer semantics (the interpreter's
// element arithmetic), shifts included: a trip count written as (K + BK - 1) >> 5 is known.
TEST(AgentCostModel, TripCountsUseTheKernelsIntegerArithmetic) {
  std::string shifted = replaced(readExample("gemm_tc.ag"), "pipelined(cdiv(K, BK), stages=STAGES)",
                                 "pipelined((K + BK - 1) >> 5, stages=STAGES)");
  Compilation c(SourceFile("k.ag", shifted), CompileOptions{});
  ASSERT_FALSE(c.hasErrors());
  std::vector<std::optional<int64_t>> trips = loopTripCounts(*c.ir().functions.front(), k4096);
  ASSERT_FALSE(trips.empty());
  EXPECT_EQ(trips.front(), std::optional<int64_t>(128));
}

TEST(AgentCostModel, RanksTheNaiveKernelFarBelowTensorCores) {
  CostEstimate naive = estimate(argus::testing::naiveGemm());
  CostEstimate tc = estimate(readExample("gemm_tc.ag"));
  EXPECT_DOUBLE_EQ(naive.flops, tc.flops);
  EXPECT_FALSE(naive.tensorCores);
  EXPECT_GT(naive.timeMs, 10 * tc.timeMs) << naive.toJson().dump() << "\n" << tc.toJson().dump();
}

TEST(AgentCostModel, PipeliningHelps) {
  CostEstimate four = estimate(readExample("gemm_tc.ag"));
  CostEstimate two = estimate(replaced(readExample("gemm_tc.ag"), "STAGES: const = 4", "STAGES: const = 2"));
  CostEstimate one = estimate(singleStageTc());
  EXPECT_EQ(one.pipelineStages, 1);
  EXPECT_EQ(two.pipelineStages, 2);
  EXPECT_LT(four.timeMs, two.timeMs);
  EXPECT_LT(two.timeMs, one.timeMs) << two.toJson().dump() << "\n" << one.toJson().dump();
  EXPECT_DOUBLE_EQ(four.globalBytes, one.globalBytes);
}

TEST(AgentCostModel, WgmmaOutrunsMmaSyncAndPersistentBlocksCountEveryTile) {
  CostEstimate tc = estimate(readExample("gemm_tc.ag"));
  CostEstimate wgmma = estimate(readExample("gemm_wgmma.ag"), k4096, "sm_90a");
  CostEstimate nn = estimate(readExample("gemm_nn.ag"), k4096, "sm_90a");
  EXPECT_LT(wgmma.timeMs, tc.timeMs);
  EXPECT_LT(nn.timeMs, tc.timeMs);
  EXPECT_EQ(nn.pipelineStages, 4);
  EXPECT_TRUE(nn.tensorCores);
  // 132 persistent blocks: block 0 walks ceil(512 / 132) = 4 of the 512 tiles of 128 x 256,
  // so the model counts 528 tiles' work, not one tile per block.
  const double exact = 2.0 * 4096 * 4096 * 4096;
  EXPECT_NEAR(nn.flops / exact, 528.0 / 512.0, 1e-3);
  EXPECT_NEAR(wgmma.flops / exact, 1.0, 1e-3);
  EXPECT_EQ(nn.blocks, 132);
}

TEST(AgentCostModel, OccupancyLimits) {
  // One warp per block: a single warp per SM sub-scheduler cannot hide latency.
  std::string oneWarp = replaced(replaced(readExample("gemm_tc.ag"), "WM: const = 2", "WM: const = 1"), "WN: const = 2",
                                 "WN: const = 1");
  CostEstimate starved = estimate(oneWarp);
  CostEstimate tc = estimate(readExample("gemm_tc.ag"));
  EXPECT_EQ(starved.warpsPerBlock, 1);
  EXPECT_LT(starved.occupancyFactor, tc.occupancyFactor);
  // More shared memory per block than an SM has: nothing can launch.
  CostEstimate huge = estimate(replaced(replaced(readExample("gemm_tc.ag"), "STAGES: const = 4", "STAGES: const = 8"),
                                        "BK: const = 32", "BK: const = 64"));
  EXPECT_GT(huge.sharedBytesPerBlock, 227 * 1024);
  EXPECT_EQ(huge.blocksPerSm, 0);
  EXPECT_GT(huge.timeMs, 100 * tc.timeMs);
}

// A row kernel's registers are the live tiles' (ir/register_estimate.h, AG2033's count),
// not only the loaded tile's: one warp holding a row of 8192 in f32 spills (the model saw
// the bf16 load's 128 registers and ranked the one-warp softmax above every other).
TEST(AgentCostModel, ARowKernelThatSpillsRanksBelowOneThatDoesNot) {
  const std::string naive = readExample("agent/softmax_naive.ag");
  const Sizes rows{{"M", 8192}, {"N", 8192}};
  CostEstimate oneWarp = estimate(replaced(naive, "W: const = 2", "W: const = 1"), rows);
  CostEstimate fourWarps = estimate(replaced(naive, "W: const = 2", "W: const = 4"), rows);
  EXPECT_EQ(oneWarp.registersPerThread, 255);
  EXPECT_LT(fourWarps.registersPerThread, 128);
  EXPECT_GT(oneWarp.timeMs, fourWarps.timeMs);
}

TEST(AgentCostModel, ScalesWithTheProblem) {
  CostEstimate small = estimate(readExample("gemm_tc.ag"), {{"M", 2048}, {"N", 4096}, {"K", 4096}});
  CostEstimate big = estimate(readExample("gemm_tc.ag"));
  EXPECT_DOUBLE_EQ(big.flops, 2 * small.flops);
  EXPECT_GT(big.timeMs, small.timeMs);
}

TEST(AgentCostModel, CalibrationRecoversAKnownScale) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> modelled(0.01, 10), noise(-0.1, 0.1);
  std::vector<std::pair<double, double>> pairs;
  for (int i = 0; i < 200; ++i) {
    double m = modelled(rng);
    pairs.push_back({m, 3.0 * m * std::exp(noise(rng))});
  }
  EXPECT_NEAR(fitCalibrationScale(pairs), 3.0, 0.03);
  EXPECT_DOUBLE_EQ(fitCalibrationScale({{2.0, 1.0}}), 0.5);
  EXPECT_DOUBLE_EQ(fitCalibrationScale({}), 1.0);
  EXPECT_DOUBLE_EQ(fitCalibrationScale({{0.0, 1.0}, {1.0, -1.0}, {NAN, 2.0}}), 1.0);
  // The scale multiplies the modelled time.
  Compilation c(SourceFile("k.ag", readExample("gemm_tc.ag")), CompileOptions{});
  const ir::Function& fn = *c.ir().functions.front();
  EXPECT_NEAR(estimateCost(fn, k4096, 3.0).timeMs, 3.0 * estimateCost(fn, k4096).timeMs, 1e-12);
}

}  // namespace
}  // namespace argus::agent
