// Tags and tag assertions: correct choreographies are proven, wrong ones get a
// counterexample that really fails when replayed (with the thread distribution
// of ir/types.h, with the view arithmetic, or by running the interpreter on
// inputs whose values encode their coordinates), and what the checker cannot
// describe is "cannot prove", never "holds".
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "checker/checker.h"
#include "driver/compilation.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "runtime/interp/interpreter.h"
#include "checker_only.h"
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
using argus::testing::withCode;
using argus::ir::Distribution;
using argus::ir::Layout;

using argus::testing::readExample;
using argus::testing::readSource;
using argus::testing::readTestKernel;
using argus::testing::withoutLine;

namespace {


std::unique_ptr<Checked> check(const std::string& source) { return checkOnly(source, "test.ag"); }

std::vector<std::string> facts(const Diagnostic& d, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& [key, value] : d.counterexample->facts)
    if (key == name) out.push_back(value);
  return out;
}

std::vector<int64_t> numbersIn(const std::string& text, const std::string& pattern) {
  std::smatch m;
  std::vector<int64_t> out;
  if (!std::regex_search(text, m, std::regex(pattern))) return out;
  for (size_t i = 1; i < m.size(); ++i) out.push_back(std::stoll(m[i]));
  return out;
}

std::string slice(const Checked& c, const Diagnostic& d) { return std::string(c.compilation->source().slice(d.range)); }

// A double buffer of tagged rows whose assertion is `condition`.
std::string doubleBuffer(const std::string& condition) {
  std::string s = readTestKernel("checker_tags/double_buffer_stage_assertion.ag");
  return s.replace(s.find("STAGE_CONDITION"), 15, condition);
}

TEST(CheckerTags, ExamplesAndCorrectChoreographiesAreProven) {
  for (const char* name : {"gemm.ag", "softmax.ag"}) {
    std::string source = readSource(fs::path(ARGUS_SOURCE_DIR) / "examples" / name);
    ASSERT_NE(source.find("assert "), std::string::npos) << name << " documents its choreography with assertions";
    auto c = check(source);
    EXPECT_TRUE(c->diags.diagnostics().empty()) << name << "\n" << describe(c->diags);
  }
  // The correct double buffer: tests/checker/tags_double_buffer_stage_and_origin_clean.ag.
}

// A refuted assertion on a tile's columns: tests/checker/tags_tile_column_assertion_fails.ag.

TEST(CheckerTags, DotPairingCounterexampleReplaysWithTheViews) {
  auto c = check(readSource(fs::path(ARGUS_SOURCE_DIR) / "tests/golden/diagnostics/tag_gemm_swapped_index.ag"));
  auto errors = withCode(c->diags, "AG2010");
  ASSERT_EQ(errors.size(), 1u) << describe(c->diags);
  const Diagnostic& d = *errors[0];
  EXPECT_EQ(slice(*c, d), "a_s.origin.col == b_s.origin.row");
  const auto& cx = *d.counterexample;
  ASSERT_EQ(cx.iteration.size(), 1u);
  EXPECT_EQ(cx.iteration[0].first, "kt");
  int64_t kt = cx.iteration[0].second;
  std::vector<std::string> elements = facts(d, "element");
  ASSERT_EQ(elements.size(), 2u);
  std::vector<int64_t> a = numbersIn(elements[0], R"(a_s\[([0-9]+), ([0-9]+)\])");
  std::vector<int64_t> b = numbersIn(elements[1], R"(b_s\[([0-9]+), ([0-9]+)\])");
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(a[1], b[0]);  // paired as the dot pairs them: a[m, k] with b[k, n]
  std::vector<int64_t> pid = numbersIn(facts(d, "launch").at(0), R"(program_id\(1\) = ([0-9]+))");
  ASSERT_EQ(pid.size(), 1u);
  // Replay with the views: a_s holds A.tile((64, 16))[pid0, kt], b_s holds B.tile((16, 64))[pid1, kt].
  int64_t aCol = kt * 16 + a[1], bRow = pid[0] * 16 + b[0];
  EXPECT_NE(aCol, bRow);
  EXPECT_EQ(numbersIn(facts(d, "tags found").at(0), R"(a_s\.origin\.col = ([0-9]+), b_s\.origin\.row = ([0-9]+))"),
            (std::vector<int64_t>{aCol, bRow}));
  EXPECT_FALSE(cx.trace.empty());
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes[0], "the assertion says: A and B meet at one K");
}

// x[r, c] = 1000 * r + c: every value says where it came from, so the
// interpreter's output shows which row (stage) each iteration really read.
TEST(CheckerTags, StaleStageCounterexampleReplaysInTheInterpreter) {
  auto c = check(doubleBuffer("t.stage == i"));
  auto errors = withCode(c->diags, "AG2010");
  ASSERT_EQ(errors.size(), 1u) << describe(c->diags);
  const Diagnostic& d = *errors[0];
  const auto& cx = *d.counterexample;
  ASSERT_EQ(cx.iteration.size(), 1u);
  int64_t i = cx.iteration[0].second;
  std::vector<int64_t> n = numbersIn(facts(d, "launch").at(0), R"(N = ([0-9]+))");
  ASSERT_EQ(n.size(), 1u);
  ASSERT_GT(n[0], i);
  std::vector<int64_t> element = numbersIn(facts(d, "element").at(0), R"(t\[([0-9]+)\])");
  ASSERT_EQ(element.size(), 1u);
  std::vector<int64_t> stage = numbersIn(facts(d, "tags found").at(0), R"(t\.stage = ([0-9]+))");
  ASSERT_EQ(stage.size(), 1u);

  auto x = argus::interp::HostTensor::zeros(argus::ir::DType::F32, {n[0], 128});
  auto y = argus::interp::HostTensor::zeros(argus::ir::DType::F32, {n[0], 128});
  for (int64_t r = 0; r < n[0]; ++r)
    for (int64_t col = 0; col < 128; ++col) x.set(static_cast<size_t>(r * 128 + col), static_cast<double>(1000 * r + col));
  std::vector<argus::interp::ArgValue> args{x, y};
  auto error = argus::interp::run(*c->compilation->ir().functions.at(0), args);
  ASSERT_FALSE(error) << error->message;
  // Row r of x was tagged stage r; iteration i wrote what it read into row i - 1 of y.
  double got = y.get(static_cast<size_t>((i - 1) * 128 + element[0]));
  int64_t rowRead = static_cast<int64_t>(got) / 1000;
  EXPECT_EQ(static_cast<int64_t>(got) % 1000, element[0]);
  EXPECT_EQ(rowRead, stage[0]);
  EXPECT_NE(rowRead, i);  // the assertion t.stage == i really fails there
}

TEST(CheckerTags, TagsReachNeitherTheIrRunNorTheCode) {
  const std::string source = readTestKernel("checker_tags/tagged_load_assertion.ag");
  Compilation c(SourceFile("test.ag", source), CompileOptions{});
  const auto& fn = *c.ir().functions.at(0);
  EXPECT_TRUE(argus::ir::verify(fn).empty());
  std::string printed = argus::ir::print(fn);
  EXPECT_NE(printed.find("tag stage"), std::string::npos) << printed;
  EXPECT_NE(printed.find("assert [%"), std::string::npos) << printed;  // the operands, then the condition
  EXPECT_NE(printed.find("] ((%"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\"stage 7\""), std::string::npos) << printed;
  EXPECT_FALSE(c.ptx().empty());
  EXPECT_FALSE(c.hasErrors()) << c.diagnostics().size();
  auto x = argus::interp::HostTensor::zeros(argus::ir::DType::F32, {64});
  auto y = argus::interp::HostTensor::zeros(argus::ir::DType::F32, {64});
  for (size_t i = 0; i < 64; ++i) x.set(i, static_cast<double>(i));
  std::vector<argus::interp::ArgValue> args{x, y};
  auto error = argus::interp::run(fn, args);
  ASSERT_FALSE(error) << error->message;
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(y.get(i), static_cast<double>(i) + 1.0);
}

TEST(CheckerTags, MalformedAssertionsAreRejectedByTheVerifierAndProveNothing) {
  using namespace argus::ir;
  Function fn;
  fn.name = "k";
  Builder b(fn, &fn.body);
  ValueId x = b.constInt(1, DType::I32);
  Attrs attrs;
  AssertAttrs(attrs).message("").code({static_cast<int64_t>(AssertCode::Scalar), 0, static_cast<int64_t>(AssertCode::And)});
  b.create(OpKind::Assert, {x}, {}, {}, attrs);
  EXPECT_FALSE(verify(fn).empty());
  AssertAttrs(attrs).code({static_cast<int64_t>(AssertCode::Tag), 0, 1, 0, static_cast<int64_t>(AssertCode::Const), 0,
                          static_cast<int64_t>(AssertCode::Compare), static_cast<int64_t>(CmpKind::Eq)});
  b.create(OpKind::Assert, {x}, {}, {}, attrs);  // a tag of a scalar, a name that does not exist
  AssertAttrs(attrs).code({99});
  b.create(OpKind::Assert, {x}, {}, {}, attrs);
  EXPECT_GE(verify(fn).size(), 3u);
  Module module;
  module.functions.push_back(std::make_unique<Function>(std::move(fn)));
  DiagnosticSink diags;
  argus::checker::check(module, diags);  // must neither crash nor hang nor claim anything
  EXPECT_FALSE(diags.hasErrors()) << describe(diags);
}

TEST(CheckerTags, StoresLandWhereTheirOriginSays) {
  auto c = check(readSource(fs::path(ARGUS_SOURCE_DIR) / "tests/golden/diagnostics/tag_store_elsewhere.ag"));
  auto errors = withCode(c->diags, "AG2018");
  ASSERT_EQ(errors.size(), 1u) << describe(c->diags);
  const Diagnostic& d = *errors[0];
  EXPECT_EQ(slice(*c, d), "y.tile((64,))[i + 1]");
  const auto& cx = *d.counterexample;
  ASSERT_TRUE(cx.thread && cx.value);
  std::vector<int64_t> element = numbersIn(facts(d, "element").at(0), R"(\(([0-9]+),\))");
  std::vector<int64_t> pid = numbersIn(facts(d, "launch").at(0), R"(program_id\(0\) = ([0-9]+))");
  std::vector<int64_t> n = numbersIn(facts(d, "launch").at(0), R"(N = ([0-9]+))");
  ASSERT_EQ(element.size(), 1u);
  ASSERT_EQ(pid.size(), 1u);
  ASSERT_EQ(n.size(), 1u);
  // Replay: that thread stores that element (primary owner), which comes from
  // x[64 * pid + e] and goes to y[64 * (pid + 1) + e], inside y.
  Distribution dist = Distribution::of(Layout::canonical({64}), 4);
  EXPECT_TRUE(dist.isPrimaryOwner(*cx.thread));
  EXPECT_EQ(dist.coordinate(*cx.thread, *cx.value), element);
  int64_t origin = 64 * pid[0] + element[0], dest = 64 * (pid[0] + 1) + element[0];
  EXPECT_LT(dest, n[0]);
  EXPECT_NE(d.message.find("origin (" + std::to_string(origin) + ",) of 'x' to (" + std::to_string(dest) + ",) of 'y'"),
            std::string::npos) << d.message;
  // Where the indices agree, nothing is reported: tests/golden/diagnostics/tag_store_at_origin.ag.
}

}  // namespace
