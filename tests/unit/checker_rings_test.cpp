// Stage rings in the tag flow and the built-in "dot operands agree in K"
// (AG2035): the compiler's pipelined loops and hand-written rings of 2 to 8
// stages are summarized (assertions in them are proven, not "cannot prove"),
// a wrong stage is still refuted, the built-in check reports a definite
// mismatch with a counterexample whose thread really holds the accumulator
// element, and stays silent where the origins are unknown.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "checker/checker.h"
#include "driver/compilation.h"
#include "ir/ir.h"
#include "checker_only.h"
#include "ir/ops.h"
#include "test_sources.h"

namespace fs = std::filesystem;
using argus::Compilation;
using argus::CompileOptions;
using argus::Diagnostic;
using argus::DiagnosticSink;
using argus::SourceFile;
using argus::testing::Checked;
using argus::testing::checkOnly;
using argus::testing::describe;
using argus::testing::readTestKernel;
using argus::testing::withCode;

namespace {

std::unique_ptr<Checked> check(const std::string& source) { return checkOnly(source, "ring.ag"); }

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// examples/gemm_tc.ag with `stages` stages and the operand assertion in the loop.
std::string pipelinedGemm(int stages, const std::string& bSlice = "kt") {
  std::string s = argus::testing::readExample("gemm_tc.ag");
  s = replaceAll(s, "STAGES: const = 4", "STAGES: const = " + std::to_string(stages));
  s = replaceAll(s, "B.tile((BK, BN))[kt, pn]", "B.tile((BK, BN))[" + bSlice + ", pn]");
  return replaceAll(s, "        acc = dot(a_s, b_s, acc)",
                    "        assert a_s.origin.col == b_s.origin.row\n        acc = dot(a_s, b_s, acc)");
}

// A hand-written cp.async ring of `stages` stages: stage kt % S holds K slice kt;
// the dot reads a_s[kt % S] and b_s[<bStage>].
std::string handWrittenRing(int stages, const std::string& bStage, bool assertion) {
  std::string S = std::to_string(stages), ahead = std::to_string(stages - 1);
  std::string s = readTestKernel("checker_rings/cp_async_ring_head.ag");
  for (int p = 0; p + 1 < stages; ++p) {
    std::string P = std::to_string(p);
    s += "    copy_async(a_s[" + P + "], A.tile((BM, BK))[program_id(0), " + P + "])\n";
    s += "    copy_async(b_s[" + P + "], B.tile((BK, BN))[" + P + ", program_id(1)])\n";
    s += "    commit_group()\n";
  }
  s += R"(    for kt in range(n):
        wait_group(0)
        barrier()
        if kt + AHEAD < n:
            copy_async(a_s[(kt + AHEAD) % S], A.tile((BM, BK))[program_id(0), kt + AHEAD])
            copy_async(b_s[(kt + AHEAD) % S], B.tile((BK, BN))[kt + AHEAD, program_id(1)])
        commit_group()
)";
  if (assertion) s += "        assert a_s[kt % S].origin.col == b_s[BSTAGE].origin.row\n";
  s += R"(        acc = dot(a_s[kt % S], b_s[BSTAGE], acc)
    C.tile((BM, BN))[program_id(0), program_id(1)] = acc
)";
  s = replaceAll(s, "BSTAGE", bStage);
  s = replaceAll(s, "AHEAD", ahead);
  s = replaceAll(s, "(S,", "(" + S + ",");
  return replaceAll(s, "% S", "% " + S);
}

TEST(CheckerRings, PipelinedLoopsOfTwoToEightStagesAreProven) {
  for (int stages = 2; stages <= 8; ++stages) {
    auto c = check(pipelinedGemm(stages));
    EXPECT_TRUE(argus::testing::beyondTileOrderLimit(c->diags).empty()) << stages << " stages:\n" << describe(c->diags);
  }
}

// Hand-written rings of 2 to 5 stages are proven: tests/checker/tags_ring_{two,three,four,five}_stages_proven_clean.ag.

TEST(CheckerRings, AWrongStageIsRefutedNeverAccepted) {
  // A hand-written ring: the user's assertion on the mismatched stage is refuted (AG2010, the built-in defers to
  // it), tests/checker/tags_ring_b_stage_ahead_assertion_refuted.ag; without it the built-in reports the same
  // mismatch (AG2035), tests/checker/dot_k_ring_four_stages_b_stage_ahead.ag.
  // The compiler's ring carrying the wrong slice, in every stage count.
  for (int stages : {3, 5}) {
    auto p = check(replaceAll(pipelinedGemm(stages, "kt + 1"), "        assert a_s.origin.col == b_s.origin.row\n", ""));
    EXPECT_EQ(withCode(p->diags, "AG2035").size(), 1u) << stages << " stages:\n" << describe(p->diags);
  }
}

TEST(CheckerRings, CounterexampleThreadHoldsTheAccumulatorElement) {
  auto c = check(handWrittenRing(3, "(kt + 1) % S", false));
  auto errors = withCode(c->diags, "AG2035");
  ASSERT_EQ(errors.size(), 1u) << describe(c->diags);
  const Diagnostic& d = *errors[0];
  ASSERT_TRUE(d.counterexample && d.counterexample->thread && d.counterexample->value);
  std::string product;
  int64_t aK = -1, bK = -1;
  for (const auto& [key, value] : d.counterexample->facts) {
    if (key == "product") product = value;
    if (key == "a_k") aK = std::stoll(value);
    if (key == "b_k") bK = std::stoll(value);
  }
  EXPECT_NE(aK, bK);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(product, m, std::regex(R"(acc\[([0-9]+), ([0-9]+)\])"))) << product;
  const argus::ir::Function& fn = *c->compilation->ir().functions.at(0);
  const argus::ir::Type* acc = nullptr;
  std::function<void(const argus::ir::Block&)> find = [&](const argus::ir::Block& block) {
    for (const auto& op : block.ops) {
      if (op->kind == argus::ir::OpKind::Dot) acc = &fn.values[argus::ir::DotOp(*op).acc()].type;
      for (const argus::ir::Block& region : op->regions) find(region);
    }
  };
  find(fn.body);
  ASSERT_TRUE(acc);
  auto dist = argus::ir::Distribution::of(acc->layout, fn.numWarps);
  EXPECT_EQ(dist.valueIndexOf(*d.counterexample->thread, {std::stoll(m[1]), std::stoll(m[2])}), *d.counterexample->value);
  ASSERT_EQ(d.counterexample->iteration.size(), 1u);
  EXPECT_EQ(d.counterexample->iteration[0].first, "kt");
}

TEST(CheckerRings, TransposedOperandAgreesOrNot) {
  const std::string kernel = readTestKernel("checker_rings/transposed_k_operand.ag");
  auto good = check(replaceAll(kernel, "KCOL", "0"));
  EXPECT_TRUE(good->diags.diagnostics().empty()) << describe(good->diags);
  auto bad = check(replaceAll(kernel, "KCOL", "1"));
  auto errors = withCode(bad->diags, "AG2035");
  ASSERT_EQ(errors.size(), 1u) << describe(bad->diags);
  std::string aK, bK;
  for (const auto& [key, value] : errors[0]->counterexample->facts) {
    if (key == "a_k") aK = value;
    if (key == "b_k") bK = value;
  }
  EXPECT_EQ(std::stoll(bK) - std::stoll(aK), 64) << "k_s is one column tile (64) to the right";
}

// Unknown origins: the built-in stays silent, an assertion says "cannot prove":
// tests/golden/diagnostics/checker_dot_unknown_origins.ag.

}  // namespace
