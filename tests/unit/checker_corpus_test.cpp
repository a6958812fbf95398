// The checker corpus (tests/checker/*.ag): small kernels with the mistakes
// kernel authors really make. Each file announces its diagnostics inline in
// the golden syntax (tests/golden_runner.cpp):
//   # expect-error@+1:COL-ENDCOL CODE: message
// and, on the line after an expectation, the structured counterexample that
// diagnostic must carry:
//   # expect-counterexample: thread=37 warp=1 lane=5 value=0 iteration=kt=1 element=a_s[3, 7]
// Keys: thread, warp, lane, value, block (integers), iteration (name=value
// pairs joined by ','), and any fact of the counterexample by name (element,
// offset, launch, bank, replay, total, registers); a value with spaces outside
// brackets is written in double quotes (launch="K = 17, program_id(0) = 0").
// A correct kernel says `# expect-no-diagnostics` instead: it must get none at all.
// `# replay: N=64 M=32` sets the runtime sizes the interpreter replay uses
// where the counterexample does not name them.
//
// ARGUS_UPDATE_CORPUS=1 rewrites the expectations from what the compiler does
// now (review the diff before committing).
#include "checker_corpus_util.h"
#include "checker_only.h"

#include <gtest/gtest.h>

namespace argus::corpus {
namespace {

class CheckerCorpus : public ::testing::TestWithParam<fs::path> {};

TEST_P(CheckerCorpus, DiagnosticsAndCounterexamplesMatch) {
  const fs::path& path = GetParam();
  std::string text = readFile(path);
  std::vector<Diagnostic> diags = compileToPtx(path, text);
  if (updateMode()) {
    rewriteExpectations(path, text, diags);
    return;
  }
  SourceFile file(path.filename().string(), text);
  std::vector<Expectation> expected = parseExpectations(text);
  if (expectsNoDiagnostics(text)) {
    ASSERT_TRUE(expected.empty()) << path.filename() << " says expect-no-diagnostics but also expects some";
    for (const Diagnostic& d : diags)
      ADD_FAILURE() << path.filename() << ": a correct kernel got " << fromDiagnostic(d, file).str();
    return;
  }
  ASSERT_FALSE(expected.empty()) << path.filename()
                                 << " announces no diagnostic (a correct kernel says '# expect-no-diagnostics')";
  std::vector<bool> matched(expected.size(), false);
  for (const Diagnostic& d : diags) {
    Expectation actual = fromDiagnostic(d, file);
    bool found = false;
    for (size_t i = 0; i < expected.size() && !found; ++i) {
      if (matched[i] || !sameDiagnostic(expected[i], actual)) continue;
      matched[i] = found = true;
      std::string mismatch = counterexampleMismatch(expected[i], d);
      EXPECT_TRUE(mismatch.empty()) << path.filename() << ": " << actual.str() << "\n  " << mismatch;
    }
    EXPECT_TRUE(found) << path.filename() << ": unexpected diagnostic: " << actual.str();
  }
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_TRUE(matched[i]) << path.filename() << ": expected but not produced: " << expected[i].str();
  // Every checker finding is pinned down by its counterexample, except "cannot prove".
  for (const Expectation& e : expected) {
    if (e.code.rfind("AG20", 0) == 0 && e.code != "AG2004" && e.code != "AG2034") {
      EXPECT_FALSE(e.counterexample.empty()) << path.filename() << ": " << e.str() << " has no expect-counterexample";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CheckerCorpus, ::testing::ValuesIn(corpusFiles()), caseName);

TEST(CheckerCorpusSuite, HasThirtyKernels) { EXPECT_GE(corpusFiles().size(), 30u); }

// Every example kernel is correct: it checks (and compiles) with no error and no warning
// but the documented "cannot prove" of a grouped tile order's separation for large
// launches (performance notes, such as AG5022 on the agent's naive starting kernel, may remain).
class ExamplesClean : public ::testing::TestWithParam<fs::path> {};

TEST_P(ExamplesClean, NoDiagnostics) {
  const fs::path& path = GetParam();
  std::vector<Diagnostic> diags = compileToPtx(path, readFile(path));
  SourceFile file(path.filename().string(), readFile(path));
  for (const Diagnostic& d : diags)
    if (d.severity != argus::Severity::Note && !argus::testing::isTileOrderSeparationLimit(d)) ADD_FAILURE() << path << ": " << fromDiagnostic(d, file).str();
}

INSTANTIATE_TEST_SUITE_P(Examples, ExamplesClean, ::testing::ValuesIn(exampleFiles()), caseName);

}  // namespace
}  // namespace argus::corpus
