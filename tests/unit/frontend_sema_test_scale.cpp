// Sema on the examples and on a generated 5,000-line file (the figure is
// printed here and measured by bench/compile_bench; never asserted).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <regex>

#include "frontend_sema_test_util.h"

namespace argus::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> filesIn(const std::string& dir, const std::string& ext) {
  std::vector<fs::path> out;
  fs::path root = fs::path(ARGUS_SOURCE_DIR) / dir;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The golden files (tests/golden/diagnostics, tests/golden/ir) are checked through
// the whole pipeline by tests/golden_runner.cpp; this file keeps sema's own checks.

TEST(SemaExamplesDir, EveryExampleAnalysesCleanly) {
  for (const fs::path& p : filesIn("examples", ".ag")) {
    auto a = analyzeSource(readSourceFile(p.string()), {}, p.filename().string());
    EXPECT_EQ(a->diagText(), "") << p.filename();
    EXPECT_FALSE(a->result.module->functions.empty()) << p.filename();
  }
}

// A generated file of about 5,000 lines: many kernels with loops, branches,
// device calls and views.
std::string generatedSource(int kernels) {
  std::string s =
      "@device\n"
      "def axpy(a, x, y):\n"
      "    t = a * x\n"
      "    return t + y\n\n";
  for (int k = 0; k < kernels; ++k) {
    std::string n = std::to_string(k);
    s += "@kernel(grid=(cdiv(M, BM), cdiv(N, BN)), warps=4)\n";
    s += "def k" + n + "(A: Tensor[f32, (M, K)], B: Tensor[f32, (K, N)], C: Tensor[f32, (M, N)], alpha: f32,\n";
    s += "       BM: const = 32, BN: const = 32, BK: const = 8):\n";
    s += "    a_s = shared(f32, (BM, BK))\n";
    s += "    b_s = shared(f32, (BK, BN))\n";
    s += "    acc = zeros(f32, (BM, BN))\n";
    s += "    total = 0.0\n";
    s += "    for kt in range(cdiv(K, BK)):\n";
    s += "        copy(a_s, A.tile((BM, BK))[program_id(0), kt])\n";
    s += "        copy(b_s, B.tile((BK, BN))[kt, program_id(1)])\n";
    s += "        barrier()\n";
    s += "        acc = dot(a_s, b_s, acc)\n";
    s += "        barrier()\n";
    s += "        if kt % 2 == 0:\n";
    s += "            total = total + 1.0\n";
    s += "        else:\n";
    s += "            total = total * 0.5\n";
    s += "    m = max(acc, axis=1)\n";
    s += "    e = exp(acc - m)\n";
    s += "    r = e / sum(e, axis=1)\n";
    s += "    r = axpy(alpha, r, acc) + total\n";
    s += "    C.tile((BM, BN))[program_id(0), program_id(1)] = where(r > 0.0, r, 0.0)\n\n";
  }
  return s;
}

TEST(SemaScale, FiveThousandLinesAnalyseCleanly) {
  std::string src = generatedSource(220);
  size_t lines = static_cast<size_t>(std::count(src.begin(), src.end(), '\n'));
  ASSERT_GE(lines, 5000u);
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  Analysis a;
  auto t0 = Clock::now();
  a.file = std::make_unique<SourceFile>("generated.ag", src);
  a.ast = parseModule(*a.file, a.diags);
  auto t1 = Clock::now();
  a.result = sema::analyze(*a.ast, *a.file, {}, a.diags);
  auto t2 = Clock::now();
  double total = ms(t0, t2);
  EXPECT_EQ(a.diagText(), "");
  EXPECT_EQ(a.result.module->functions.size(), 220u);
  std::printf("%zu lines: parse %.1f ms, sema %.1f ms\n", lines, ms(t0, t1), ms(t1, t2));
  // Timings are reported here and by bench/compile_bench, never asserted.
  (void)total;
}

}  // namespace
}  // namespace argus::testing
