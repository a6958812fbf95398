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

namespace fs = std::filesystem;
using argus::interp::ArgValue;
using argus::interp::HostTensor;
using argus::ir::DType;

namespace {

std::unique_ptr<argus::Compilation> compile(const std::string& name, std::vector<std::pair<std::string, std::string>> defines = {}) {
  std::ifstream in(fs::path(ARGUS_SOURCE_DIR) / "examples" / name);
  std::stringstream ss;
  ss << in.rdbuf();
  argus::CompileOptions options;
  options.defines = std::move(defines);
  auto c = std::make_unique<argus::Compilation>(argus::SourceFile(name, ss.str()), options);
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
