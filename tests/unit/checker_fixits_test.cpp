// Every fix-it the checker offers in the corpus (tests/checker) and the golden
// files, applied to its kernel, removes the error it is attached to and brings
// no new one: re-checked as argusc would, the fixed kernel has a subset of the
// original's other errors. The fix-its offered are those that survived
// verification (driver/fixit_check.h: the kernel with every suggested edit
// checks clean and the interpreter agrees with its synchronous-copy run);
// driver_fixit_check_test.cpp tests the verification itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "checker_corpus_util.h"
#include "driver/compilation.h"

namespace argus::corpus {
namespace {

// Error codes with their counts.
std::map<std::string, int> errorCodes(const std::vector<Diagnostic>& diags) {
  std::map<std::string, int> codes;
  for (const Diagnostic& d : diags)
    if (d.severity == Severity::Error) ++codes[d.code()];
  return codes;
}

std::vector<fs::path> filesWithFixits() {
  std::vector<fs::path> files = corpusFiles();
  for (const auto& entry : fs::directory_iterator(fs::path(ARGUS_SOURCE_DIR) / "tests" / "golden" / "diagnostics"))
    if (entry.path().extension() == ".ag") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<fs::path> out;
  for (const fs::path& f : files) {
    std::string text = readFile(f);
    // The checker's fix-its insert barriers and waits, for the synchronization
    // errors: the files that expect one of those.
    for (const char* code : {"AG2001", "AG2002", "AG2003", "AG2005", "AG2006"})
      if (text.find(std::string(" ") + code + ":") != std::string::npos) {
        out.push_back(f);
        break;
      }
  }
  return out;
}

class CheckerFixits : public ::testing::TestWithParam<fs::path> {};

TEST_P(CheckerFixits, AppliedFixitRemovesItsErrorAndAddsNone) {
  const fs::path& path = GetParam();
  std::string text = readFile(path);
  std::vector<Diagnostic> original = compileToPtx(path, text);
  std::map<std::string, int> before = errorCodes(original);
  int offered = 0;
  for (const Diagnostic& d : original) {
    std::string code = d.code();
    if (code.rfind("AG20", 0) != 0 || d.severity != Severity::Error) continue;
    for (const FixIt& fix : d.fixits) {
      ++offered;
      SCOPED_TRACE(code + " at offset " + std::to_string(d.range.begin) + ": " + fix.message);
      ASSERT_LE(fix.range.end, text.size());
      std::string fixed = text.substr(0, fix.range.begin) + fix.replacement + text.substr(fix.range.end);
      std::map<std::string, int> after = errorCodes(compileToPtx(path, fixed));
      std::map<std::string, int> allowed = before;
      --allowed[code];
      for (const auto& [c, n] : after)
        EXPECT_LE(n, allowed[c]) << "after the fix-it, " << n << " x " << c << " (the original had " << before[c]
                                 << ")\n--- fixed kernel ---\n" << fixed;
    }
  }
  if (offered == 0) GTEST_SKIP() << "no checker fix-it in this file";
}

INSTANTIATE_TEST_SUITE_P(CorpusAndGolden, CheckerFixits, ::testing::ValuesIn(filesWithFixits()), caseName);

}  // namespace
}  // namespace argus::corpus
