// The shared-memory synchronization checker: the planted races are found with
// counterexamples that really exhibit them (re-evaluated with the thread
// distribution of ir/types.h), and race-free kernels stay clean.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "checker/checker.h"
#include "driver/compilation.h"
#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "checker_only.h"
#include "test_sources.h"

namespace fs = std::filesystem;
using argus::Compilation;
using argus::CompileOptions;
using argus::Diagnostic;
using argus::DiagnosticSink;
using argus::SourceFile;

using argus::testing::readExample;
using argus::testing::readSource;
using argus::testing::readTestKernel;
using argus::testing::withoutLine;

namespace {


std::string gemmSource() { return readSource(fs::path(ARGUS_SOURCE_DIR) / "examples" / "gemm.ag"); }


struct Checked {
  std::unique_ptr<Compilation> compilation;
  DiagnosticSink diags;
};

// Runs sema, then only the checker, so that the diagnostics are the checker's.
std::unique_ptr<Checked> check(const std::string& source, argus::checker::Options options = {}) {
  auto out = std::make_unique<Checked>();
  out->compilation = std::make_unique<Compilation>(SourceFile("test.ag", source), CompileOptions{});
  const argus::ir::Module& module = out->compilation->ir();
  EXPECT_FALSE(out->compilation->hasErrors()) << "the test kernel must pass sema";
  argus::checker::check(module, out->diags, &out->compilation->source(), options);
  return out;
}

std::string describe(const DiagnosticSink& diags) {
  std::string s;
  for (const Diagnostic& d : diags.diagnostics()) s += std::string(d.code()) + ": " + d.message + "\n";
  return s;
}

std::string fact(const Diagnostic& d, const std::string& name) {
  for (const auto& [key, value] : d.counterexample->facts)
    if (key == name) return value;
  return "";
}

std::vector<int64_t> parseElement(const std::string& text) {
  std::vector<int64_t> out;
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"(\[([0-9, ]+)\])"))) return out;
  std::string inside = m[1];
  std::regex number("[0-9]+");
  for (auto it = std::sregex_iterator(inside.begin(), inside.end(), number); it != std::sregex_iterator(); ++it)
    out.push_back(std::stoll(it->str()));
  return out;
}

int64_t parseThread(const std::string& text) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(text, m, std::regex("thread ([0-9]+)"))) << text;
  return m.size() > 1 ? std::stoll(m[1]) : -1;
}

int64_t parseIteration(const std::string& text) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(text, m, std::regex("kt = ([0-9]+)"))) << text;
  return m.size() > 1 ? std::stoll(m[1]) : -1;
}

std::string lineCol(const Compilation& c, argus::SourceRange r) {
  argus::LineCol lc = c.source().lineCol(r.begin);
  return std::to_string(lc.line) + ":" + std::to_string(lc.column);
}

using argus::ir::Distribution;
using argus::ir::Layout;

// The element a thread writes with value index v of a canonical tile, when it is the primary owner.
bool writes(const Layout& layout, int64_t thread, const std::vector<int64_t>& element) {
  Distribution d = Distribution::of(layout, 4);
  return d.isPrimaryOwner(thread) && d.valueIndexOf(thread, element) >= 0;
}

TEST(CheckerSync, ExamplesAreClean) {
  for (const auto& e : fs::directory_iterator(fs::path(ARGUS_SOURCE_DIR) / "examples")) {
    if (e.path().extension() != ".ag") continue;
    auto c = check(readSource(e.path()));
    EXPECT_TRUE(argus::testing::beyondTileOrderLimit(c->diags).empty()) << e.path() << "\n" << describe(c->diags);
  }
}

TEST(CheckerSync, GemmWithoutTrailingBarrierRacesAcrossIterations) {
  auto c = check(withoutLine(gemmSource(), "barrier()", 1));
  const auto& diags = c->diags.diagnostics();
  ASSERT_EQ(diags.size(), 2u) << describe(c->diags);
  for (const Diagnostic& d : diags) {
    EXPECT_STREQ(d.code(), "AG2002");
    EXPECT_EQ(lineCol(*c->compilation, d.range), "12:15");  // the dot reads
    ASSERT_EQ(d.labels.size(), 1u);
    ASSERT_TRUE(d.counterexample);
    const auto& cx = *d.counterexample;
    ASSERT_TRUE(cx.thread && cx.value && cx.warp && cx.lane);
    EXPECT_EQ(*cx.warp * 32 + *cx.lane, *cx.thread);
    ASSERT_EQ(cx.iteration.size(), 1u);
    EXPECT_EQ(cx.iteration[0].first, "kt");
    // The write is in the next iteration, by another thread, of the same element.
    int64_t writer = parseThread(d.labels[0].message);
    EXPECT_EQ(parseIteration(d.labels[0].message), cx.iteration[0].second + 1);
    EXPECT_NE(writer, *cx.thread);
    std::vector<int64_t> element = parseElement(fact(d, "element"));
    ASSERT_EQ(element.size(), 2u);
    EXPECT_EQ(parseElement(d.labels[0].message), element);
    // Re-evaluate with the distribution: the reader holds acc[m, n] that needs the element.
    Distribution acc = Distribution::of(Layout::canonical({64, 64}), 4);
    std::vector<int64_t> mn = acc.coordinate(*cx.thread, *cx.value);
    bool isA = d.message.find("'a_s'") != std::string::npos;
    if (isA) {
      EXPECT_EQ(mn[0], element[0]);
      EXPECT_TRUE(writes(Layout::canonical({64, 16}), writer, element));
    } else {
      EXPECT_EQ(mn[1], element[1]);
      EXPECT_TRUE(writes(Layout::canonical({16, 64}), writer, element));
    }
    ASSERT_EQ(d.notes.size(), 2u);
    EXPECT_NE(d.notes[0].find("insert barrier() between the dot at 12:15 and the next copy into"), std::string::npos)
        << d.notes[0];
    ASSERT_EQ(d.fixits.size(), 1u);
    EXPECT_EQ(d.fixits[0].replacement, "        barrier()\n");
    EXPECT_EQ(c->compilation->source().lineCol(d.fixits[0].range.begin).line, 13u);  // after the dot
  }
}

TEST(CheckerSync, GemmWithoutFirstBarrierRacesInOneIteration) {
  auto c = check(withoutLine(gemmSource(), "barrier()", 0));
  const auto& diags = c->diags.diagnostics();
  ASSERT_EQ(diags.size(), 2u) << describe(c->diags);
  for (const Diagnostic& d : diags) {
    EXPECT_STREQ(d.code(), "AG2001");
    EXPECT_EQ(lineCol(*c->compilation, d.range), "11:15");
    ASSERT_TRUE(d.counterexample);
    EXPECT_EQ(parseIteration(d.labels[0].message), d.counterexample->iteration.at(0).second);
    EXPECT_NE(parseThread(d.labels[0].message), *d.counterexample->thread);
    ASSERT_EQ(d.fixits.size(), 1u);
    EXPECT_EQ(c->compilation->source().lineCol(d.fixits[0].range.begin).line, 11u);  // before the dot
    EXPECT_EQ(d.notes.size(), 1u);
  }
}

// A barrier in only one branch: tests/golden/diagnostics/checker_barrier_one_branch.ag.

TEST(CheckerSync, CompilationStopsBeforeCodegenOnARace) {
  Compilation c(SourceFile("gemm.ag", withoutLine(gemmSource(), "barrier()", 1)), CompileOptions{});
  EXPECT_TRUE(c.ptx().empty());
  bool found = false;
  for (const Diagnostic& d : c.diagnostics()) found |= std::string(d.code()) == "AG2002";
  EXPECT_TRUE(found);
}

// Timings are measured by bench/checker_bench.cpp (bench/results/checker.md),
// never asserted here; this only checks that every example is free of findings.
TEST(CheckerSync, ExamplesCheckClean) {
  for (const auto& e : fs::directory_iterator(fs::path(ARGUS_SOURCE_DIR) / "examples")) {
    if (e.path().extension() != ".ag") continue;
    auto c = check(readSource(e.path()));
    EXPECT_TRUE(argus::testing::beyondTileOrderLimit(c->diags).empty()) << e.path().filename() << ": " << describe(c->diags);
  }
}

TEST(CheckerSync, UndecidedQueryIsAWarningNeverSilence) {
  argus::checker::Options options;
  options.queryRlimit = 1;
  // No comment line heads the file: the message below names the copy at its line and column.
  auto c = check(readTestKernel("checker_sync/nonlinear_offsets.ag"), options);
  // Proved race-free within the default limit; with 1 resource unit the solver gives up: a warning, never silence or
  // an error (the separation of the global store gives up too, and says so).
  bool syncWarned = false;
  for (const Diagnostic& d : c->diags.diagnostics()) {
    EXPECT_STREQ(d.code(), "AG2004");
    EXPECT_EQ(d.severity, argus::Severity::Warning);
    syncWarned = syncWarned || d.message.find("cannot prove that the copy at 4:5 and this load never touch the same "
                                              "element of shared buffer 's' from different threads") != std::string::npos;
  }
  EXPECT_TRUE(syncWarned) << describe(c->diags);
}
// The CPU interpreter, run at the launch sizes of the counterexample, meets the race too.
void expectInterpreterRace(const std::string& source) {
  auto c = check(source);
  ASSERT_FALSE(c->diags.diagnostics().empty());
  const Diagnostic& d = c->diags.diagnostics()[0];
  std::smatch m;
  std::string launch = fact(d, "launch");
  ASSERT_TRUE(std::regex_search(launch, m, std::regex("K = ([0-9]+)"))) << launch;
  int64_t k = std::stoll(m[1]);
  using argus::interp::HostTensor;
  HostTensor a = HostTensor::zeros(argus::ir::DType::F32, {64, k});
  HostTensor b = HostTensor::zeros(argus::ir::DType::F32, {k, 64});
  HostTensor out = HostTensor::zeros(argus::ir::DType::F32, {64, 64});
  std::vector<argus::interp::ArgValue> args = {a, b, out};
  auto error = argus::interp::run(*c->compilation->ir().functions.at(0), args);
  ASSERT_TRUE(error.has_value());
  EXPECT_TRUE(argus::interp::isSharedRace(error->id)) << argus::diagInfo(error->id).code << ": " << error->message;
}

TEST(CheckerSync, InterpreterConfirmsTheCrossIterationRace) {
  expectInterpreterRace(withoutLine(gemmSource(), "barrier()", 1));
}

TEST(CheckerSync, InterpreterConfirmsTheSameIterationRace) {
  expectInterpreterRace(withoutLine(gemmSource(), "barrier()", 0));
}

// Only the last iteration meets the epilogue: tests/golden/diagnostics/checker_epilogue_meets_last_iteration.ag.

TEST(CheckerSync, ASpentBudgetIsAWarningNeverSilence) {
  argus::checker::Options options;
  options.kernelRlimit = 0;
  auto c = check(withoutLine(gemmSource(), "barrier()", 1), options);
  const auto& diags = c->diags.diagnostics();
  ASSERT_FALSE(diags.empty());
  for (const Diagnostic& d : diags) {
    EXPECT_STREQ(d.code(), "AG2004");
    EXPECT_NE(d.message.find("solver budget"), std::string::npos) << d.message;
  }
}

TEST(CheckerSync, NestedLoopsRaceCarriedByTheOuterLoop) {
  // No comment line heads the file: the race is expected at its line and column.
  auto c = check(std::regex_replace(readTestKernel("checker_sync/nested_loops.ag"), std::regex("TAIL"), "pass"));
  const auto& diags = c->diags.diagnostics();
  ASSERT_EQ(diags.size(), 1u) << describe(c->diags);
  const Diagnostic& d = diags[0];
  EXPECT_STREQ(d.code(), "AG2002");
  EXPECT_EQ(lineCol(*c->compilation, d.range), "9:25");
  const auto& it = d.counterexample->iteration;
  ASSERT_EQ(it.size(), 2u);
  EXPECT_EQ(it[0].first, "i");
  EXPECT_EQ(it[1].first, "j");
  EXPECT_NE(d.labels[0].message.find("in iteration i = " + std::to_string(it[0].second + 1)), std::string::npos)
      << d.labels[0].message;
  // The reader of s[64 * j + c] is thread c (and its replica c + 64); the writer is thread 64 * j + c.
  std::vector<int64_t> element = parseElement(fact(d, "element"));
  ASSERT_EQ(element.size(), 1u);
  EXPECT_EQ(element[0] / 64, it[1].second);
  EXPECT_EQ(parseThread(d.labels[0].message), element[0]);
  EXPECT_EQ(*d.counterexample->thread % 64, element[0] % 64);
}

}  // namespace
