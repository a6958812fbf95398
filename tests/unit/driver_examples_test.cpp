// Every example kernel: compiles to PTX that ptxas accepts for every supported
// architecture, and agrees on the CPU interpreter with a plain C++ reference at
// sizes that are not multiples of its tile sizes.
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
#include "checker_only.h"

namespace fs = std::filesystem;
using argus::interp::ArgValue;
using argus::interp::HostTensor;

using argus::testing::readExample;
using argus::testing::readSource;
using argus::testing::withoutLine;

namespace {


std::vector<fs::path> exampleFiles() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(ARGUS_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".ag") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

HostTensor randomTensor(std::vector<int64_t> shape, std::mt19937& rng) {
  HostTensor t = HostTensor::zeros(argus::ir::DType::F32, std::move(shape));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < t.size(); ++i) t.set(i, dist(rng));
  return t;
}

// Compiles an example and returns its only kernel (fails the test on errors).
struct CompiledExample {
  std::unique_ptr<argus::Compilation> compilation;
  const argus::ir::Function* kernel = nullptr;
};

CompiledExample compileExample(const std::string& name) {
  CompiledExample out;
  out.compilation = std::make_unique<argus::Compilation>(
      argus::SourceFile(name, readExample(name)), argus::CompileOptions{});
  const argus::ir::Module& module = out.compilation->ir();
  for (const argus::Diagnostic& d : out.compilation->diagnostics())
    ADD_FAILURE() << name << ": " << d.code() << " " << d.message;
  if (module.functions.size() == 1) out.kernel = module.functions[0].get();
  return out;
}

void expectClose(const HostTensor& got, const std::vector<double>& want, double tolerance,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.get(i), w = want[i];
    if (!(std::fabs(g - w) <= tolerance * (1.0 + std::fabs(w)))) {
      if (++bad <= 5) ADD_FAILURE() << what << "[" << i << "] = " << g << ", expected " << w;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << want.size() << " elements differ";
}

// The architectures an example compiles for: every supported one, or those its
// header names in a line `# arch: sm_90a` (kernels that use Hopper-only instructions).
std::vector<std::tuple<fs::path, std::string>> examplesWithArchs() {
  std::vector<std::tuple<fs::path, std::string>> out;
  for (const fs::path& path : exampleFiles()) {
    std::string only = argus::testing::exampleArch(readSource(path));
    for (const char* arch : {"sm_80", "sm_90", "sm_90a"})
      if (only.empty() || only == arch) out.emplace_back(path, arch);
  }
  return out;
}

class ExamplePtx : public ::testing::TestWithParam<std::tuple<fs::path, std::string>> {};

TEST_P(ExamplePtx, AssemblesWithPtxas) {
  const auto& [path, arch] = GetParam();
  if (!fs::exists("/usr/local/cuda/bin/ptxas")) GTEST_SKIP() << "ptxas is not installed";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  argus::CompileOptions options;
  options.arch = arch;
  argus::Compilation c(argus::SourceFile(path.filename().string(), ss.str()), options);
  const auto& cubin = c.cubin();
  for (const argus::Diagnostic& d : c.diagnostics())
    if (!argus::testing::isTileOrderSeparationLimit(d)) ADD_FAILURE() << d.code() << " " << d.message;
  ASSERT_TRUE(cubin.has_value());
  EXPECT_GT(cubin->size(), 0u);
  EXPECT_NE(c.ptx().find(".target " + arch), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, ExamplePtx,
    ::testing::ValuesIn(examplesWithArchs()),
    [](const auto& info) {
      return std::get<0>(info.param).stem().string() + "_" + std::get<1>(info.param);
    });

TEST(ExampleInterpreter, VaddMatchesReference) {
  CompiledExample ex = compileExample("vadd.ag");
  ASSERT_NE(ex.kernel, nullptr);
  std::mt19937 rng(1);
  for (int64_t n : {1, 1000, 3001}) {
    HostTensor x = randomTensor({n}, rng), y = randomTensor({n}, rng), out = randomTensor({n}, rng);
    std::vector<ArgValue> args = {&x, &y, &out};
    auto error = argus::interp::run(*ex.kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(n));
    for (size_t i = 0; i < want.size(); ++i)
      want[i] = static_cast<float>(static_cast<float>(x.get(i)) + static_cast<float>(y.get(i)));
    expectClose(out, want, 0, "vadd out");
  }
}

TEST(ExampleInterpreter, GeluMatchesReference) {
  CompiledExample ex = compileExample("gelu.ag");
  ASSERT_NE(ex.kernel, nullptr);
  std::mt19937 rng(2);
  const int64_t n = 2500;
  HostTensor x = randomTensor({n}, rng), b = randomTensor({n}, rng), y = randomTensor({n}, rng);
  float s = 1.75f;
  std::vector<ArgValue> args = {&x, &b, &y, s};
  auto error = argus::interp::run(*ex.kernel, args);
  ASSERT_FALSE(error) << error->message;
  std::vector<double> want(static_cast<size_t>(n));
  for (size_t i = 0; i < want.size(); ++i) {
    double v = x.get(i) * s + b.get(i);
    want[i] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  }
  expectClose(y, want, 1e-5, "gelu y");
}

TEST(ExampleInterpreter, SoftmaxMatchesReference) {
  CompiledExample ex = compileExample("softmax.ag");
  ASSERT_NE(ex.kernel, nullptr);
  std::mt19937 rng(3);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 200}, {5, 1024}, {1, 1}}) {
    HostTensor x = randomTensor({m, n}, rng), y = randomTensor({m, n}, rng);
    std::vector<ArgValue> args = {&x, &y};
    auto error = argus::interp::run(*ex.kernel, args);
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

TEST(ExampleInterpreter, SoftmaxRejectsRowsLongerThanTheTile) {
  CompiledExample ex = compileExample("softmax.ag");
  ASSERT_NE(ex.kernel, nullptr);
  std::mt19937 rng(4);
  HostTensor x = randomTensor({2, 1500}, rng), y = randomTensor({2, 1500}, rng);
  std::vector<ArgValue> args = {&x, &y};
  auto error = argus::interp::run(*ex.kernel, args);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("N <= BN"), std::string::npos) << error->message;
}

TEST(ExampleInterpreter, GemmMatchesReference) {
  CompiledExample ex = compileExample("gemm.ag");
  ASSERT_NE(ex.kernel, nullptr);
  std::mt19937 rng(5);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{100, 70, 33}, {64, 64, 16}, {17, 130, 9}}) {
    HostTensor a = randomTensor({m, k}, rng), b = randomTensor({k, n}, rng), c = randomTensor({m, n}, rng);
    std::vector<ArgValue> args = {&a, &b, &c};
    auto error = argus::interp::run(*ex.kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc += a.get(static_cast<size_t>(i * k + kk)) * b.get(static_cast<size_t>(kk * n + j));
        want[static_cast<size_t>(i * n + j)] = acc;
      }
    expectClose(c, want, 1e-5, "gemm C");
  }
}

TEST(ExampleInterpreter, LayernormMatchesReference) {
  CompiledExample ex = compileExample("layernorm.ag");
  ASSERT_NE(ex.kernel, nullptr);
  std::mt19937 rng(6);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 1000}, {3, 1024}, {2, 1}, {5, 333}}) {
    HostTensor x = randomTensor({m, n}, rng), w = randomTensor({n}, rng), b = randomTensor({n}, rng);
    HostTensor y = randomTensor({m, n}, rng);
    // A common offset larger than the spread, as real activations have.
    for (size_t i = 0; i < x.size(); ++i) x.set(i, x.get(i) + 10.0);
    float eps = 1e-5f;
    std::vector<ArgValue> args = {&x, &w, &b, &y, eps};
    auto error = argus::interp::run(*ex.kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want(static_cast<size_t>(m * n));
    for (int64_t r = 0; r < m; ++r) {
      double mean = 0, var = 0;
      for (int64_t c = 0; c < n; ++c) mean += x.get(static_cast<size_t>(r * n + c));
      mean /= static_cast<double>(n);
      for (int64_t c = 0; c < n; ++c) {
        double d = x.get(static_cast<size_t>(r * n + c)) - mean;
        var += d * d;
      }
      var /= static_cast<double>(n);
      for (int64_t c = 0; c < n; ++c) {
        size_t i = static_cast<size_t>(r * n + c);
        want[i] = (x.get(i) - mean) / std::sqrt(var + eps) * w.get(static_cast<size_t>(c)) +
                  b.get(static_cast<size_t>(c));
      }
    }
    expectClose(y, want, 1e-4, "layernorm y");
  }
}

TEST(ExampleInterpreter, LayernormRejectsRowsLongerThanTheTile) {
  CompiledExample ex = compileExample("layernorm.ag");
  ASSERT_NE(ex.kernel, nullptr);
  std::mt19937 rng(7);
  HostTensor x = randomTensor({2, 1500}, rng), w = randomTensor({1500}, rng), b = randomTensor({1500}, rng);
  HostTensor y = randomTensor({2, 1500}, rng);
  std::vector<ArgValue> args = {&x, &w, &b, &y, 1e-5f};
  auto error = argus::interp::run(*ex.kernel, args);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("N <= BN"), std::string::npos) << error->message;
}

}  // namespace
