// Sema never crashes and never emits IR that fails verification, whatever
// the input: deterministic mutations of the examples and golden files.
#include <filesystem>
#include <random>

#include "frontend_sema_test_util.h"

namespace argus::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  for (const char* dir : {"examples", "tests/golden/ir", "tests/golden/diagnostics"}) {
    fs::path root = fs::path(ARGUS_SOURCE_DIR) / dir;
    if (!fs::exists(root)) continue;
    for (const auto& e : fs::directory_iterator(root))
      if (e.path().extension() == ".ag") out.push_back(readSourceFile(e.path().string()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Pieces that tend to reach unusual corners of sema.
const char* kFragments[] = {
    "(", ")", "[", "]", ",", ":", "0", "1", "-1", "64", "48", "1.5", "x", "t", "N", "acc", "f16", "i32",
    "load(", "store(", "dot(", "zeros(f32, (64,))", ".tile((64,))", "[0]", "[0, 0]", " + ", " / ", " // ",
    " and ", "not ", "where(", "sum(", ", axis=1)", "cast(", "program_id(0)", "for i in range(4):\n        ",
    "if t > 0.0:\n        ", "\n    ", "return ", "@device\ndef g(v):\n    return v\n", "shared(f32, (2, 64))",
    "max(", "inf", "-inf", "require(", "barrier()", "copy(", "full((64,), 1.0)", "iota((8, 8), 1)",
};

TEST(SemaFuzz, MutatedSourcesNeverCrashAndAlwaysVerify) {
  std::vector<std::string> inputs = seeds();
  ASSERT_FALSE(inputs.empty());
  std::mt19937 rng(12345);
  int iterations = 0, semaErrors = 0;
  size_t verified = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string src = inputs[rng() % inputs.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits && !src.empty(); ++k) {
      size_t pos = rng() % src.size();
      switch (rng() % 3) {
        case 0: src.erase(pos, 1 + rng() % 8); break;
        case 1: src.insert(pos, kFragments[rng() % (sizeof kFragments / sizeof *kFragments)]); break;
        default: {
          size_t from = rng() % src.size();
          src.insert(pos, src.substr(from, 1 + rng() % 24));
        }
      }
    }
    auto a = analyzeSource(src, {}, "fuzz.ag");
    for (const auto& fn : a->result.module->functions) {
      std::vector<std::string> problems = ir::verify(*fn);
      EXPECT_TRUE(problems.empty()) << problems.front() << "\n--- source:\n" << src;
    }
    const Diagnostic* internal = a->find("AG3045");
    EXPECT_EQ(internal, nullptr) << (internal ? internal->message : "") << "\n--- source:\n" << src;
    verified += a->result.module->functions.size();
    semaErrors += a->diags.hasErrors() && a->diags.diagnostics()[0].code()[2] >= '3';
    ++iterations;
  }
  EXPECT_EQ(iterations, 1500);
  std::printf("%zu kernels verified, %d inputs with sema errors\n", verified, semaErrors);
}

}  // namespace
}  // namespace argus::testing
