// The async-copy completion check (AG2005): reads before the wait_group that
// retires a copy, or before the barrier() after it, are found with a
// counterexample whose copying thread really copies the element (ir/async.h);
// correct explicit choreographies (straight line, double buffering, three
// stages) stay clean.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "checker/checker.h"
#include "driver/compilation.h"
#include "ir/async.h"
#include "ir/ir.h"
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

std::string gemmAsync() {
  std::ifstream in(fs::path(ARGUS_SOURCE_DIR) / "examples" / "gemm_async.ag");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}


struct Checked {
  std::unique_ptr<Compilation> compilation;
  DiagnosticSink diags;
};

// A generous per-query timeout: the build machines are shared and busy, and a
// timeout would turn a proof into AG2004.
std::unique_ptr<Checked> check(const std::string& source) {
  argus::checker::Options options;
  options.queryRlimit = 100000000;
  options.kernelRlimit = 1000000000;
  auto out = std::make_unique<Checked>();
  out->compilation = std::make_unique<Compilation>(SourceFile("test.ag", source), CompileOptions{});
  const argus::ir::Module& module = out->compilation->ir();
  EXPECT_FALSE(out->compilation->hasErrors()) << "the test kernel must pass sema";
  argus::checker::check(module, out->diags, &out->compilation->source(), options);
  return out;
}

std::string describe(const DiagnosticSink& diags) {
  std::string s;
  for (const Diagnostic& d : diags.diagnostics()) {
    s += std::string(d.code()) + ": " + d.message + "\n";
    for (const std::string& n : d.notes) s += "  note: " + n + "\n";
    if (d.counterexample)
      for (const auto& [k, v] : d.counterexample->facts) s += "  " + k + ": " + v + "\n";
  }
  return s;
}

const Diagnostic* find(const DiagnosticSink& diags, const char* code) {
  for (const Diagnostic& d : diags.diagnostics())
    if (std::string(d.code()) == code) return &d;
  return nullptr;
}

std::string fact(const Diagnostic& d, const std::string& name) {
  for (const auto& [key, value] : d.counterexample->facts)
    if (key == name) return value;
  return "";
}

std::vector<int64_t> numbersIn(const std::string& text, const std::string& pattern) {
  std::smatch m;
  std::vector<int64_t> out;
  if (!std::regex_search(text, m, std::regex(pattern))) return out;
  std::string inside = m[1];
  std::regex number("[0-9]+");
  for (auto it = std::sregex_iterator(inside.begin(), inside.end(), number); it != std::sregex_iterator(); ++it)
    out.push_back(std::stoll(it->str()));
  return out;
}

// Does `thread` copy element `e` (of a (rows, cols) dtype view at the buffer's
// origin) in the mapping of ir/async.h?
bool copies(argus::ir::DType dtype, std::vector<int64_t> shape, int64_t thread, std::vector<int64_t> e, int warps) {
  int64_t vec = argus::ir::asyncCopyVectorElements(dtype, shape);
  argus::ir::Distribution d = argus::ir::Distribution::of(argus::ir::asyncCopyChunkLayout(dtype, shape), warps);
  e.back() /= vec;
  return d.isPrimaryOwner(thread) && d.valueIndexOf(thread, e) >= 0;
}

// One copy, committed, waited for and made visible by a barrier before its read.
std::string straightLine() { return readTestKernel("checker_async/straight_line_async_copy.ag"); }

TEST(CheckerAsync, MissingCommitAndWaitIsReportedWithTheCopyingThread) {
  auto c = check(withoutLine(withoutLine(straightLine(), "commit_group()"), "wait_group(0)"));
  const Diagnostic* d = find(c->diags, "AG2005");
  ASSERT_NE(d, nullptr) << describe(c->diags);
  EXPECT_NE(d->message.find("no wait_group() has waited for it"), std::string::npos) << d->message;
  ASSERT_TRUE(d->counterexample);
  EXPECT_EQ(fact(*d, "wait needed"), "commit_group() and wait_group(0)");
  ASSERT_EQ(d->labels.size(), 1u);
  // The copying thread really copies the element the reader reads.
  std::vector<int64_t> element = numbersIn(fact(*d, "element"), R"(\[([0-9, ]+)\])");
  std::vector<int64_t> copier = numbersIn(fact(*d, "the copy"), R"(thread ([0-9]+))");
  ASSERT_EQ(element.size(), 2u);
  ASSERT_EQ(copier.size(), 1u);
  EXPECT_TRUE(copies(argus::ir::DType::F32, {32, 64}, copier[0], element, 4)) << describe(c->diags);
  // The reader reads it (canonical layout of the load).
  argus::ir::Distribution load = argus::ir::Distribution::of(argus::ir::Layout::canonical({32, 64}), 4);
  EXPECT_GE(load.valueIndexOf(*d->counterexample->thread, element), 0);
}

TEST(CheckerAsync, MissingBarrierAfterTheWaitIsReported) {
  auto c = check(withoutLine(straightLine(), "barrier()"));
  const Diagnostic* d = find(c->diags, "AG2005");
  ASSERT_NE(d, nullptr) << describe(c->diags);
  EXPECT_NE(d->message.find("not followed by a barrier()"), std::string::npos) << d->message;
  std::vector<int64_t> copier = numbersIn(fact(*d, "the copy"), R"(thread ([0-9]+))");
  ASSERT_EQ(copier.size(), 1u);
  EXPECT_NE(copier[0], *d->counterexample->thread) << "a thread sees its own copies after its wait";
}

TEST(CheckerAsync, StoreOverACopyInFlightIsReported) {
  std::string source = straightLine();
  source.replace(source.find("    wait_group(0)\n"), 0, "    barrier()\n    s.tile((1, 64))[0, 0] = zeros(f32, (1, 64))\n");
  auto c = check(source);
  const Diagnostic* d = find(c->diags, "AG2006");
  ASSERT_NE(d, nullptr) << describe(c->diags);
  EXPECT_EQ(fact(*d, "wait needed"), "wait_group(0)");
  EXPECT_EQ(find(c->diags, "AG2005"), nullptr) << describe(c->diags);
}

TEST(CheckerAsync, DoubleBufferedGemmIsClean) {
  auto c = check(gemmAsync());
  EXPECT_TRUE(c->diags.diagnostics().empty()) << describe(c->diags);
}

TEST(CheckerAsync, DoubleBufferedGemmWithoutWaitNamesTheCount) {
  auto c = check(withoutLine(gemmAsync(), "wait_group(1)"));
  const Diagnostic* d = find(c->diags, "AG2005");
  ASSERT_NE(d, nullptr) << describe(c->diags);
  EXPECT_EQ(fact(*d, "wait needed"), "wait_group(1)") << describe(c->diags);
  EXPECT_FALSE(d->counterexample->iteration.empty());
}

TEST(CheckerAsync, WaitingForTooFewGroupsIsReported) {
  std::string source = gemmAsync();
  source = std::regex_replace(source, std::regex("wait_group\\(1\\)"), "wait_group(2)");
  auto c = check(source);
  const Diagnostic* d = find(c->diags, "AG2005");
  ASSERT_NE(d, nullptr) << describe(c->diags);
}

// A hand-written three-stage pipeline that waits for too little (wait needed: wait_group(1)):
// tests/checker/async_three_stage_waits_too_little.ag.

TEST(CheckerAsync, ExamplesAreClean) {
  for (const char* name : {"gemm_async.ag", "gemm_pipelined.ag"}) {
    fs::path path = fs::path(ARGUS_SOURCE_DIR) / "examples" / name;
    if (!fs::exists(path)) continue;
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    Compilation sema(SourceFile(name, ss.str()), CompileOptions{});
    sema.ir();
    if (sema.hasErrors()) continue;  // a language feature another part of the tree has not landed yet
    auto c = check(ss.str());
    EXPECT_TRUE(c->diags.diagnostics().empty()) << name << "\n" << describe(c->diags);
  }
}

}  // namespace
