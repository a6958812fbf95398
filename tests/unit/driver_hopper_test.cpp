// The Hopper path end to end (frontend, pipelining policy, checker, codegen):
// what the PTX of the sm_90a examples holds, that ptxas takes it without
// serializing the wgmma pipeline or spilling, that sm_90 gets a clear error,
// that generic writes to a wgmma operand get a proxy fence, and that the
// warp-specialized and persistent forms compute what the plain one does on the
// interpreter. (Speed is measured on the H200: bench/results/bench_gpu.md.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include "driver/compilation.h"
#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "hopper_test_util.h"
#include "test_sources.h"

using namespace argus::testing::hopper;  // NOLINT: the shared helpers of the Hopper tests
using argus::interp::ArgValue;
using argus::interp::HostTensor;

namespace {

TEST(HopperPtx, GemmWgmmaUsesTmaMbarriersAndWgmma) {
  auto c = compile("gemm_wgmma.ag", argus::testing::readExample("gemm_wgmma.ag"));
  const std::string& ptx = c->ptx();
  ASSERT_EQ(errorsOf(*c), "");
  for (const char* want : {".target sm_90a", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
                           "wgmma.wait_group.sync.aligned 1;", "wgmma.wait_group.sync.aligned 0;",
                           "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                           "mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.arrive.expect_tx.shared::cta.b64",
                           ".param .align 64 .b8 gemm_wgmma_param_6[128]", ".maxntid 384, 1, 1",
                           ".extern .shared .align 1024", "stmatrix.sync.aligned.m8n8.x4.shared.b16",
                           // registers move from the producer warpgroup to the block's two
                           "setmaxnreg.dec.sync.aligned.u32 40;", "setmaxnreg.inc.sync.aligned.u32 232;"})
    EXPECT_NE(ptx.find(want), std::string::npos) << want;
  // The producer's free barriers order the stages' reads before their refills, and the
  // epilogue's staging is per warp: the consumers never wait for each other.
  EXPECT_EQ(ptx.find("bar.sync 1,"), std::string::npos);
  // Only TMA writes the operands: no proxy fence is needed in the main loop. The one
  // proxy fence is the epilogue's, before TMA reads a slice the warp wrote.
  int fences = 0;
  for (size_t at = ptx.find("fence.proxy.async"); at != std::string::npos; at = ptx.find("fence.proxy.async", at + 1)) {
    ++fences;
    EXPECT_EQ(ptx.compare(at, 30, "fence.proxy.async.shared::cta;"), 0);
    EXPECT_GT(at, ptx.rfind("wgmma.mma_async"));
  }
  EXPECT_EQ(fences, 4);  // one per 16 x 64 slice of a warp's 16 x 256 part
}

TEST(HopperPtx, F16GemmUsesF16Wgmma) {
  std::string text = argus::testing::readExample("gemm_wgmma.ag");
  for (size_t at = text.find("bf16"); at != std::string::npos; at = text.find("bf16", at)) text.replace(at, 4, "f16");
  auto c = compile("gemm_f16.ag", text);
  const std::string& ptx = c->ptx();
  ASSERT_EQ(errorsOf(*c), "");
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"), std::string::npos);
  std::string report = ptxasReport(ptx);
  if (!report.empty()) {
    EXPECT_EQ(report.find("error"), std::string::npos) << report;
  }
}

TEST(HopperPtx, PtxasKeepsTheWgmmaPipelineAndSpillsNothing) {
  for (const char* name : {"gemm_wgmma.ag", "gemm_persistent.ag", "moe_gemm.ag", "attention_wgmma.ag"}) {
    auto c = compile(name, argus::testing::readExample(name));
    std::string report = ptxasReport(c->ptx());
    if (report.empty()) GTEST_SKIP() << "ptxas is not installed";
    EXPECT_EQ(report.find("C7514"), std::string::npos) << name << ": " << report;  // wgmma serialized
    EXPECT_EQ(report.find("C7515"), std::string::npos) << name << ": " << report;
    EXPECT_NE(report.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << name << ": " << report;
    EXPECT_EQ(report.find("error"), std::string::npos) << name << ": " << report;
  }
}

TEST(HopperPtx, Sm90SaysWhichArchitectureItNeeds) {
  auto c = compile("gemm_wgmma.ag", argus::testing::readExample("gemm_wgmma.ag"), "sm_90");
  c->ptx();
  bool found = false;
  for (const argus::Diagnostic& d : c->diagnostics()) {
    if (std::string(d.code()) != "AG5020") continue;
    found = true;
    EXPECT_NE(d.message.find("--arch=sm_90a"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("targets sm_90"), std::string::npos) << d.message;
  }
  EXPECT_TRUE(found) << errorsOf(*c);
}

// wgmma operands written by ordinary stores (copy), not TMA.
std::string genericOperands() { return argus::testing::readTestKernel("driver_hopper/wgmma_operands_by_copy.ag"); }

TEST(HopperPtx, GenericWritesToWgmmaOperandsGetAProxyFence) {
  auto c = compile("linear_sync.ag", genericOperands());
  const std::string& ptx = c->ptx();
  ASSERT_EQ(errorsOf(*c), "");
  size_t fence = ptx.find("fence.proxy.async.shared::cta;");
  ASSERT_NE(fence, std::string::npos);
  size_t barrierAfter = ptx.find("bar.sync", fence);
  size_t wgmma = ptx.find("wgmma.mma_async");
  EXPECT_LT(fence, barrierAfter);
  EXPECT_LT(barrierAfter, wgmma);
  std::string report = ptxasReport(ptx);
  if (!report.empty()) {
    EXPECT_EQ(report.find("error"), std::string::npos) << report;
  }
}

// Two independent wgmma products: each waits at the first use of its own result, the
// first leaving the second's group in flight (wait_group 1) so that the work on s runs
// while the tensor cores compute t.
TEST(HopperPtx, AWgmmaResultIsWaitedForAtItsFirstUse) {
  auto c = compile("two_products.ag", argus::testing::readTestKernel("driver_hopper/two_wgmma_products.ag"));
  ASSERT_EQ(errorsOf(*c), "");
  const std::string& ptx = c->ptx();
  size_t second = ptx.rfind("wgmma.commit_group");
  size_t waitFirst = ptx.find("wgmma.wait_group.sync.aligned 1;");
  size_t exp = ptx.find("ex2.approx");
  size_t waitBoth = ptx.find("wgmma.wait_group.sync.aligned 0;");
  ASSERT_NE(waitFirst, std::string::npos) << ptx;
  ASSERT_NE(waitBoth, std::string::npos) << ptx;
  EXPECT_LT(second, waitFirst);  // both products issued before any wait
  EXPECT_LT(waitFirst, exp);     // s's work after its own wait...
  EXPECT_LT(exp, waitBoth);      // ...and before t's
  std::string report = ptxasReport(ptx);
  if (report.empty()) GTEST_SKIP() << "no ptxas at " << kPtxas;
  EXPECT_EQ(report.find("C7519"), std::string::npos) << report;
  EXPECT_EQ(report.find("C7514"), std::string::npos) << report;
}

TEST(HopperInterpreter, SpecializedPersistentAndPlainAgree) {
  std::mt19937 rng(11);
  // Ragged in every dimension, K a multiple of 8 for TMA; 5 K tiles on 4 stages, so stages are
  // refilled (the interpreter once took the specialized refill for a race).
  const int64_t m = 200, n = 300, k = 264;
  HostTensor a = randomBf16({m, k}, rng), w = randomBf16({n, k}, rng);
  std::string specialized = argus::testing::readExample("gemm_wgmma.ag");
  std::string plain = specialized;
  plain.replace(plain.find(", specialize=True"), 17, "");
  std::string persistent = argus::testing::readExample("gemm_persistent.ag");
  persistent.replace(persistent.find("SMS: const = 132"), 16, "SMS: const = 3");  // several tiles per block
  std::vector<double> want = runLinear("plain.ag", plain, a, w, m, n);
  ASSERT_EQ(want.size(), static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; i += 37)
    for (int64_t j = 0; j < n; j += 29) {
      double ref = 0;
      for (int64_t kk = 0; kk < k; ++kk) ref += a.get(static_cast<size_t>(i * k + kk)) * w.get(static_cast<size_t>(j * k + kk));
      EXPECT_NEAR(want[static_cast<size_t>(i * n + j)], ref, 0.02 * std::fabs(ref) + 0.05) << i << ", " << j;
    }
  EXPECT_EQ(runLinear("specialized.ag", specialized, a, w, m, n), want);
  EXPECT_EQ(runLinear("persistent.ag", persistent, a, w, m, n), want);
  EXPECT_EQ(runLinear("linear_sync.ag", genericOperands(), a, w, m, n), want);
}

// The attention kernels on the interpreter: `hopper` (TMA panels, wgmma scores, p @ v by
// wgmma from registers) against the mma.sync FlashAttention kernel built for head
// dimension d, on the same inputs, causal and not.
void expectAttentionMatchesTheMmaSyncKernel(const char* hopper, int64_t d) {
  std::mt19937 rng(12);
  const int64_t bh = 1, s = 150;  // S ragged against both kernels' tiles
  HostTensor q = randomBf16({bh, s, d}, rng), k = randomBf16({bh, s, d}, rng), v = randomBf16({bh, s, d}, rng);
  auto setConst = [](std::string& text, const std::string& name, int64_t value) {
    size_t at = text.find(name + ": const = ");
    ASSERT_NE(at, std::string::npos) << name;
    size_t end = text.find_first_of(",)", at);
    text.replace(at, end - at, name + ": const = " + std::to_string(value));
  };
  for (int causal : {0, 1}) {
    std::vector<std::vector<double>> outs;
    for (const char* name : {hopper, "attention.ag"}) {
      std::string text = argus::testing::readExample(name);
      setConst(text, "CAUSAL", causal);
      if (std::string(name) == "attention.ag" && d == 64) {
        setConst(text, "D", 64);
        setConst(text, "SWZ", 3);
      }
      auto c = compile(name, text);
      ASSERT_EQ(errorsOf(*c), "") << name;
      ASSERT_EQ(c->ir().functions.size(), 1u);
      HostTensor qc = q, kc = k, vc = v, o = HostTensor::zeros(argus::ir::DType::BF16, {bh, s, d});
      std::vector<ArgValue> args = {&qc, &kc, &vc, &o, 0.1275174319};
      auto error = argus::interp::run(*c->ir().functions[0], args);
      ASSERT_FALSE(error) << name << ": " << error->message;
      outs.emplace_back();
      for (size_t i = 0; i < o.size(); ++i) outs.back().push_back(o.get(i));
    }
    size_t bad = 0;
    for (size_t i = 0; i < outs[0].size(); ++i)
      if (std::fabs(outs[0][i] - outs[1][i]) > 0.02 * std::fabs(outs[1][i]) + 4e-3 && ++bad <= 5)
        ADD_FAILURE() << "causal " << causal << " element " << i << ": " << outs[0][i] << " vs " << outs[1][i];
    EXPECT_EQ(bad, 0u) << "causal " << causal;
  }
}

TEST(HopperInterpreter, AttentionMatchesTheMmaSyncKernel) { expectAttentionMatchesTheMmaSyncKernel("attention_wgmma.ag", 128); }

TEST(HopperInterpreter, AttentionD64MatchesTheMmaSyncKernel) {
  expectAttentionMatchesTheMmaSyncKernel("attention_wgmma_d64.ag", 64);
}

// P @ V with p in registers and V stored (K, N): wgmma with A from registers and an
// N-major B (imm-trans-b = 1), every A fragment packed before the fence (no C7519),
// and sm_90 keeps mma.sync for it.
TEST(HopperPtx, AttentionRunsPTimesVOnWgmmaFromRegisters) {
  auto c = compile("attention_wgmma.ag", argus::testing::readExample("attention_wgmma.ag"));
  ASSERT_EQ(errorsOf(*c), "");
  const std::string& ptx = c->ptx();
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"), std::string::npos);
  EXPECT_NE(ptx.find("p, 1, 1, 1;"), std::string::npos);  // imm-trans-b: V is N-major
  EXPECT_NE(ptx.find("cvt.rn.bf16x2.f32"), std::string::npos);
  EXPECT_EQ(ptx.find("mma.sync.aligned.m16n8k16"), std::string::npos);
  // specialize=True with a prologue that loads q: a producer warpgroup (384 threads), the
  // block's own barrier after the copy of q, and the init barrier with the producer.
  EXPECT_NE(ptx.find(".maxntid 384, 1, 1"), std::string::npos);
  EXPECT_NE(ptx.find("bar.sync 1, 256;"), std::string::npos);
  EXPECT_NE(ptx.find("bar.sync \t0;"), std::string::npos);
  // The scores' two K panels retire in one wait, the two value panels in another.
  size_t waits = 0;
  for (size_t at = ptx.find("wgmma.wait_group.sync.aligned 0;"); at != std::string::npos;
       at = ptx.find("wgmma.wait_group.sync.aligned 0;", at + 1))
    ++waits;
  EXPECT_EQ(waits, 2u);
  // e = exp2(...) feeds only cast(e, bf16) and the row sum: ex2.approx.ftz alone, its scale
  // folded into an fma; only alpha, an f32 exp2 of a row statistic (2 per thread), keeps
  // the range reduction. p is converted once, in pairs (cvt.rn.bf16x2), and the row sum
  // adds e itself: no conversion back (446 -> 550 TFLOP/s on the H200 with the ftz and
  // the pairs; 560 -> 580 summing e instead of widening p's halves back).
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("ex2.approx.ftz.f32"), 64u);
  EXPECT_EQ(count("ex2.approx.f32"), 2u);
  EXPECT_EQ(count("cvt.rn.bf16.f32"), 0u);
  EXPECT_EQ(count("cvt.f32.bf16"), 0u);  // each half widened by one shift or mask of its pair
  EXPECT_EQ(count("cvt.rni.f32.f32"), 2u);
  EXPECT_GE(count("fma.rn.f32"), 64u);
  std::string report = ptxasReport(ptx);
  if (report.empty()) GTEST_SKIP() << "no ptxas at " << kPtxas;
  EXPECT_EQ(report.find("C7519"), std::string::npos) << report;
  EXPECT_NE(report.find("0 bytes spill stores"), std::string::npos) << report;
}

}  // namespace
