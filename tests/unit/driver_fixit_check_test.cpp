// Checker fix-its are verified before they are offered (driver/fixit_check.h): the
// stale-stage fix-its that issue 22 found wrong are withheld, with the reason; fix-its that
// hold are kept; and the interpreter's half tells a kernel whose copies land too late from
// the same kernel with synchronous copies.
#include <gtest/gtest.h>

#include <string>

#include "driver/compilation.h"
#include "driver/fixit_check.h"
#include "test_sources.h"

namespace argus {
namespace {

std::string corpusFile(const std::string& name) {
  return testing::readSource(std::string(ARGUS_SOURCE_DIR) + "/tests/checker/" + name);
}

std::vector<Diagnostic> checked(const std::string& name, bool verify = true) {
  CompileOptions options;
  options.verifyFixits = verify;
  Compilation c(SourceFile(name, corpusFile(name)), options);
  c.check();
  return c.diagnostics();
}

TEST(FixitCheck, AStaleStageWaitFixitIsWithheldAndSaysWhy) {
  // Waiting for the stale stage's copy silences AG2005, but the dot still pairs the wrong K
  // slices (AG2039): the edit would hand the user a kernel that computes something else.
  int offeredUnverified = 0;
  for (const Diagnostic& d : checked("async_stale_pipeline_stage.ag", false))
    if (std::string(d.code()) == "AG2005") offeredUnverified += static_cast<int>(d.fixits.size());
  ASSERT_GT(offeredUnverified, 0) << "the checker no longer suggests the wait: the test proves nothing";
  int withheld = 0;
  for (const Diagnostic& d : checked("async_stale_pipeline_stage.ag")) {
    if (std::string(d.code()) != "AG2005") continue;
    EXPECT_TRUE(d.fixits.empty());
    for (const std::string& note : d.notes)
      if (note.find("withheld: the kernel it gives (with the other fix-its applied) still has errors: AG2039") !=
          std::string::npos)
        ++withheld;
  }
  EXPECT_EQ(withheld, offeredUnverified);
}

TEST(FixitCheck, ABarrierFixitThatHoldsIsKept) {
  int kept = 0;
  for (const Diagnostic& d : checked("raw_gemm_no_barrier_after_copies.ag")) {
    kept += static_cast<int>(d.fixits.size());
    for (const std::string& note : d.notes) EXPECT_EQ(note.find("withheld"), std::string::npos) << note;
  }
  EXPECT_GT(kept, 0);
}

TEST(FixitCheck, TheInterpreterTellsLateCopiesFromSynchronousOnes) {
  // The stale-stage kernel, unchecked: its copies land after the reads that need them.
  CompileOptions options;
  Compilation stale(SourceFile("stale.ag", corpusFile("async_stale_pipeline_stage.ag")), options);
  std::optional<std::string> objection = differsFromSynchronousCopies(stale.ir(), {{"K", 64}});
  ASSERT_TRUE(objection.has_value());
  EXPECT_NE(objection->find("K = 64"), std::string::npos) << *objection;
  // A correct pipeline computes the same either way.
  Compilation good(SourceFile("gemm_pipelined.ag",
                              testing::readSource(std::string(ARGUS_SOURCE_DIR) + "/examples/gemm_pipelined.ag")),
                   options);
  EXPECT_EQ(differsFromSynchronousCopies(good.ir(), {}), std::nullopt);
}

}  // namespace
}  // namespace argus
