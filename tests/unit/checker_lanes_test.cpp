// The checker runs a function's analyses in two lanes (checker/checker.cpp),
// each with its own Z3 context. Side by side on two threads or one after the
// other, a file must get the same findings with the same counterexamples: the
// lanes share nothing, and which lane runs an analysis never depends on timing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "checker/checker.h"
#include "driver/compilation.h"
#include "support/render.h"
#include "test_sources.h"

namespace argus {
namespace {

// Every finding as the JSON the agent and the editors get (message, range,
// counterexample, labels, fix-its), in order.
std::vector<std::string> findings(const std::string& path, bool parallel) {
  std::string text = testing::readSource(std::filesystem::path(ARGUS_SOURCE_DIR) / path);
  CompileOptions options;
  if (isSupportedArch(declaredArch(text))) options.arch = declaredArch(text);
  Compilation compilation(SourceFile(path, text), options);
  const ir::Module& module = compilation.ir();
  EXPECT_FALSE(compilation.hasErrors()) << path;
  DiagnosticSink diags;
  checker::Options checkerOptions;
  checkerOptions.parallel = parallel;
  checker::check(module, diags, &compilation.source(), checkerOptions);
  std::vector<std::string> out;
  for (const Diagnostic& d : diags.diagnostics()) out.push_back(diagnosticToJson(d, compilation.source()).dump());
  return out;
}

TEST(CheckerLanes, SideBySideGivesWhatOneAfterTheOtherGives) {
  // Both lanes busy (tags and pipelines beside separation), and findings from each lane.
  for (const char* path : {"examples/gemm_async.ag", "examples/attention.ag", "examples/gemm_wgmma.ag",
                           "tests/checker/sep_gemm_grid_reuses_column_tile.ag",
                           "tests/checker/raw_stale_stage_in_double_buffer.ag",
                           "tests/checker/tags_dot_operand_wrong_k_slice.ag",
                           "tests/checker/async_missing_barrier_after_wait.ag"}) {
    SCOPED_TRACE(path);
    std::vector<std::string> inTurn = findings(path, false);
    EXPECT_EQ(findings(path, true), inTurn);
    EXPECT_EQ(findings(path, true), inTurn);
  }
}

}  // namespace
}  // namespace argus
