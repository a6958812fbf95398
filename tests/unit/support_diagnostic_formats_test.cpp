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

// Kinds whose message is still built whole by the caller. None is left: the
// last ones were split into kinds with formats (AG3061/AG3062, AG4051/AG4052,
// AG6005/AG6030, the syntax errors AG1005 and AG1016-AG1028, the interpreter's
// faults AG6001-AG6009 and AG6031-AG6061) or given one format (AG6003, AG6007,
// AG6008, AG6010). Keep it that way.
const std::set<std::string> kBareFormatsLeft = {};

TEST(DiagnosticFormats, PlaceholdersAreNumberedWithoutGaps) {
  const std::regex placeholder(R"(\{(\d+)(?::\w*)?\})");
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

TEST(DiagnosticFormats, ArgumentKindsAreKnown) {
  const std::regex typed(R"(\{\d+:(\w*)\})");
  const std::set<std::string> known = {"name", "int", "type", "shape", "code"};
  for (const DiagKindInfo& kind : allDiagKinds()) {
    std::string format = kind.format;
    for (auto it = std::sregex_iterator(format.begin(), format.end(), typed); it != std::sregex_iterator(); ++it)
      EXPECT_TRUE(known.count((*it)[1].str())) << kind.code << ": unknown argument kind '" << (*it)[1].str() << "'";
  }
}

TEST(DiagnosticFormats, TypedArgumentsAreCheckedAndRendered) {
  // AG4003: "{0} extent {1:int} is not a power of two; the nearest are {2:int} and {3:int}".
  const DiagId power = DiagId::NotPowerOfTwo;
  ASSERT_EQ(diagArgumentKinds(power).size(), 4u);
  EXPECT_EQ(diagArgumentKinds(power)[0], DiagArgKind::Prose);
  EXPECT_EQ(diagArgumentKinds(power)[1], DiagArgKind::Integer);
  EXPECT_FALSE(diagArgumentProblem(power, {"tile", "48", "32", "64"}));
  EXPECT_TRUE(diagArgumentProblem(power, {"tile", "forty-eight", "32", "64"}));
  EXPECT_TRUE(diagArgumentProblem(power, {"tile", "48", "32"}));
  EXPECT_TRUE(diagArgumentProblem(power, {"tile", "48", "32", "64", "128"}));
  EXPECT_EQ(plainFormat(power), "{0} extent {1} is not a power of two; the nearest are {2} and {3}");
  EXPECT_EQ(formatMessage("{0:name} is {1:int} or {1}", {"x", "7"}), "x is 7 or 7");
}

}  // namespace
}  // namespace argus
