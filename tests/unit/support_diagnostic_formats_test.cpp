// The message formats of support/diagnostic_kinds.def: placeholders numbered
// 0..n-1 with none skipped, and no kind whose whole message is one argument
// (a bare "{0}" says nothing the registry could check, document or give an
// editor as structure). The kinds listed below still are; the list may only
// shrink.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "support/diagnostic.h"

namespace argus {
namespace {

// Kinds whose message is still built whole by the caller: the parser's syntax
// errors and the interpreter's faults, each with many differently worded
// messages (AG6006/AG6009 take numeric.cpp's own text). Split into kinds with
// formats, as AG3061/AG3062, AG4051/AG4052 and AG6005/AG6030 were, or give them
// one format, as AG6003, AG6007, AG6008 and AG6010 got, then remove them here.
const std::set<std::string> kBareFormatsLeft = {
    "AG1005",  // SyntaxError
    "AG6001", "AG6002", "AG6004", "AG6006", "AG6009",
};

TEST(DiagnosticFormats, PlaceholdersAreNumberedWithoutGaps) {
  const std::regex placeholder(R"(\{(\d+)\})");
  for (const DiagKindInfo& kind : allDiagKinds()) {
    std::string format = kind.format;
    std::set<int> seen;
    for (auto it = std::sregex_iterator(format.begin(), format.end(), placeholder); it != std::sregex_iterator(); ++it)
      seen.insert(std::stoi((*it)[1].str()));
    int expected = 0;
    for (int n : seen) EXPECT_EQ(n, expected++) << kind.code << ": \"" << format << "\" skips a placeholder";
  }
}

TEST(DiagnosticFormats, NoKindIsOneBareArgument) {
  std::set<std::string> bare;
  for (const DiagKindInfo& kind : allDiagKinds())
    if (std::string(kind.format) == "{0}") bare.insert(kind.code);
  for (const std::string& code : bare)
    EXPECT_TRUE(kBareFormatsLeft.count(code)) << code << " has the bare format \"{0}\": give it a message with typed parts";
  for (const std::string& code : kBareFormatsLeft)
    EXPECT_TRUE(bare.count(code)) << code << " has a real format now: remove it from kBareFormatsLeft";
}

}  // namespace
}  // namespace argus
