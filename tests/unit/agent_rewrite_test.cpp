// The deterministic rewrites (agent/rewrite.h): each on the naive GEMM and on
// the shipped examples, the whyNot answers, and the full chain from
// examples/agent/gemm_naive.ag to a gemm_tc.ag-like kernel that compiles to
// PTX with a clean checker and computes what the naive kernel computes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "agent/rewrite.h"
#include "agent/rewrite_internal.h"
#include "driver/compilation.h"
#include "frontend/format.h"
#include "ir/ir.h"
#include "checker_only.h"
#include "runtime/interp/interpreter.h"
#include "test_sources.h"
#include "agent_rewrite_support.h"

using argus::agent::analyzeKernel;
using argus::agent::rewrite;
using argus::agent::RewriteResult;
using argus::interp::ArgValue;
using argus::interp::HostTensor;
using nlohmann::json;

using namespace argus::testing::agent_rewrite;

TEST(AgentRewrite, NaiveGemmCompilesClean) {
  auto c = compileClean(naiveSource(), "gemm_naive");
  argus::agent::KernelFeatures f = analyzeKernel(naiveSource());
  EXPECT_TRUE(f.parsed);
  EXPECT_TRUE(f.registerOperands);
  EXPECT_FALSE(f.hasDot);
  EXPECT_FALSE(f.usesShared);
  EXPECT_TRUE(f.usesTensorCoreDtype);
  EXPECT_EQ(f.operandDtype, "bf16");
  EXPECT_EQ(f.warps, 4);
  EXPECT_EQ(f.constParams.at("BK"), 16);
}

TEST(AgentRewrite, FullChainReachesTensorCoreShapeAndComputesTheSame) {
  std::vector<std::string> steps;
  std::string final = runChain(&steps);
  ASSERT_EQ(steps.size(), std::size(kChain));
  for (size_t i = 0; i < steps.size(); ++i) compileClean(steps[i], std::string("after ") + kChain[i].id);
  // The shape of examples/gemm_tc.ag.
  for (const char* piece : {"warps=WM * WN", "layout=mma(warps=(WM, WN))", "for kt in pipelined(cdiv(K, BK), stages=STAGES):",
                            "copy_async(a_s, A.tile((BM, BK))[pm, kt])",
                            "copy_async(b_s, B.tile((BK, BN))[kt, pn])", "acc = dot(a_s, b_s, acc)",
                            "grid=(cdiv(M, BM) * cdiv(N, BN),)", "GROUP_M: const = 8",
                            "a_s = shared(bf16, (BM, BK), swizzle=(2, 3, 3))",
                            "b_s = shared(bf16, (BK, BN), swizzle=(3, 3, 4))", "BM: const = 128", "BN: const = 128",
                            "BK: const = 32", "STAGES: const = 4", "WM: const = 2", "WN: const = 2"})
    EXPECT_TRUE(contains(final, piece)) << piece << "\n" << final;
  EXPECT_FALSE(contains(final, "barrier()"));
  EXPECT_FALSE(contains(final, "load("));
  // The result is already in canonical format.
  EXPECT_EQ(argus::formatSource(argus::SourceFile("k.ag", final)).value_or(""), final);

  argus::agent::KernelFeatures f = analyzeKernel(final);
  EXPECT_TRUE(f.parsed && f.hasDot && f.usesShared && f.usesCopyAsync && f.usesPipelined && f.usesMmaLayout &&
              f.usesSwizzle && f.usesTensorCoreDtype);
  EXPECT_EQ(f.warps, 4);

  // Same numbers as the naive kernel at ragged sizes (different summation
  // order, so equal up to bf16 rounding of the output).
  auto naive = compileClean(naiveSource(), "gemm_naive");
  auto tuned = compileClean(final, "chain");
  std::mt19937 rng(5);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{100, 70, 40}, {33, 130, 17}}) {
    HostTensor a = randomBf16({m, k}, rng), b = randomBf16({k, n}, rng);
    HostTensor want = runGemm(*naive, a, b, m, n), got = runGemm(*tuned, a, b, m, n);
    double num = 0, den = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      double exact = 0;
      int64_t r = static_cast<int64_t>(i) / n, col = static_cast<int64_t>(i) % n;
      for (int64_t kk = 0; kk < k; ++kk) exact += a.get(static_cast<size_t>(r * k + kk)) * b.get(static_cast<size_t>(kk * n + col));
      EXPECT_NEAR(want.get(i), exact, 0.02 * (1 + std::abs(exact))) << "naive at " << i;
      num += (got.get(i) - want.get(i)) * (got.get(i) - want.get(i));
      den += want.get(i) * want.get(i);
    }
    EXPECT_LT(std::sqrt(num / den), 1e-2) << m << "x" << n << "x" << k;
  }
}

TEST(AgentRewrite, FullChainGivesTheSamePtxAsGemmTc) {
  // The chain's kernel, renamed, compiles to exactly the PTX of examples/gemm_tc.ag.
  std::string final = runChain();
  ASSERT_FALSE(final.empty());
  final.replace(final.find("def gemm_naive("), 15, "def gemm_tc(");
  auto chain = compileClean(final, "chain");
  auto reference = compileClean(argus::testing::readExample("gemm_tc.ag"), "gemm_tc");
  EXPECT_FALSE(chain->ptx().empty());
  EXPECT_EQ(chain->ptx(), reference->ptx());
}

TEST(AgentRewrite, StagingMatchesGemmExampleShape) {
  RewriteResult r = apply("stage_operands_in_shared", naiveSource(), json::object());
  for (const char* piece : {"a_s = shared(bf16, (BM, BK))", "b_s = shared(bf16, (BK, BN))",
                            "copy(a_s, A.tile((BM, BK))[program_id(0), kt])",
                            "copy(b_s, B.tile((BK, BN))[kt, program_id(1)])", "acc = dot(a_s, b_s, acc)"})
    EXPECT_TRUE(contains(r.source, piece)) << piece << "\n" << r.source;
  // Names already taken are not reused.
  std::string taken = naiveSource();
  taken.replace(taken.find("acc = zeros"), 0, "a_s = 1\n    ");
  RewriteResult r2 = apply("stage_operands_in_shared", taken, json::object());
  EXPECT_TRUE(contains(r2.source, "a_s2 = shared(bf16, (BM, BK))")) << r2.source;
}

TEST(AgentRewrite, RewritesOnTheShippedExamples) {
  // gemm.ag (f32, staged, synchronous): pipelining applies, tensor cores do not.
  std::string gemm = argus::testing::readExample("gemm.ag");
  expectWhyNot("stage_operands_in_shared", gemm, json::object(), "already");
  expectWhyNot("tensor_core_mma", gemm, json::object(), "f32");
  expectWhyNot("set_stages", gemm, json{{"stages", 3}}, "no pipelined() loop");
  RewriteResult p = apply("async_pipeline", gemm, json{{"stages", 3}});
  EXPECT_TRUE(contains(p.source, "pipelined(cdiv(K, BK), stages=STAGES)"));
  compileClean(p.source, "gemm.ag pipelined");
  compileClean(apply("set_params", gemm, json{{"BM", 32}, {"BK", 32}}).source, "gemm.ag params");

  // gemm_pipelined.ag: already pipelined; set_stages changes the parameter.
  std::string pipelined = argus::testing::readExample("gemm_pipelined.ag");
  expectWhyNot("async_pipeline", pipelined, json{{"stages", 4}}, "already pipelined");
  RewriteResult s = apply("set_stages", pipelined, json{{"stages", 5}});
  EXPECT_EQ(s.description, "STAGES 3 -> 5");
  compileClean(s.source, "gemm_pipelined.ag stages");

  // gemm_tc.ag: the end of the chain; only tuning applies.
  std::string tc = argus::testing::readExample("gemm_tc.ag");
  expectWhyNot("tensor_core_mma", tc, json::object(), "already has a layout");
  expectWhyNot("swizzle_shared", tc, "auto", "already");
  expectWhyNot("async_pipeline", tc, json::object(), "already pipelined");
  compileClean(apply("set_params", tc, json{{"BN", 256}, {"WN", 4}}).source, "gemm_tc.ag 128x256");
  compileClean(apply("set_stages", tc, json{{"stages", 3}}).source, "gemm_tc.ag stages");
  RewriteResult sw = apply("swizzle_shared", tc, json{{"A", {3, 3, 3}}});
  EXPECT_TRUE(contains(sw.source, "a_s = shared(bf16, (BM, BK), swizzle=(3, 3, 3))")) << sw.source;

  // gemm_async.ag manages its own copies: pipelining would need a rewrite of its waits.
  expectWhyNot("async_pipeline", argus::testing::readExample("gemm_async.ag"), json::object(), "asynchronous copies");

  // The pipelined loop of a literal stage count.
  std::string literal = tc;
  literal.replace(literal.find("stages=STAGES"), 13, "stages=3");
  RewriteResult lit = apply("set_stages", literal, json{{"stages", 2}});
  EXPECT_TRUE(contains(lit.source, "stages=2)"));
}

TEST(AgentRewrite, TensorCoresOnStagedBf16) {
  std::string staged = apply("stage_operands_in_shared", naiveSource(), json::object()).source;
  RewriteResult r = apply("tensor_core_mma", staged, json{{"WM", 4}, {"WN", 1}});
  EXPECT_TRUE(contains(r.source, "@kernel(grid=(cdiv(M, BM), cdiv(N, BN)), warps=WM * WN)")) << r.source;
  EXPECT_TRUE(contains(r.source, "WM: const = 4, WN: const = 1"));
  compileClean(r.source, "mma 4x1");
  // 64 rows cannot be split over 8 warps of 16-row atoms.
  expectWhyNot("tensor_core_mma", staged, json{{"WM", 8}, {"WN", 1}}, "multiple of 128");
  expectWhyNot("tensor_core_mma", staged, json{{"WM", 3}, {"WN", 1}}, "power of two");
  expectWhyNot("tensor_core_mma", naiveSource(), json::object(), "no dot()");
  expectWhyNot("tensor_core_mma", staged, json{{"WM", "two"}}, "bad arguments");
  // No warps= in the decorator: it is added.
  std::string noWarps = staged;
  noWarps.erase(noWarps.find(", warps=4"), 9);
  RewriteResult added = apply("tensor_core_mma", noWarps, json::object());
  EXPECT_TRUE(contains(added.source, "@kernel(grid=(cdiv(M, BM), cdiv(N, BN)), warps=WM * WN)")) << added.source;
}

TEST(AgentRewrite, SetParamsVariantsCompile) {
  std::string final = runChain();
  ASSERT_FALSE(final.empty());
  for (const json& variant : {json{{"BM", 64}, {"BN", 64}}, json{{"BK", 64}}, json{{"BM", 256}, {"WM", 4}},
                              json{{"BN", 256}, {"WN", 4}}, json{{"STAGES", 3}}}) {
    RewriteResult r = apply("set_params", final, variant);
    compileClean(r.source, "set_params " + variant.dump());
  }
  RewriteResult r = apply("set_params", naiveSource(), json{{"BM", 128}, {"BN", 32}});
  EXPECT_EQ(r.description, "BM 64 -> 128, BN 64 -> 32");
  compileClean(r.source, "naive 128x32");
}

TEST(AgentRewrite, WhyNot) {
  const std::string naive = naiveSource();
  expectWhyNot("set_params", naive, json{{"BX", 64}}, "no const parameter 'BX' (it has BM, BN, BK)");
  expectWhyNot("set_params", naive, json{{"BM", "big"}}, "must be an integer");
  expectWhyNot("set_params", naive, json{{"BM", 64}}, "BM is already 64");
  expectWhyNot("set_params", naive, json::array(), "object of NAME");
  expectWhyNot("set_stages", naive, json{{"stages", 1}}, "2 to 8");
  expectWhyNot("async_pipeline", naive, json{{"stages", 9}}, "2 to 8");
  expectWhyNot("async_pipeline", naive, json{{"stages", 3}}, "copies no global tile");
  expectWhyNot("swizzle_shared", naive, "auto", "no dot()");
  expectWhyNot("no_such_rewrite", naive, json::object(), "unknown rewrite");
  expectWhyNot("stage_operands_in_shared", "def broken(:\n", json::object(), "");
  expectWhyNot("set_params", "@kernel(grid=(1,), warps=1)\ndef k(x: Tensor[f32, (4,)]):\n    y = (\n",
               json{{"BM", 1}}, "syntax errors");
  expectWhyNot("stage_operands_in_shared", argus::testing::readExample("softmax.ag"), json::object(), "no loop loads");
  // Different dtypes cannot meet in one dot.
  std::string mixed = naive;
  mixed.replace(mixed.find("B: Tensor[bf16"), 14, "B: Tensor[f16");
  expectWhyNot("stage_operands_in_shared", mixed, json::object(), "bf16 and f16");
  // A pipelined buffer may not be used after the loop.
  std::string outside = argus::testing::readExample("gemm.ag");
  outside.replace(outside.find("    C.tile"), 0, "    copy(a_s, A.tile((BM, BK))[0, 0])\n");
  expectWhyNot("async_pipeline", outside, json::object(), "also used outside the loop");
  expectWhyNot("swizzle_shared", runChain(), json{{"A", {3, 3}}}, "[B, M, S]");
  expectWhyNot("swizzle_shared", runChain(), json{{"A", {3, 3, 2}}}, "B <= S");
}

TEST(AgentRewrite, AutoSwizzleKeepsLdmatrixConflictFree) {
  using argus::agent::detail::autoSwizzle;
  // The choices of examples/gemm_tc.ag.
  EXPECT_EQ(autoSwizzle({128, 32}, "bf16"), (std::array<int, 3>{2, 3, 3}));
  EXPECT_EQ(autoSwizzle({32, 128}, "bf16"), (std::array<int, 3>{3, 3, 4}));
  EXPECT_EQ(autoSwizzle({64, 8}, "bf16"), std::nullopt);  // one chunk per row
  // ldmatrix reads 8 consecutive rows of one 16-byte chunk per phase: the 8
  // swizzled chunks must fall into 8 different 16-byte bank groups.
  for (int64_t rowLen : {16, 32, 64, 128, 256}) {
    std::vector<int64_t> shape{64, rowLen};
    auto sw = autoSwizzle(shape, "bf16");
    ASSERT_TRUE(sw) << rowLen;
    auto [b, m, s] = *sw;
    auto swizzle = [&](int64_t o) { return o ^ (((o >> (m + s)) & ((1 << b) - 1)) << m); };
    for (int64_t row0 = 0; row0 < 64; row0 += 8)
      for (int64_t chunk = 0; chunk < rowLen / 8; ++chunk) {
        std::set<int64_t> groups;
        for (int64_t r = row0; r < row0 + 8; ++r) groups.insert((swizzle(r * rowLen + chunk * 8) * 2 / 16) % 8);
        EXPECT_EQ(groups.size(), 8u) << "rows of " << rowLen << " at row " << row0 << " chunk " << chunk;
      }
  }
}

TEST(AgentRewrite, NeverCrashesOnAnyExampleOrTruncation) {
  // Every rewrite on every example and on truncated copies of it either
  // applies (and its result formats) or says why not; nothing throws.
  const json argsFor[] = {json::object(), json{{"stages", 3}}, json{{"WM", 2}, {"WN", 2}}, "auto",
                          json{{"BM", 32}}, json{{"WM", "two"}}, json(nullptr), json::array()};
  namespace fs = std::filesystem;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(ARGUS_SOURCE_DIR) / "examples")) {
    if (e.path().extension() != ".ag") continue;
    std::string text = argus::testing::readSource(e.path());
    for (size_t cut : {text.size(), text.size() * 3 / 4, text.size() / 2, text.size() / 5}) {
      std::string source = text.substr(0, cut);
      argus::agent::KernelFeatures f = analyzeKernel(source);
      EXPECT_FALSE(f.tags().empty());
      for (const std::string& id : argus::agent::rewriteIds())
        for (const json& args : argsFor) {
          RewriteResult r = rewrite(id, source, args);
          EXPECT_NE(r.applied, !r.whyNot.empty()) << e.path() << " " << id << " " << args.dump();
          if (r.applied) {
            EXPECT_TRUE(argus::formatSource(argus::SourceFile("k.ag", r.source)).has_value());
          }
        }
    }
  }
  EXPECT_FALSE(analyzeKernel("").parsed);
  EXPECT_FALSE(rewrite("set_params", "", json{{"BM", 1}}).applied);
}

TEST(AgentRewrite, RecognizesOtherSpellingsOfTheOuterProduct) {
  std::string source = naiveSource();
  const std::string update = "acc = acc + cast(a, f32) * cast(b, f32)";
  source.replace(source.find(update), update.size(), "acc += cast(b, f32) * cast(a, f32)");
  const std::string bLoad = "            b = load(B.tile((1, BN))[kt * BK + kk, program_id(1)])\n";
  source.erase(source.find(bLoad), bLoad.size());
  source.replace(source.find("            a = load("), 0, bLoad);  // b loaded first
  RewriteResult r = apply("stage_operands_in_shared", source, json::object());
  EXPECT_TRUE(contains(r.source, "acc = dot(a_s, b_s, acc)")) << r.source;
  compileClean(r.source, "other spelling");
  // A K index that is not kt * BK + kk is not this pattern.
  std::string shifted = naiveSource();
  shifted.replace(shifted.find("[program_id(0), kt * BK + kk]"), 29, "[program_id(0), kt * BK + kk + 1]");
  expectWhyNot("stage_operands_in_shared", shifted, json::object(), "indexed along K");
}

TEST(AgentRewrite, RasterizeGridKeepsResults) {
  // On the staged tensor-core GEMM with small tiles, at a size whose 5 x 4
  // tiles do not split evenly into groups of 2 row tiles.
  std::string source = apply("stage_operands_in_shared", naiveSource(), json::object()).source;
  source = apply("tensor_core_mma", source, json::object()).source;
  RewriteResult r = apply("rasterize_grid", source, json{{"GROUP_M", 2}});
  for (const char* piece : {"@kernel(grid=(cdiv(M, BM) * cdiv(N, BN),), warps=WM * WN)", "GROUP_M: const = 2",
                            "rows = minimum(cdiv(M, BM) - first_m, GROUP_M)", "copy(a_s, A.tile((BM, BK))[pm, kt])",
                            "C.tile((BM, BN))[pm, pn] = cast(acc, bf16)"})
    EXPECT_TRUE(contains(r.source, piece)) << piece << "\n" << r.source;
  auto rasterized = compileClean(r.source, "rasterized");
  auto naive = compileClean(naiveSource(), "gemm_naive");
  std::mt19937 rng(9);
  const int64_t m = 300, n = 200, k = 24;
  HostTensor a = randomBf16({m, k}, rng), b = randomBf16({k, n}, rng);
  HostTensor want = runGemm(*naive, a, b, m, n), got = runGemm(*rasterized, a, b, m, n);
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got.get(i) - want.get(i)));
  EXPECT_LT(worst, 0.05);  // bf16 output rounding; an unwritten tile would leave 1e30

  // The chain ends rasterized (as examples/gemm_tc.ag): doing it again says why not.
  expectWhyNot("rasterize_grid", runChain(), json::object(), "has 1 axis");
  expectWhyNot("rasterize_grid", r.source, json::object(), "has 1 axis");
  expectWhyNot("rasterize_grid", argus::testing::readExample("softmax.ag"), json::object(), "1 axis");
}
