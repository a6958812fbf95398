// The tensor-core examples (gemm_tc.ag, attention.ag) on the CPU interpreter
// against double-precision references, at sizes that are not multiples of the
// tiles. The interpreter follows the IR (mma layouts, register operands,
// trans_b) exactly; the fragment addressing of ldmatrix/mma.sync is checked on
// a GPU by bench/bench_gpu.py.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "driver/compilation.h"
#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "test_sources.h"

namespace fs = std::filesystem;
using argus::interp::ArgValue;
using argus::interp::HostTensor;
using argus::ir::DType;

namespace {

std::unique_ptr<argus::Compilation> compile(const std::string& name, std::vector<std::pair<std::string, std::string>> defines = {}) {
  argus::CompileOptions options;
  options.defines = std::move(defines);
  auto c = std::make_unique<argus::Compilation>(argus::SourceFile(name, argus::testing::readExample(name)), options);
  for (const argus::Diagnostic& d : c->diagnostics()) ADD_FAILURE() << name << ": " << d.code() << " " << d.message;
  return c;
}

HostTensor randomBf16(std::vector<int64_t> shape, std::mt19937& rng) {
  HostTensor t = HostTensor::zeros(DType::BF16, std::move(shape));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < t.size(); ++i) t.set(i, dist(rng));
  return t;
}

double relativeError(const HostTensor& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.get(i);
    if (!std::isfinite(g)) return INFINITY;
    num += (g - want[i]) * (g - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

}  // namespace

TEST(ExampleTensorCores, GemmTcMatchesReference) {
  // Small tiles keep the interpreter quick; the layout logic is the same.
  auto c = compile("gemm_tc.ag", {{"BM", "64"}, {"BN", "32"}, {"BK", "32"}});
  ASSERT_EQ(c->ir().functions.size(), 1u);
  const argus::ir::Function& fn = *c->ir().functions[0];
  std::mt19937 rng(11);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{100, 70, 40}, {64, 32, 32}, {17, 9, 70}}) {
    HostTensor a = randomBf16({m, k}, rng), b = randomBf16({k, n}, rng), out = randomBf16({m, n}, rng);
    std::vector<ArgValue> args = {&a, &b, &out};
    auto error = argus::interp::run(fn, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk)
          want[static_cast<size_t>(i * n + j)] += a.get(static_cast<size_t>(i * k + kk)) * b.get(static_cast<size_t>(kk * n + j));
    EXPECT_LT(relativeError(out, want), 1e-2) << m << "x" << n << "x" << k;  // bf16 output rounding
  }
}

namespace {

void checkAttention(bool causal) {
  auto c = compile("attention.ag", {{"D", "32"}, {"BM", "32"}, {"BN", "16"}, {"WM", "2"}, {"SWZ", "3"},
                                    {"CAUSAL", causal ? "1" : "0"}});
  ASSERT_EQ(c->ir().functions.size(), 1u);
  const argus::ir::Function& fn = *c->ir().functions[0];
  std::mt19937 rng(causal ? 13 : 12);
  const int64_t D = 32;
  for (int64_t S : {int64_t{45}, int64_t{32}, int64_t{1}}) {
    const int64_t BH = 2;
    HostTensor q = randomBf16({BH, S, D}, rng), k = randomBf16({BH, S, D}, rng), v = randomBf16({BH, S, D}, rng);
    HostTensor o = randomBf16({BH, S, D}, rng);
    const double scale = 1.0 / std::sqrt(static_cast<double>(D));
    float scaleLog2 = static_cast<float>(scale / std::log(2.0));
    std::vector<ArgValue> args = {&q, &k, &v, &o, scaleLog2};
    auto error = argus::interp::run(fn, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(BH * S * D), 0.0);
    for (int64_t h = 0; h < BH; ++h)
      for (int64_t r = 0; r < S; ++r) {
        std::vector<double> p(static_cast<size_t>(S), 0.0);
        double mx = -INFINITY, sum = 0;
        int64_t last = causal ? r : S - 1;
        for (int64_t j = 0; j <= last; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += q.get(static_cast<size_t>((h * S + r) * D + d)) * k.get(static_cast<size_t>((h * S + j) * D + d));
          p[static_cast<size_t>(j)] = dot * scale;
          mx = std::max(mx, dot * scale);
        }
        for (int64_t j = 0; j <= last; ++j) sum += (p[static_cast<size_t>(j)] = std::exp(p[static_cast<size_t>(j)] - mx));
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t j = 0; j <= last; ++j) acc += p[static_cast<size_t>(j)] * v.get(static_cast<size_t>((h * S + j) * D + d));
          want[static_cast<size_t>((h * S + r) * D + d)] = acc / sum;
        }
      }
    EXPECT_LT(relativeError(o, want), 2e-2) << "S=" << S << (causal ? " causal" : "");  // p rounds to bf16
  }
}

}  // namespace

TEST(ExampleTensorCores, AttentionMatchesReference) { checkAttention(false); }
TEST(ExampleTensorCores, CausalAttentionMatchesReference) { checkAttention(true); }

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool haveCubin(argus::Compilation& c) {
  return c.cubin().has_value() || !fs::exists(c.options().ptxasPath);
}

}  // namespace

// The instruction builders' output, counted for the default tiles, and ptxas's
// verdict on it (where CUDA is installed).
TEST(ExampleTensorCores, GemmTcUsesLdmatrixAndMmaSync) {
  auto c = compile("gemm_tc.ag");
  const std::string& ptx = c->ptx();
  // 2x2 warps of 64x64: per 16-wide K step 4 A loads, 4 B loads (.trans), 4x8 mma.
  const size_t steps = 32 / 16;
  EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 4 * steps);
  EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), 4 * steps);
  EXPECT_EQ(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), 32 * steps);
  EXPECT_GT(count(ptx, "cp.async.cg.shared.global"), 0u);
  EXPECT_TRUE(haveCubin(*c)) << "ptxas rejected the tensor-core GEMM";
}

TEST(ExampleTensorCores, AttentionTakesPFromRegistersAndKTransposed) {
  auto c = compile("attention.ag", {{"D", "64"}, {"BM", "64"}, {"WM", "4"}, {"SWZ", "3"}});
  const std::string& ptx = c->ptx();
  // s = q @ k^T: 4 K steps x 8 n-atoms; o += p @ v: 4 K steps x 8 n-atoms, one warp row each.
  EXPECT_EQ(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), 64u);
  // q and k^T through plain ldmatrix, v through .trans; p never touches shared memory.
  EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 4u + 16u);
  EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), 16u);
  EXPECT_TRUE(haveCubin(*c)) << "ptxas rejected the attention kernel";
}

// The defaults (D = 128, BM = 128 over 4 warps): 32 query rows per warp, so each key
// and value fragment feeds two m-atoms, and the kernel compiles with no warning (the
// register estimate once counted its packed p and its mask's temporaries in full).
TEST(ExampleTensorCores, AttentionDefaultsGiveEachWarpTwoRowAtoms) {
  auto c = compile("attention.ag", {});
  for (const argus::Diagnostic& d : c->diagnostics()) ADD_FAILURE() << d.code() << " " << d.message;
  const std::string& ptx = c->ptx();
  // s = q @ k^T: 2 m-atoms x 8 n-atoms x 8 K steps; o += p @ v: 2 x 16 x 4.
  EXPECT_EQ(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), 256u);
  // q: 2 x 8 loads, k^T: 8 K steps x 4; v (.trans): 4 K steps x 8.
  EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 16u + 32u);
  EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), 32u);
  EXPECT_TRUE(haveCubin(*c)) << "ptxas rejected the attention kernel";
}

TEST(ExampleTensorCores, F16OperandsUseTheF16Instruction) {
  std::string source = argus::testing::readTestKernel("driver_examples_tc/f16_dot.ag");
  argus::Compilation c(argus::SourceFile("f16.ag", source), argus::CompileOptions{});
  for (const argus::Diagnostic& d : c.diagnostics()) ADD_FAILURE() << d.code() << " " << d.message;
  EXPECT_EQ(count(c.ptx(), "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), 2u * 2u * 4u);
  EXPECT_TRUE(haveCubin(c));
}
