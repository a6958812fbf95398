// Resource ceilings for two shortcuts that decide the same thing with less
// search (both checked to change no finding: goldens and corpus unchanged):
// the dead-access test asks the loops' first iterations first, where every
// unknown is a number; the tag flow does not ask a persistent loop whether its
// tags stay unchanged when the body's tags depend on the iteration.
#include <gtest/gtest.h>

#include <string>

#include "checker/checker.h"
#include "driver/compilation.h"
#include "tests/unit/checker_corpus_util.h"

namespace argus {
namespace {

const checker::Profile::Phase* phaseOf(const std::string& path, const std::string& name, checker::Profile& profile) {
  const std::string source = corpus::readFile(std::string(ARGUS_SOURCE_DIR) + "/" + path);
  Compilation compilation(SourceFile(path, source), CompileOptions{});
  EXPECT_FALSE(compilation.hasErrors());
  DiagnosticSink diags;
  checker::Options options;
  options.profile = &profile;
  checker::check(compilation.ir(), diags, &compilation.source(), options);
  EXPECT_FALSE(diags.hasErrors());
  for (const auto& phase : profile.phases)
    if (phase.name == name) return &phase;
  return nullptr;
}

// Before: 154 000 (gemm_bias_gelu) and 188 000 (moe_gemm_persistent) units, most of
// them a free iteration of the persistent loop through the grouped order's
// remainder by its last group's rows; now 3 000 to 4 000.
TEST(CheapFirst, DeadAccessAsksTheFirstIterationsFirst) {
  for (const char* path : {"examples/gemm_bias_gelu.ag", "examples/moe_gemm_persistent.ag"}) {
    SCOPED_TRACE(path);
    checker::Profile profile;
    const checker::Profile::Phase* invariants = phaseOf(path, "invariants", profile);
    ASSERT_NE(invariants, nullptr);
    EXPECT_GT(invariants->queries, 0);
    EXPECT_LT(invariants->units, 40'000u);
  }
}

// Before: 710 000 units of gemm_nn's tag flow, 350 000 of them refuting "unchanged"
// for its persistent loop; now 211 000.
TEST(CheapFirst, TagFlowSkipsTheUnchangedGuessForIterationDependentTags) {
  checker::Profile profile;
  const checker::Profile::Phase* tags = phaseOf("examples/gemm_nn.ag", "tags", profile);
  ASSERT_NE(tags, nullptr);
  EXPECT_GT(tags->queries, 0);
  EXPECT_LT(tags->units, 400'000u);
}

}  // namespace
}  // namespace argus
