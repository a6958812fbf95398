// The order of the checker's findings (checker/checker.cpp, orderFindings):
// source order, and at one point the finding with the smallest launch first,
// so that the first error a reader (or the mutation harness) meets is the
// root cause with the witness easiest to replay. The kernels are mutants of
// examples/softmax_bf16.ag, whose row index moved to the column axis.
#include <gtest/gtest.h>

#include "checker_corpus_util.h"
#include "checker_only.h"

namespace argus {
namespace {

using testing::checkOnly;
using testing::describe;

std::string softmaxWith(const std::string& from, const std::string& to) {
  std::string source = corpus::readFile(std::string(ARGUS_SOURCE_DIR) + "/examples/softmax_bf16.ag");
  size_t at = source.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) source.replace(at, from.size(), to);
  return source;
}

std::string launchOf(const Diagnostic& d) {
  if (d.counterexample)
    for (const auto& [name, value] : d.counterexample->facts)
      if (name == "launch") return value;
  return "";
}

std::vector<const Diagnostic*> errors(const DiagnosticSink& diags) {
  std::vector<const Diagnostic*> out;
  for (const Diagnostic& d : diags.diagnostics())
    if (d.severity == Severity::Error) out.push_back(&d);
  return out;
}

// Stored at [0, r]: no row but the first is written (AG2040, at 2 x 2), and
// only a launch of millions of rows, where r * 4096 wraps around in i32,
// lands an element on another's place. The small witness comes first.
TEST(CheckerFindingOrder, AtOnePointTheSmallestLaunchComesFirst) {
  auto checked = checkOnly(softmaxWith("y.tile((BLOCK,))[r, 0]", "y.tile((BLOCK,))[0, r]"), "softmax_bf16.ag");
  std::vector<const Diagnostic*> found = errors(checked->diags);
  ASSERT_GE(found.size(), 2u) << describe(checked->diags);
  EXPECT_STREQ(found[0]->code(), "AG2040") << describe(checked->diags);
  EXPECT_EQ(launchOf(*found[0]), "M = 2, N = 2") << describe(checked->diags);
  for (const Diagnostic* d : found) EXPECT_EQ(d->range.begin, found[0]->range.begin) << describe(checked->diags);
}

// Loaded at [0, r]: the load (line 11) reads nothing in block 1 (AG2042), and
// the store (line 13) spoils only at a launch of millions of rows. The load,
// the cause, comes first, though the store's check ran first.
TEST(CheckerFindingOrder, FindingsComeInSourceOrder) {
  auto checked = checkOnly(softmaxWith("x.tile((BLOCK,))[r, 0]", "x.tile((BLOCK,))[0, r]"), "softmax_bf16.ag");
  std::vector<const Diagnostic*> found = errors(checked->diags);
  ASSERT_GE(found.size(), 2u) << describe(checked->diags);
  EXPECT_STREQ(found[0]->code(), "AG2042") << describe(checked->diags);
  for (size_t i = 1; i < checked->diags.diagnostics().size(); ++i)
    EXPECT_LE(checked->diags.diagnostics()[i - 1].range.begin, checked->diags.diagnostics()[i].range.begin)
        << describe(checked->diags);
}

}  // namespace
}  // namespace argus
