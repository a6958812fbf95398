// Triton's tutorials 01-05 ported (examples/triton, docs/triton.md): each compiles
// without diagnostics to PTX that ptxas accepts, and agrees on the CPU interpreter
// with a plain C++ reference at sizes that are not multiples of its tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>

#include "driver/compilation.h"
#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "tests/unit/philox_reference.h"
#include "test_sources.h"
#include "checker_only.h"

namespace fs = std::filesystem;
using argus::interp::ArgValue;
using argus::interp::HostTensor;
using argus::ir::DType;

namespace {

const char* const kTutorials[] = {"01_vector_add.ag", "02_fused_softmax.ag", "03_matmul_leaky_relu.ag",
                                  "04_dropout.ag", "05_layernorm.ag"};

std::string tutorialSource(const std::string& name) { return argus::testing::readExample("triton/" + name); }

HostTensor randomTensor(DType dt, std::vector<int64_t> shape, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  HostTensor t = HostTensor::zeros(dt, std::move(shape));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (size_t i = 0; i < t.size(); ++i) t.set(i, dist(rng));
  return t;
}

struct Tutorial {
  std::unique_ptr<argus::Compilation> compilation;
  const argus::ir::Function* kernel = nullptr;
};

Tutorial compileTutorial(const std::string& name) {
  Tutorial out;
  out.compilation = std::make_unique<argus::Compilation>(argus::SourceFile(name, tutorialSource(name)),
                                                         argus::CompileOptions{});
  const argus::ir::Module& module = out.compilation->ir();
  for (const argus::Diagnostic& d : out.compilation->diagnostics())
    if (!argus::testing::isTileOrderSeparationLimit(d)) ADD_FAILURE() << name << ": " << d.code() << " " << d.message;
  if (module.functions.size() == 1) out.kernel = module.functions[0].get();
  return out;
}

// |got - want| <= tolerance * (1 + |want|) everywhere.
void expectClose(const HostTensor& got, const std::vector<double>& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got.get(i) - want[i]) <= tolerance * (1.0 + std::fabs(want[i]))) && ++bad <= 5)
      ADD_FAILURE() << what << "[" << i << "] = " << got.get(i) << ", expected " << want[i];
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << want.size() << " elements differ";
}

class TritonTutorialPtx : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(TritonTutorialPtx, AssemblesWithPtxas) {
  const auto& [name, arch] = GetParam();
  if (!fs::exists("/usr/local/cuda/bin/ptxas")) GTEST_SKIP() << "ptxas is not installed";
  argus::CompileOptions options;
  options.arch = arch;
  argus::Compilation c(argus::SourceFile(name, tutorialSource(name)), options);
  const auto& cubin = c.cubin();
  for (const argus::Diagnostic& d : c.diagnostics())
    if (!argus::testing::isTileOrderSeparationLimit(d)) ADD_FAILURE() << d.code() << " " << d.message;
  ASSERT_TRUE(cubin.has_value());
  EXPECT_GT(cubin->size(), 0u);
}

std::vector<std::tuple<std::string, std::string>> tutorialsWithArchs() {
  std::vector<std::tuple<std::string, std::string>> out;
  for (const char* name : kTutorials)
    for (const char* arch : {"sm_80", "sm_90", "sm_90a"}) out.emplace_back(name, arch);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Tutorials, TritonTutorialPtx, ::testing::ValuesIn(tutorialsWithArchs()), [](const auto& info) {
  std::string stem = fs::path(std::get<0>(info.param)).stem().string();
  return "t" + stem + "_" + std::get<1>(info.param);
});

TEST(TritonTutorials, EveryFileIsListed) {
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(ARGUS_SOURCE_DIR) / "examples" / "triton"))
    files += e.path().extension() == ".ag";
  EXPECT_EQ(files, std::size(kTutorials));
}

// docs/triton.md shows each tutorial's code as the file has it (comments aside).
TEST(TritonTutorials, DocsPageShowsEachFile) {
  std::string page = argus::testing::readSource(fs::path(ARGUS_SOURCE_DIR) / "docs" / "triton.md");
  for (const char* name : kTutorials) {
    std::istringstream in(tutorialSource(name));
    std::string code, line;
    while (std::getline(in, line))
      if (line.rfind("#", 0) != 0) code += line + "\n";
    EXPECT_NE(page.find("```python\n" + code + "```"), std::string::npos) << name << " differs from docs/triton.md";
  }
}

TEST(TritonTutorials, VectorAdd) {
  Tutorial t = compileTutorial("01_vector_add.ag");
  ASSERT_NE(t.kernel, nullptr);
  std::mt19937 rng(1);
  for (int64_t n : {int64_t{1}, int64_t{98432}, int64_t{3001}}) {
    HostTensor x = randomTensor(DType::F32, {n}, rng), y = randomTensor(DType::F32, {n}, rng);
    HostTensor out = randomTensor(DType::F32, {n}, rng);
    std::vector<ArgValue> args = {&x, &y, &out};
    auto error = argus::interp::run(*t.kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(n));
    for (size_t i = 0; i < want.size(); ++i) want[i] = static_cast<float>(x.get(i) + y.get(i));
    expectClose(out, want, 0, "add out");
  }
}

TEST(TritonTutorials, FusedSoftmax) {
  Tutorial t = compileTutorial("02_fused_softmax.ag");
  ASSERT_NE(t.kernel, nullptr);
  std::mt19937 rng(2);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 781}, {3, 1024}, {2, 1}}) {
    HostTensor x = randomTensor(DType::F32, {m, n}, rng, -4, 4), y = randomTensor(DType::F32, {m, n}, rng);
    std::vector<ArgValue> args = {&x, &y};
    auto error = argus::interp::run(*t.kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(m * n));
    for (int64_t r = 0; r < m; ++r) {
      double mx = -INFINITY, sum = 0;
      for (int64_t c = 0; c < n; ++c) mx = std::max(mx, x.get(static_cast<size_t>(r * n + c)));
      for (int64_t c = 0; c < n; ++c) sum += std::exp(x.get(static_cast<size_t>(r * n + c)) - mx);
      for (int64_t c = 0; c < n; ++c)
        want[static_cast<size_t>(r * n + c)] = std::exp(x.get(static_cast<size_t>(r * n + c)) - mx) / sum;
    }
    expectClose(y, want, 1e-5, "softmax y");
  }
}

TEST(TritonTutorials, MatmulWithLeakyRelu) {
  Tutorial t = compileTutorial("03_matmul_leaky_relu.ag");
  ASSERT_NE(t.kernel, nullptr);
  std::mt19937 rng(3);
  // Ragged in every dimension, and enough row tiles (9) for a short last group.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{560, 130, 72}, {64, 64, 32}, {17, 9, 40}}) {
    HostTensor a = randomTensor(DType::F16, {m, k}, rng), b = randomTensor(DType::F16, {k, n}, rng);
    HostTensor c = randomTensor(DType::F16, {m, n}, rng);
    std::vector<ArgValue> args = {&a, &b, &c};
    auto error = argus::interp::run(*t.kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc += a.get(static_cast<size_t>(i * k + kk)) * b.get(static_cast<size_t>(kk * n + j));
        want[static_cast<size_t>(i * n + j)] = acc >= 0 ? acc : 0.01 * acc;
      }
    expectClose(c, want, 2e-3, "matmul C");  // f16 output: 2^-11 relative rounding
  }
}

// Triton's load-then-dot: dot() on register tiles and on global views. The compiler stages
// both operands through shared buffers of its own (two barriers around the stores), the
// checker proves that choreography, and the product is right on ragged sizes.
TEST(TritonHabits, DotOnLoadedTilesIsStagedByTheCompiler) {
  const std::string source =
      "@kernel(grid=(cdiv(M, 64), cdiv(N, 64)), warps=4)\n"
      "def mm(A: Tensor[f16, (M, K)], B: Tensor[f16, (K, N)], C: Tensor[f32, (M, N)]):\n"
      "    acc = zeros(f32, (64, 64))\n"
      "    for kt in range(cdiv(K, 32)):\n"
      "        a = load(A.tile((64, 32))[program_id(0), kt])\n"
      "        acc = dot(a, B.tile((32, 64))[kt, program_id(1)], acc)\n"
      "    C.tile((64, 64))[program_id(0), program_id(1)] = acc\n";
  argus::Compilation c(argus::SourceFile("mm.ag", source), argus::CompileOptions{});
  c.check();
  for (const argus::Diagnostic& d : c.diagnostics()) ADD_FAILURE() << d.code() << " " << d.message;
  const std::string ir = argus::ir::print(c.ir());
  EXPECT_NE(ir.find("%dot_a_staged"), std::string::npos) << ir;
  EXPECT_NE(ir.find("%dot_b_staged"), std::string::npos) << ir;
  EXPECT_NE(ir.find("barrier\n    store"), std::string::npos) << "one barrier before the stores" << ir;
  if (fs::exists("/usr/local/cuda/bin/ptxas")) {
    EXPECT_TRUE(c.cubin().has_value());
  }
  const argus::ir::Function& kernel = *c.ir().functions.at(0);
  std::mt19937 rng(5);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{100, 70, 45}, {64, 64, 32}}) {
    HostTensor a = randomTensor(DType::F16, {m, k}, rng), b = randomTensor(DType::F16, {k, n}, rng);
    HostTensor out = randomTensor(DType::F32, {m, n}, rng);
    std::vector<ArgValue> args = {&a, &b, &out};
    auto error = argus::interp::run(kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc += a.get(static_cast<size_t>(i * k + kk)) * b.get(static_cast<size_t>(kk * n + j));
        want[static_cast<size_t>(i * n + j)] = acc;
      }
    expectClose(out, want, 1e-4, "C");
  }
}

TEST(TritonTutorials, SeededDropout) {
  Tutorial t = compileTutorial("04_dropout.ag");
  ASSERT_NE(t.kernel, nullptr);
  std::mt19937 rng(4);
  const int64_t n = 5000;
  for (int64_t seed : {int64_t{123}, int64_t{-7}}) {
    HostTensor x = randomTensor(DType::F32, {n}, rng), out = randomTensor(DType::F32, {n}, rng);
    float p = 0.3f;
    std::vector<ArgValue> args = {&x, &out, p, seed};
    auto error = argus::interp::run(*t.kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(n));
    size_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      float u = argus::testing::tritonUniform(argus::testing::tritonRandint4x(seed, static_cast<uint32_t>(i))[0]);
      bool keep = u > p;
      kept += keep;
      want[static_cast<size_t>(i)] = keep ? static_cast<float>(static_cast<float>(x.get(static_cast<size_t>(i))) / (1.0f - p)) : 0.0;
    }
    expectClose(out, want, 0, "dropout out");
    EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.03);  // about 1 - p of the elements survive
  }
}

TEST(TritonTutorials, LayerNorm) {
  Tutorial t = compileTutorial("05_layernorm.ag");
  ASSERT_NE(t.kernel, nullptr);
  std::mt19937 rng(5);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 1000}, {3, 1024}, {2, 1}, {5, 333}}) {
    HostTensor x = randomTensor(DType::F32, {m, n}, rng, 9, 11), w = randomTensor(DType::F32, {n}, rng);
    HostTensor b = randomTensor(DType::F32, {n}, rng), y = randomTensor(DType::F32, {m, n}, rng);
    HostTensor mean = randomTensor(DType::F32, {m}, rng), rstd = randomTensor(DType::F32, {m}, rng);
    float eps = 1e-5f;
    std::vector<ArgValue> args = {&x, &w, &b, &y, &mean, &rstd, eps};
    auto error = argus::interp::run(*t.kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> wantY(static_cast<size_t>(m * n)), wantMean(static_cast<size_t>(m)), wantRstd(static_cast<size_t>(m));
    for (int64_t r = 0; r < m; ++r) {
      double mu = 0, var = 0;
      for (int64_t c = 0; c < n; ++c) mu += x.get(static_cast<size_t>(r * n + c));
      mu /= static_cast<double>(n);
      for (int64_t c = 0; c < n; ++c) var += std::pow(x.get(static_cast<size_t>(r * n + c)) - mu, 2);
      double rs = 1.0 / std::sqrt(var / static_cast<double>(n) + eps);
      wantMean[static_cast<size_t>(r)] = mu;
      wantRstd[static_cast<size_t>(r)] = rs;
      for (int64_t c = 0; c < n; ++c) {
        size_t i = static_cast<size_t>(r * n + c);
        wantY[i] = (x.get(i) - mu) * rs * w.get(static_cast<size_t>(c)) + b.get(static_cast<size_t>(c));
      }
    }
    expectClose(y, wantY, 1e-4, "layer_norm y");
    expectClose(mean, wantMean, 1e-6, "layer_norm mean");
    expectClose(rstd, wantRstd, 1e-4, "layer_norm rstd");
  }
}

}  // namespace
