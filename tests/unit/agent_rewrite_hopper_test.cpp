// The Hopper rewrites (agent/rewrite_hopper.cpp): the chain to the shape of
// examples/gemm_tc.ag continues with tma_wgmma and persistent_tiles to the
// shape of examples/gemm_nn.ag; every step compiles clean for sm_90a to PTX
// that uses TMA and wgmma, and computes what the naive kernel computes.
#include <gtest/gtest.h>

#include "agent/rewrite.h"
#include "agent_rewrite_support.h"

using argus::agent::analyzeKernel;
using namespace argus::testing::agent_rewrite;

namespace {

std::string hopperSource() { return apply("tma_wgmma", runChain(), json::object()).source; }

void expectSameAsNaive(const std::string& source, const std::string& what,
                       std::vector<std::pair<std::string, std::string>> defines = {}) {
  auto naive = compileClean(naiveSource(), "gemm_naive");
  auto tuned = compileClean(source, what, std::move(defines), "sm_90a");
  std::mt19937 rng(11);
  // Ragged sizes, two and more tiles per axis, K past the stages (and not a
  // multiple of BK; a multiple of 8 for TMA's 16-byte rows).
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{136, 264, 328}, {130, 520, 72}}) {
    HostTensor a = randomBf16({m, k}, rng), b = randomBf16({k, n}, rng);
    EXPECT_LT(relativeDifference(runGemm(*naive, a, b, m, n), runGemm(*tuned, a, b, m, n)), 1e-2)
        << what << " at " << m << "x" << n << "x" << k;
  }
}

}  // namespace

TEST(AgentRewriteHopper, TmaWgmmaGivesTheGemmNnShape) {
  std::string source = hopperSource();
  for (const char* piece : {"warps=BM // 16", "acc = zeros(f32, (BM, BN))\n",
                            "for kt in pipelined(cdiv(K, BK), stages=STAGES, specialize=True):",
                            "copy_bulk(a_s, A.tile((BM, BK))[pm, kt])", "copy_bulk(b_s, B.tile((BK, BN))[kt, pn])",
                            "a_s = shared(bf16, (BM, BK), swizzle=(3, 3, 3))",
                            "b_s = shared(bf16, (BK, BN), swizzle=(3, 3, 3))", "BM: const = 128", "BN: const = 256",
                            "BK: const = 64", "STAGES: const = 4", "# arch: sm_90a"})
    EXPECT_TRUE(contains(source, piece)) << piece << "\n" << source;
  // The warp grid and the swizzle parameters only the old layout used are gone.
  for (const char* gone : {"WM", "WN", "mma(", "copy_async"}) EXPECT_FALSE(contains(source, gone)) << gone << "\n" << source;
  auto c = compileClean(source, "tma_wgmma", {}, "sm_90a");
  EXPECT_TRUE(contains(c->ptx(), "wgmma.mma_async")) << "the dot is not on wgmma";
  EXPECT_TRUE(contains(c->ptx(), "cp.async.bulk.tensor")) << "the copies are not TMA copies";
  argus::agent::KernelFeatures f = analyzeKernel(source);
  EXPECT_TRUE(f.usesCopyBulk && f.specialized && f.grid1d && !f.persistent && !f.usesMmaLayout);
  expectSameAsNaive(source, "tma_wgmma");
}

TEST(AgentRewriteHopper, PersistentTilesWalksEveryTile) {
  RewriteResult r = apply("persistent_tiles", hopperSource(), json{{"SMS", 132}});
  for (const char* piece : {"@kernel(grid=(SMS,), warps=BM // 16)",
                            "for tile in range(program_id(0), cdiv(M, BM) * cdiv(N, BN), num_programs(0)):",
                            "        pid = tile\n", "            copy_bulk(a_s, A.tile((BM, BK))[pm, kt])",
                            "        C.tile((BM, BN))[pm, pn] = cast(acc, bf16)", "SMS: const = 132"})
    EXPECT_TRUE(contains(r.source, piece)) << piece << "\n" << r.source;
  auto c = compileClean(r.source, "persistent", {}, "sm_90a");
  EXPECT_TRUE(contains(c->ptx(), "wgmma.mma_async"));
  EXPECT_TRUE(analyzeKernel(r.source).persistent);
  expectSameAsNaive(r.source, "persistent");
  // Three blocks for up to 12 tiles: each block computes several, its mbarrier phases
  // carrying on from one tile to the next.
  expectSameAsNaive(r.source, "persistent on 3 blocks", {{"SMS", "3"}});
  expectWhyNot("persistent_tiles", r.source, json::object(), "already");
}

TEST(AgentRewriteHopper, PersistentTilesWalksATwoDimensionalGridRowByRow) {
  // The chain before rasterize_grid: a 2-D grid of (row tiles, column tiles).
  std::string twoD = naiveSource();
  for (const ChainStep& step : kChain)
    if (std::string(step.id) != "rasterize_grid") twoD = apply(step.id, twoD, json::parse(step.args)).source;
  twoD = apply("tma_wgmma", twoD, json::object()).source;
  RewriteResult r = apply("persistent_tiles", twoD, json::object());
  for (const char* piece : {"for tile in range(program_id(0), cdiv(M, BM) * cdiv(N, BN), num_programs(0)):",
                            "tile_m = tile // cdiv(N, BN)", "tile_n = tile % cdiv(N, BN)",
                            "copy_bulk(a_s, A.tile((BM, BK))[tile_m, kt])", "C.tile((BM, BN))[tile_m, tile_n]"})
    EXPECT_TRUE(contains(r.source, piece)) << piece << "\n" << r.source;
  expectSameAsNaive(r.source, "persistent 2-D on 2 blocks", {{"SMS", "2"}});
}

TEST(AgentRewriteHopper, TheLinearLayerChainReadsWTransposedAllTheWay) {
  // C = A @ W^T with W stored (N, K): the naive kernel multiplies W's column made a row;
  // staging keeps W as stored and reads it transposed, and the chain carries trans_b on.
  const std::string naive = argus::testing::readExample("agent/gemm_naive_nt.ag");
  RewriteResult staged = apply("stage_operands_in_shared", naive, json::object());
  for (const char* piece : {"b_s = shared(bf16, (BN, BK))", "copy(b_s, W.tile((BN, BK))[program_id(1), kt])",
                            "acc = dot(a_s, b_s, acc, trans_b=True)"})
    EXPECT_TRUE(contains(staged.source, piece)) << piece << "\n" << staged.source;
  std::string source = staged.source;
  for (const ChainStep& step : kChain)
    if (std::string(step.id) != "stage_operands_in_shared") source = apply(step.id, source, json::parse(step.args)).source;
  compileClean(source, "linear layer, mma.sync");
  source = apply("tma_wgmma", source, json::object()).source;
  source = apply("persistent_tiles", source, json::object()).source;
  EXPECT_TRUE(contains(source, "b_s = shared(bf16, (BN, BK), swizzle=(3, 3, 3))")) << source;
  auto c = compileClean(source, "linear layer, Hopper", {{"SMS", "3"}}, "sm_90a");
  EXPECT_TRUE(contains(c->ptx(), "wgmma.mma_async"));
  auto reference = compileClean(naive, "gemm_naive_nt");
  std::mt19937 rng(3);
  const int64_t m = 136, n = 264, k = 328;
  HostTensor a = randomBf16({m, k}, rng), w = randomBf16({n, k}, rng);
  EXPECT_LT(relativeDifference(runGemm(*reference, a, w, m, n), runGemm(*c, a, w, m, n)), 1e-2);
}

TEST(AgentRewriteHopper, OtherShapesAndArguments) {
  // 128 x 128 tiles with 6 stages; 64-row tiles on one consumer warpgroup.
  RewriteResult narrow = apply("tma_wgmma", runChain(), json{{"BM", 128}, {"BN", 128}, {"STAGES", 6}});
  EXPECT_TRUE(contains(narrow.source, "STAGES: const = 6")) << narrow.source;
  compileClean(narrow.source, "128x128", {}, "sm_90a");
  RewriteResult small = apply("tma_wgmma", runChain(), json{{"BM", 64}, {"BN", 128}});
  expectSameAsNaive(small.source, "64x128");
  // Stages that do not fit 227 KiB are lowered: 128 x 256 tiles take 48 KiB a stage.
  RewriteResult deep = apply("tma_wgmma", runChain(), json{{"STAGES", 8}});
  EXPECT_TRUE(contains(deep.source, "STAGES: const = 4")) << deep.description;
  // B stored (N, K): the trans_b form of examples/gemm_wgmma.ag.
  std::string nt = argus::testing::readExample("gemm_tc.ag");
  nt.replace(nt.find("B: Tensor[bf16, (K, N)]"), 23, "B: Tensor[bf16, (N, K)]");
  nt.replace(nt.find("b_s = shared(bf16, (BK, BN)"), 27, "b_s = shared(bf16, (BN, BK)");
  nt.replace(nt.find("B.tile((BK, BN))[kt, pn]"), 24, "B.tile((BN, BK))[pn, kt]");
  nt.replace(nt.find("dot(a_s, b_s, acc)"), 18, "dot(a_s, b_s, acc, trans_b=True)");
  compileClean(nt, "gemm_tc with B stored (N, K)");
  RewriteResult t = apply("tma_wgmma", nt, json::object());
  EXPECT_TRUE(contains(t.source, "b_s = shared(bf16, (BN, BK), swizzle=(3, 3, 3))")) << t.source;
  EXPECT_FALSE(contains(t.source, "SWB")) << t.source;
  auto c = compileClean(t.source, "trans_b", {}, "sm_90a");
  EXPECT_TRUE(contains(c->ptx(), "wgmma.mma_async"));
}

TEST(AgentRewriteHopper, WhyNot) {
  expectWhyNot("tma_wgmma", naiveSource(), json::object(), "no pipelined() loop");
  expectWhyNot("tma_wgmma", hopperSource(), json::object(), "already copies with TMA");
  expectWhyNot("tma_wgmma", runChain(), json{{"BM", 192}}, "BM must be 64, 128 or 256");
  expectWhyNot("tma_wgmma", runChain(), json{{"BN", 96}}, "power of two");
  expectWhyNot("tma_wgmma", runChain(), json{{"BN", 32}}, "multiple of 64");
  expectWhyNot("tma_wgmma", runChain(), json{{"BM", "big"}}, "bad arguments");
  expectWhyNot("tma_wgmma", argus::testing::readExample("gemm_pipelined.ag"), json::object(), "bf16 or f16");
  // Not yet specialized TMA: persistent_tiles says what comes first.
  expectWhyNot("persistent_tiles", runChain(), json::object(), "tma_wgmma first");
  expectWhyNot("persistent_tiles", naiveSource(), json::object(), "no pipelined() loop");
  expectWhyNot("persistent_tiles", hopperSource(), json{{"SMS", 0}}, "1 to 1024");
}
