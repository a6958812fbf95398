// C = A @ B with B stored (K, N) (torch.matmul's layout) on the Hopper path, and
// dot's own choice of instruction: examples/gemm_nn.ag takes wgmma with B read
// N-major through column panels (TMA boxes one 128-byte span wide), bf16 and f16,
// and computes A @ B on the interpreter at ragged sizes; a dot whose accumulator
// has no layout written gets wgmma on sm_90a and mma.sync elsewhere, also with a
// bias row broadcast over it (a 16-bit dot that stays on FMAs says why, AG5021:
// tests/golden/diagnostics/codegen_dot_on_fmas_reasons.ag).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>

#include "driver/compilation.h"
#include "hopper_test_util.h"
#include "ir/bulk.h"
#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "test_sources.h"
#include "checker_only.h"

using namespace argus::testing::hopper;  // NOLINT: the shared helpers of the Hopper tests
using argus::interp::ArgValue;
using argus::interp::HostTensor;

namespace {

size_t countOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string warningsOf(argus::Compilation& c) {
  std::string out;
  for (const argus::Diagnostic& d : c.diagnostics())
    if (d.severity == argus::Severity::Warning && !argus::testing::isTileOrderSeparationLimit(d)) out += std::string(d.code()) + " " + d.message + "\n";
  return out;
}

TEST(HopperNn, BStoredKByNTakesWgmmaThroughPanels) {
  for (const char* dtype : {"bf16", "f16"}) {
    std::string text = argus::testing::readExample("gemm_nn.ag");
    const std::string to = dtype;
    for (size_t at = text.find("bf16"); at != std::string::npos; at = text.find("bf16", at + to.size()))
      text.replace(at, 4, to);
    auto c = compile("gemm_nn.ag", text);
    const std::string& ptx = c->ptx();
    ASSERT_EQ(errorsOf(*c), "") << dtype;
    EXPECT_EQ(warningsOf(*c), "") << dtype;
    // One m64n256k16 per K step of 16, B transposed (imm-trans-b = 1), A not.
    const std::string wgmma = std::string("wgmma.mma_async.sync.aligned.m64n256k16.f32.") + dtype + "." + dtype;
    EXPECT_EQ(countOf(ptx, wgmma), 4u) << dtype;
    EXPECT_NE(ptx.find("p, 1, 1, 0, 1;"), std::string::npos) << dtype;
    EXPECT_EQ(ptx.find("p, 1, 1, 0, 0;"), std::string::npos) << dtype;
    // A stage is one box of A and four of B (64 columns each): five TMA copies per place
    // the producer fills a stage (the boxes per map: tensorMapsOf, below).
    const size_t copies = countOf(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes");
    EXPECT_GT(copies, 0u) << dtype;
    EXPECT_EQ(copies % 5, 0u) << dtype;
    std::string report = ptxasReport(ptx);
    if (report.empty()) continue;
    EXPECT_EQ(report.find("error"), std::string::npos) << report;
    EXPECT_EQ(report.find("C7519"), std::string::npos) << report;  // no accumulator moves inside the pipeline
    EXPECT_EQ(report.find("C7514"), std::string::npos) << report;  // no serialized wgmma
    EXPECT_NE(report.find(" 0 bytes spill stores"), std::string::npos) << report;
  }
}

TEST(HopperNn, TheTensorMapsGiveBItsPanelBox) {
  auto c = compile("gemm_nn.ag", argus::testing::readExample("gemm_nn.ag"));
  ASSERT_EQ(errorsOf(*c), "");
  ASSERT_EQ(c->ir().functions.size(), 1u);
  // A's box is its whole (128, 64) tile; B's (64, 256) tile goes in (64, 64) boxes.
  std::vector<argus::ir::TensorMapUse> maps = argus::ir::tensorMapsOf(*c->ir().functions[0]);
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[0].box, (std::vector<int64_t>{128, 64}));
  EXPECT_EQ(maps[1].box, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(maps[1].swizzleBytes, 128);
  // The buffer's type says how it is stored: 4 stages of (64, 256) in panels of 64 columns.
  const std::string ir = argus::ir::print(*c->ir().functions[0]);
  EXPECT_NE(ir.find("shared<bf16, [4, 64, 256], swizzle<3, 3, 3>, panels<64>>"), std::string::npos) << ir;
}

TEST(HopperNn, InterpreterComputesAB) {
  std::mt19937 rng(19);
  // Ragged against the 128 x 256 x 64 tiles; K and N multiples of 8 (TMA's 16-byte rows);
  // 3 K tiles on 4 stages and several output tiles per block.
  const int64_t m = 200, n = 264, k = 136;
  HostTensor a = randomBf16({m, k}, rng), b = randomBf16({k, n}, rng);
  std::string text = argus::testing::readExample("gemm_nn.ag");
  text.replace(text.find("SMS: const = 132"), 16, "SMS: const = 3");
  auto c = compile("gemm_nn.ag", text);
  ASSERT_EQ(errorsOf(*c), "");
  ASSERT_EQ(c->ir().functions.size(), 1u);
  HostTensor out = HostTensor::zeros(argus::ir::DType::BF16, {m, n});
  std::vector<ArgValue> args = {&a, &b, &out};
  auto error = argus::interp::run(*c->ir().functions[0], args);
  ASSERT_FALSE(error) << error->message;
  size_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        ref += a.get(static_cast<size_t>(i * k + kk)) * b.get(static_cast<size_t>(kk * n + j));
      const double got = out.get(static_cast<size_t>(i * n + j));
      if (std::fabs(got - ref) > 0.01 * std::fabs(ref) + 0.02 && ++bad <= 5)
        ADD_FAILURE() << "C[" << i << ", " << j << "] = " << got << ", expected " << ref;
    }
  EXPECT_EQ(bad, 0u);
}

// Reads a source file of the tree (an example, a golden file).
std::string readSource(const std::string& relative) {
  std::ifstream in(std::string(ARGUS_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The epilogues computed in the accumulator's layout (the bias row broadcast from a
// layout reduced along the rows, a residual tile loaded in wgmma's or mma's layout)
// give what the math says: the interpreter runs the layouts codegen emits, thread by
// thread, so a wrong reduced axis or value index shows here as a wrong element.
TEST(HopperNn, InterpreterComputesTheFusedEpilogues) {
  std::mt19937 rng(23);
  const int64_t m = 200, n = 264, k = 136;
  HostTensor a = randomBf16({m, k}, rng), b = randomBf16({k, n}, rng);
  HostTensor bias = randomBf16({n}, rng), residual = randomBf16({m, n}, rng);
  auto product = [&](int64_t i, int64_t j) {
    double sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) sum += a.get(static_cast<size_t>(i * k + kk)) * b.get(static_cast<size_t>(kk * n + j));
    return sum;
  };
  struct Case {
    std::string file, arch;
    std::function<double(int64_t, int64_t)> expected;
  };
  const double alpha = 0.5;
  const Case cases[] = {
      {"examples/gemm_bias_gelu.ag", "sm_90a",
       [&](int64_t i, int64_t j) {
         const double x = product(i, j) + bias.get(static_cast<size_t>(j));
         return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
       }},
      {"tests/golden/diagnostics/dot_epilogue_in_registers.ag", "sm_90a",
       [&](int64_t i, int64_t j) {
         return std::max(alpha * product(i, j) + bias.get(static_cast<size_t>(j)), 0.0) +
                residual.get(static_cast<size_t>(i * n + j));
       }},
      {"tests/golden/diagnostics/dot_epilogue_in_registers_sm90.ag", "sm_90",
       [&](int64_t i, int64_t j) {
         return std::max(alpha * product(i, j) + bias.get(static_cast<size_t>(j)), 0.0) +
                residual.get(static_cast<size_t>(i * n + j));
       }},
  };
  for (const Case& c : cases) {
    std::string text = readSource(c.file);
    if (const size_t sms = text.find("SMS: const = 132"); sms != std::string::npos) text.replace(sms, 16, "SMS: const = 3");
    auto compiled = compile(c.file, text, c.arch);
    ASSERT_EQ(errorsOf(*compiled), "") << c.file;
    const argus::ir::Function& fn = *compiled->ir().functions[0];
    HostTensor out = HostTensor::zeros(argus::ir::DType::BF16, {m, n});
    std::vector<ArgValue> args;
    if (fn.name == "gemm_bias_gelu") args = {&a, &b, &bias, &out};
    else args = {&a, &b, &bias, &residual, &out, ArgValue(alpha)};
    auto error = argus::interp::run(fn, args);
    ASSERT_FALSE(error) << c.file << ": " << error->message;
    size_t bad = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double ref = c.expected(i, j);
        const double got = out.get(static_cast<size_t>(i * n + j));
        if (std::fabs(got - ref) > 0.01 * std::fabs(ref) + 0.03 && ++bad <= 5)
          ADD_FAILURE() << c.file << ": C[" << i << ", " << j << "] = " << got << ", expected " << ref;
      }
    EXPECT_EQ(bad, 0u) << c.file;
  }
}

// The same GEMM written without a layout: the compiler picks wgmma on sm_90a.
TEST(DotInstruction, AnAccumulatorWithoutALayoutGetsWgmmaOnSm90a) {
  auto c = compile("nn.ag", argus::testing::readTestKernel("driver_hopper_nn/tma_gemm_without_layout.ag"));
  const std::string& ptx = c->ptx();
  ASSERT_EQ(errorsOf(*c), "");
  EXPECT_EQ(warningsOf(*c), "");
  EXPECT_EQ(countOf(ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"), 4u);
  EXPECT_EQ(ptx.find("fma.rn.f32"), std::string::npos);
}

// A cp.async GEMM without a layout: mma.sync on sm_80 and sm_90, and on sm_90a too, where
// B's swizzle (3, 3, 4) is none of TMA's patterns, the only ones wgmma reads.
std::string asyncGemm() { return argus::testing::readTestKernel("driver_hopper_nn/cp_async_gemm_without_layout.ag"); }

TEST(DotInstruction, AnAccumulatorWithoutALayoutGetsMmaSyncElsewhere) {
  for (const char* arch : {"sm_80", "sm_90", "sm_90a"}) {
    auto c = compile("g.ag", asyncGemm(), arch);
    const std::string& ptx = c->ptx();
    ASSERT_EQ(errorsOf(*c), "") << arch;
    EXPECT_EQ(warningsOf(*c), "") << arch;
    EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), std::string::npos) << arch;
    EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), std::string::npos) << arch;
    EXPECT_EQ(ptx.find("wgmma"), std::string::npos) << arch;
  }
}

// A 16-bit dot on FMAs says why (AG5021), and an accumulator with a written mma layout
// keeps the tensor cores when reduced: tests/golden/diagnostics/codegen_dot_on_fmas_reasons.ag.

// The epilogue of a linear layer, C = gelu(A @ B + bias): the bias row broadcast over
// the accumulator takes the accumulator's layout, so the dot keeps the tensor cores.
TEST(DotInstruction, ABiasRowBroadcastKeepsTheTensorCores) {
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string text = asyncGemm();
    text.replace(text.find("C: Tensor[f32, (M, N)]"), 22, "bias: Tensor[f32, (N,)], C: Tensor[f32, (M, N)]");
    const std::string store = "C.tile((64, 128))[program_id(0), program_id(1)] = acc";
    text.replace(text.find(store), store.size(),
                 "C.tile((64, 128))[program_id(0), program_id(1)] = "
                 "acc + load(bias.tile((128,))[program_id(1)])[None, :]");
    auto c = compile("g.ag", text, arch);
    const std::string& ptx = c->ptx();
    ASSERT_EQ(errorsOf(*c), "") << arch;
    EXPECT_EQ(warningsOf(*c), "") << arch;
    EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), std::string::npos) << arch;
  }
}

}  // namespace
