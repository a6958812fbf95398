// examples/moe_gemm.ag and moe_gemm_persistent.ag, the MoE grouped GEMM on the
// Hopper path: checker-clean, accepted by ptxas for sm_90a in every build (one and two
// warpgroups, a producer warpgroup, persistent), and equal on the CPU interpreter to a
// plain C++ grouped GEMM at ragged sizes, with a padding block and an expert that gets
// no rows.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "driver/compilation.h"
#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "test_sources.h"

using argus::interp::ArgValue;
using argus::interp::HostTensor;
using argus::ir::DType;

namespace {

struct MoeKernel {
  std::unique_ptr<argus::Compilation> compilation;
  const argus::ir::Function* kernel = nullptr;
};

// `tolerated`: a warning code that is not a failure (the checker's "cannot prove" on the
// warp-specialized build, which it does not fully follow yet).
MoeKernel compileMoe(std::vector<std::pair<std::string, std::string>> defines, const std::string& tolerated = "",
                     const std::string& example = "moe_gemm.ag") {
  MoeKernel out;
  argus::CompileOptions options;
  options.arch = "sm_90a";
  options.defines = std::move(defines);
  out.compilation = std::make_unique<argus::Compilation>(
      argus::SourceFile(example, argus::testing::readExample(example)), options);
  const argus::ir::Module& module = out.compilation->ir();
  EXPECT_TRUE(out.compilation->check());
  for (const argus::Diagnostic& d : out.compilation->diagnostics())
    if (d.code() != tolerated) ADD_FAILURE() << example << ": " << d.code() << " " << d.message;
  if (module.functions.size() == 1) out.kernel = module.functions[0].get();
  return out;
}

// The routing of one test case: how many rows each expert has before padding,
// and how many whole padding blocks (expert -1 or E) follow the experts' blocks.
struct Routing {
  std::vector<int64_t> rowsPerExpert;
  int64_t paddingBlocks = 0;
  int64_t paddingExpert = -1;
};

struct MoeCase {
  int64_t n, k, blockRows;
  Routing routing;
};

// Runs one case: X and W random bf16, the padded layout built like vLLM's
// moe_align_block_size, Y compared with a double-precision grouped GEMM on the
// rows that belong to a token (padding rows are don't-care).
void runCase(const argus::ir::Function& kernel, const MoeCase& c, std::mt19937& rng) {
  const int64_t experts = static_cast<int64_t>(c.routing.rowsPerExpert.size());
  std::vector<int64_t> blockExpert;
  std::vector<bool> realRow;
  for (int64_t e = 0; e < experts; ++e) {
    int64_t rows = c.routing.rowsPerExpert[static_cast<size_t>(e)];
    int64_t blocks = (rows + c.blockRows - 1) / c.blockRows;
    for (int64_t b = 0; b < blocks; ++b) blockExpert.push_back(e);
    for (int64_t r = 0; r < blocks * c.blockRows; ++r) realRow.push_back(r < rows);
  }
  for (int64_t b = 0; b < c.routing.paddingBlocks; ++b) {
    blockExpert.push_back(c.routing.paddingExpert);
    for (int64_t r = 0; r < c.blockRows; ++r) realRow.push_back(false);
  }
  const int64_t blocks = static_cast<int64_t>(blockExpert.size());
  const int64_t rows = blocks * c.blockRows;

  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  HostTensor x = HostTensor::zeros(DType::BF16, {rows, c.k});
  HostTensor w = HostTensor::zeros(DType::BF16, {experts, c.n, c.k});
  HostTensor be = HostTensor::zeros(DType::I32, {blocks});
  HostTensor y = HostTensor::zeros(DType::BF16, {rows, c.n});
  for (size_t i = 0; i < x.size(); ++i)  // padding rows of X stay 0, as the alignment leaves them
    if (realRow[i / static_cast<size_t>(c.k)]) x.set(i, dist(rng));
  for (size_t i = 0; i < w.size(); ++i) w.set(i, dist(rng));
  for (size_t b = 0; b < blockExpert.size(); ++b) be.setInt(b, blockExpert[b]);
  for (size_t i = 0; i < y.size(); ++i) y.set(i, std::nan(""));

  std::vector<ArgValue> args = {&x, &w, &be, &y};
  auto error = argus::interp::run(kernel, args);
  ASSERT_FALSE(error) << error->message;

  size_t bad = 0, checked = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (!realRow[static_cast<size_t>(r)]) continue;
    int64_t e = blockExpert[static_cast<size_t>(r / c.blockRows)];
    for (int64_t j = 0; j < c.n; ++j) {
      double want = 0;
      for (int64_t kk = 0; kk < c.k; ++kk)
        want += x.get(static_cast<size_t>(r * c.k + kk)) * w.get(static_cast<size_t>((e * c.n + j) * c.k + kk));
      double got = y.get(static_cast<size_t>(r * c.n + j));
      ++checked;
      // Y is bf16: one rounding of the f32 sum, 2^-8 relative, plus f32 accumulation.
      if (!(std::fabs(got - want) <= 1e-2 * (1.0 + std::fabs(want))) && ++bad <= 5)
        ADD_FAILURE() << "Y[" << r << ", " << j << "] (expert " << e << ") = " << got << ", expected " << want;
    }
  }
  EXPECT_GT(checked, 0u);
  EXPECT_EQ(bad, 0u) << bad << " of " << checked << " outputs differ (N=" << c.n << " K=" << c.k << ")";
}

struct Build {
  std::string name;
  int warpgroups;
  bool specialized;
  bool persistent = false;  // moe_gemm_persistent.ag (two warpgroups and a producer, always)
};

class MoeExample : public ::testing::TestWithParam<Build> {};

// One warpgroup, BM = 64 (the default build; decode-like expert counts), with small
// tiles so the interpreter stays quick; two warpgroups, BM = 128; and the first with
// its copies issued by a producer warpgroup (SPEC).
std::vector<std::pair<std::string, std::string>> definesFor(const Build& build) {
  std::vector<std::pair<std::string, std::string>> out = {{"BN", "64"}};
  if (build.persistent) return {{"BN", "64"}, {"SMS", "3"}, {"GROUP", "2"}};  // 3 blocks walk every tile
  if (build.warpgroups == 2) out.insert(out.end(), {{"BM", "128"}, {"WG", "2"}});
  if (build.specialized) out.emplace_back("SPEC", "True");
  return out;
}

TEST_P(MoeExample, MatchesAGroupedGemmOnTheInterpreter) {
  const int warpgroups = GetParam().warpgroups;
  MoeKernel moe = compileMoe(definesFor(GetParam()), GetParam().specialized ? "AG2004" : "",
                             GetParam().persistent ? "moe_gemm_persistent.ag" : "moe_gemm.ag");
  ASSERT_NE(moe.kernel, nullptr);
  const int64_t bm = 64 * warpgroups;
  std::mt19937 rng(61 + warpgroups);
  // N not a multiple of BN; K a multiple of 8 (TMA rows of 16 bytes) but not of BK.
  // Expert 1 gets no rows; one padding block marked -1 (or E) ends the layout.
  runCase(*moe.kernel, MoeCase{100, 72, bm, Routing{{bm + 5, 0, 3}, 1, -1}}, rng);
  runCase(*moe.kernel, MoeCase{70, 136, bm, Routing{{2, bm, 0, 1}, 1, 4}}, rng);
}

INSTANTIATE_TEST_SUITE_P(Builds, MoeExample,
                         ::testing::Values(Build{"one_warpgroup", 1, false}, Build{"two_warpgroups", 2, false},
                                           Build{"one_warpgroup_specialized", 1, true},
                                           Build{"persistent", 2, true, true}),
                         [](const auto& info) { return info.param.name; });

TEST(MoeExample, RejectsALayoutWithoutAnExpertForEveryBlock) {
  MoeKernel moe = compileMoe({});
  ASSERT_NE(moe.kernel, nullptr);
  HostTensor x = HostTensor::zeros(DType::BF16, {128, 16}), w = HostTensor::zeros(DType::BF16, {2, 8, 16});
  HostTensor be = HostTensor::zeros(DType::I32, {1}), y = HostTensor::zeros(DType::BF16, {128, 8});
  std::vector<ArgValue> args = {&x, &w, &be, &y};
  auto error = argus::interp::run(*moe.kernel, args);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("one expert per block of BM rows"), std::string::npos) << error->message;
}

// The producer-warpgroup build (SPEC) once stopped code generation with an internal
// error: the block's program lowered the expert's load again onto the producer's values.
TEST(MoeExample, AssemblesWithPtxasForSm90a) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/ptxas")) GTEST_SKIP() << "ptxas is not installed";
  struct Variant {
    const char* example;
    std::vector<std::pair<std::string, std::string>> defines;
  };
  const std::vector<Variant> variants = {
      {"moe_gemm.ag", {}},
      {"moe_gemm.ag", {{"BM", "128"}, {"BN", "256"}, {"WG", "2"}}},
      {"moe_gemm.ag", {{"BM", "128"}, {"BN", "256"}, {"WG", "2"}, {"SPEC", "True"}}},
      {"moe_gemm_persistent.ag", {}},
  };
  for (const Variant& variant : variants) {
    argus::CompileOptions options;
    options.arch = "sm_90a";
    options.defines = variant.defines;
    argus::Compilation c(argus::SourceFile(variant.example, argus::testing::readExample(variant.example)), options);
    const auto& cubin = c.cubin();
    for (const argus::Diagnostic& d : c.diagnostics())
      if (d.severity == argus::Severity::Error) ADD_FAILURE() << variant.example << ": " << d.code() << " " << d.message;
    ASSERT_TRUE(cubin.has_value()) << variant.example << " with " << variant.defines.size() << " defines";
    EXPECT_NE(c.ptx().find("wgmma.mma_async"), std::string::npos);
    EXPECT_NE(c.ptx().find("cp.async.bulk.tensor.3d"), std::string::npos);  // W through its (1, BN, BK) box
  }
}

}  // namespace
