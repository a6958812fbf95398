// What the producer warpgroup of a persistent kernel computes in the loop over tiles,
// before the pipelined loop: each tile's indices. An `if` that only computes scalars
// (a snake order, say) runs there too; a statement it cannot run (a scalar reduced
// from a tile) keeps the loop from being specialized, with warning AG4045, instead of
// reaching code generation as an internal error (as both once did).
#include <gtest/gtest.h>

#include <random>

#include "hopper_test_util.h"
#include "test_sources.h"

using namespace argus::testing::hopper;  // NOLINT: the shared helpers of the Hopper tests

namespace {

// gemm_persistent.ag with its tile index replaced by `index` (lines inserted after `tile`).
std::string withTileIndex(const std::string& index) {
  std::string text = argus::testing::readExample("gemm_persistent.ag");
  const std::string loop = "num_programs(0)):\n";
  size_t at = text.find(loop);
  EXPECT_NE(at, std::string::npos);
  text.insert(at + loop.size(), index);
  return text;
}

// Even rounds of the tile loop walk the blocks up, odd ones down (only whole rounds).
const char* kSnake =
    "        rnd = tile // num_programs(0)\n"
    "        if rnd % 2 == 1 and (rnd + 1) * num_programs(0) <= tiles_m * tiles_n:\n"
    "            tile = rnd * num_programs(0) + num_programs(0) - 1 - program_id(0)\n";

bool hasCode(argus::Compilation& c, const char* code) {
  for (const argus::Diagnostic& d : c.diagnostics())
    if (std::string(d.code()) == code) return true;
  return false;
}

TEST(PersistentProducer, AScalarIfInTheTileLoopRunsOnTheProducerToo) {
  auto c = compile("snake.ag", withTileIndex(kSnake));
  const std::string& ptx = c->ptx();
  ASSERT_EQ(errorsOf(*c), "");
  EXPECT_FALSE(hasCode(*c, "AG4045"));  // still specialized
  EXPECT_NE(ptx.find("setmaxnreg"), std::string::npos);
  std::string report = ptxasReport(ptx);
  if (report.empty()) GTEST_SKIP() << "no ptxas at " << kPtxas;
  EXPECT_EQ(report.find("error"), std::string::npos) << report;
}

TEST(PersistentProducer, TheSnakeOrderComputesWhatThePlainOrderDoes) {
  std::mt19937 rng(31);
  const int64_t m = 300, n = 600, k = 136;  // 3 x 3 tiles over 2 blocks: a partial last round
  HostTensor a = randomBf16({m, k}, rng), w = randomBf16({n, k}, rng);
  auto withSms = [](std::string text) {
    text.replace(text.find("SMS: const = 132"), 16, "SMS: const = 2");
    return text;
  };
  std::vector<double> want = runLinear("plain.ag", withSms(argus::testing::readExample("gemm_persistent.ag")), a, w, m, n);
  ASSERT_EQ(want.size(), static_cast<size_t>(m * n));
  EXPECT_EQ(runLinear("snake.ag", withSms(withTileIndex(kSnake)), a, w, m, n), want);
}

TEST(PersistentProducer, AStatementTheProducerCannotRunUnspecializesTheLoop) {
  // A scalar reduced from a tile, in the loop over tiles: AG4045, a working kernel.
  std::string text = withTileIndex("        bias = cast(sum(load(A.tile((BM, BK))[0, 0])), f32)\n");
  const std::string init = "layout=wgmma(warpgroups=2))";
  text.replace(text.find(init), init.size(), init + " + bias");
  auto c = compile("bias.ag", text);
  const std::string& ptx = c->ptx();
  EXPECT_EQ(errorsOf(*c), "");
  EXPECT_TRUE(hasCode(*c, "AG4045"));
  EXPECT_FALSE(ptx.empty());
}

}  // namespace
