// Asynchronous copies and swizzled shared memory end to end: examples/gemm_async.ag
// agrees with a C++ reference on the CPU interpreter; the interpreter reports a
// read that runs before the copy has landed or been made visible; the PTX has
// cp.async (zero-fill form), commit and wait, the swizzle, the unaligned
// fallback, and ptxas accepts it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "driver/compilation.h"
#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "test_sources.h"

namespace fs = std::filesystem;
using argus::interp::ArgValue;
using argus::interp::HostTensor;

using argus::testing::readExample;
using argus::testing::readSource;
using argus::testing::readTestKernel;
using argus::testing::withoutLine;

namespace {



HostTensor randomTensor(std::vector<int64_t> shape, std::mt19937& rng) {
  HostTensor t = HostTensor::zeros(argus::ir::DType::F32, std::move(shape));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < t.size(); ++i) t.set(i, dist(rng));
  return t;
}

struct Compiled {
  std::unique_ptr<argus::Compilation> compilation;
  const argus::ir::Function* kernel = nullptr;
};

// Sema only (the interpreter tests run kernels the checker would reject).
Compiled compile(const std::string& source, const std::string& arch = "sm_80") {
  Compiled out;
  argus::CompileOptions options;
  options.arch = arch;
  out.compilation = std::make_unique<argus::Compilation>(argus::SourceFile("async.ag", source), options);
  const argus::ir::Module& module = out.compilation->ir();
  if (module.functions.size() == 1) out.kernel = module.functions[0].get();
  return out;
}

std::string describe(argus::Compilation& c) {
  std::string s;
  for (const argus::Diagnostic& d : c.diagnostics()) s += std::string(d.code()) + ": " + d.message + "\n";
  return s;
}

std::vector<double> reference(const HostTensor& a, const HostTensor& b, int64_t m, int64_t n, int64_t k) {
  std::vector<double> want(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        acc += a.get(static_cast<size_t>(i * k + kk)) * b.get(static_cast<size_t>(kk * n + j));
      want[static_cast<size_t>(i * n + j)] = acc;
    }
  return want;
}

TEST(AsyncCopies, GemmAsyncMatchesReferenceOnTheInterpreter) {
  Compiled c = compile(readExample("gemm_async.ag"));
  ASSERT_NE(c.kernel, nullptr) << describe(*c.compilation);
  ASSERT_FALSE(c.compilation->hasErrors()) << describe(*c.compilation);
  std::mt19937 rng(11);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{100, 70, 33}, {64, 64, 16}, {17, 130, 9}, {64, 64, 64}}) {
    HostTensor a = randomTensor({m, k}, rng), b = randomTensor({k, n}, rng), out = randomTensor({m, n}, rng);
    std::vector<ArgValue> args = {&a, &b, &out};
    auto error = argus::interp::run(*c.kernel, args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want = reference(a, b, m, n, k);
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (!(std::fabs(out.get(i) - want[i]) <= 1e-5 * (1.0 + std::fabs(want[i])))) ++bad;
    EXPECT_EQ(bad, 0u) << m << "x" << n << "x" << k;
  }
}

std::optional<argus::interp::RunError> runGemmVariant(const std::string& source) {
  Compiled c = compile(source);
  EXPECT_NE(c.kernel, nullptr) << describe(*c.compilation);
  if (!c.kernel) return std::nullopt;
  std::mt19937 rng(12);
  HostTensor a = randomTensor({64, 48}, rng), b = randomTensor({48, 64}, rng), out = randomTensor({64, 64}, rng);
  std::vector<ArgValue> args = {&a, &b, &out};
  return argus::interp::run(*c.kernel, args);
}

TEST(AsyncCopies, InterpreterReportsAReadBeforeTheWait) {
  auto error = runGemmVariant(withoutLine(readExample("gemm_async.ag"), "wait_group(1)"));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, argus::DiagId::RunAsyncCopyPendingRead);
  EXPECT_NE(error->message.find("before the async copy completed"), std::string::npos) << error->message;
  EXPECT_NE(error->message.find("wait_group(1) and barrier()"), std::string::npos) << error->message;
  ASSERT_FALSE(error->labels.empty());
}

TEST(AsyncCopies, InterpreterReportsAMissingBarrierAfterTheWait) {
  auto error = runGemmVariant(withoutLine(readExample("gemm_async.ag"), "barrier()", 0));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, argus::DiagId::RunAsyncCopyUnsyncedRead);
  EXPECT_NE(error->message.find("before the async copy completed"), std::string::npos) << error->message;
  EXPECT_NE(error->message.find("add barrier() after the wait_group"), std::string::npos) << error->message;
}

TEST(AsyncCopies, InterpreterReportsACopyOverDataStillBeingRead) {
  // Without the trailing barrier, iteration kt + 1 copies into the stage other threads still read.
  auto error = runGemmVariant(withoutLine(readExample("gemm_async.ag"), "barrier()", 1));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, argus::DiagId::RunCopyAfterReadRace);
  EXPECT_NE(error->message.find("copy_async"), std::string::npos) << error->message;
}

TEST(AsyncCopies, KernelEndLandsPendingCopies) {
  Compiled c = compile(readTestKernel("driver_async/copy_pending_at_kernel_end.ag"));
  ASSERT_NE(c.kernel, nullptr) << describe(*c.compilation);
  HostTensor x = HostTensor::zeros(argus::ir::DType::F16, {8, 32}), y = HostTensor::zeros(argus::ir::DType::F16, {8, 32});
  for (size_t i = 0; i < x.size(); ++i) x.set(i, static_cast<double>(i % 17) - 8.0);
  std::vector<ArgValue> args = {&x, &y};
  auto error = argus::interp::run(*c.kernel, args);
  ASSERT_FALSE(error) << error->message;
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y.get(i), 2.0 * x.get(i)) << i;
}

class AsyncPtx : public ::testing::TestWithParam<std::string> {};

TEST_P(AsyncPtx, GemmAsyncHasCpAsyncCommitWaitAndSwizzle) {
  Compiled c = compile(readExample("gemm_async.ag"), GetParam());
  const std::string& ptx = c.compilation->ptx();
  ASSERT_FALSE(c.compilation->hasErrors()) << describe(*c.compilation);
  // 16-byte chunks of f32 rows, with the src-size operand of the zero-fill form.
  EXPECT_TRUE(std::regex_search(ptx, std::regex(R"(cp\.async\.cg\.shared\.global \[%r[0-9]+\], \[%rd[0-9]+\], 16, %r[0-9]+;)")))
      << ptx;
  EXPECT_NE(ptx.find("cp.async.commit_group;"), std::string::npos);
  EXPECT_NE(ptx.find("cp.async.wait_group 1;"), std::string::npos);
  EXPECT_NE(ptx.find("xor.b"), std::string::npos) << "the swizzle of a_s";
  // The fallback for unaligned rows: plain predicated global loads and shared stores.
  EXPECT_NE(ptx.find("ld.global.b32"), std::string::npos);
  if (!fs::exists(argus::CompileOptions{}.ptxasPath)) GTEST_SKIP() << "ptxas is not installed";
  const auto& cubin = c.compilation->cubin();
  ASSERT_TRUE(cubin.has_value()) << describe(*c.compilation);
}

TEST_P(AsyncPtx, SmallRowsUseCaWithEightBytes) {
  Compiled c = compile(readTestKernel("driver_async/eight_byte_rows.ag"), GetParam());
  const std::string& ptx = c.compilation->ptx();
  ASSERT_FALSE(c.compilation->hasErrors()) << describe(*c.compilation);
  EXPECT_NE(ptx.find("cp.async.ca.shared.global"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(", 8, %r"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("cp.async.wait_group 0;"), std::string::npos);
  if (!fs::exists(argus::CompileOptions{}.ptxasPath)) GTEST_SKIP() << "ptxas is not installed";
  ASSERT_TRUE(c.compilation->cubin().has_value()) << describe(*c.compilation);
}

INSTANTIATE_TEST_SUITE_P(Targets, AsyncPtx, ::testing::Values("sm_80", "sm_90", "sm_90a"));

}  // namespace
