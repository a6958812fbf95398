// pipelined(n, stages=S) end to end: examples/gemm_pipelined.ag agrees with a
// C++ reference on the CPU interpreter (ragged sizes, fewer k tiles than the
// prologue, none at all), for several stage counts, and its PTX carries the
// pipeline's cp.async waits.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "checker/checker.h"
#include "driver/compilation.h"
#include "frontend/parser.h"
#include "frontend/sema.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "ir/pipeline.h"
#include "runtime/interp/interpreter.h"
#include "test_sources.h"

namespace fs = std::filesystem;
using argus::interp::ArgValue;
using argus::interp::HostTensor;

namespace {

std::string example() { return argus::testing::readExample("gemm_pipelined.ag"); }

HostTensor randomTensor(std::vector<int64_t> shape, std::mt19937& rng) {
  HostTensor t = HostTensor::zeros(argus::ir::DType::F32, std::move(shape));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < t.size(); ++i) t.set(i, dist(rng));
  return t;
}

void expectGemm(const argus::ir::Function& kernel, int64_t m, int64_t n, int64_t k, std::mt19937& rng) {
  HostTensor a = randomTensor({m, k}, rng), b = randomTensor({k, n}, rng), c = randomTensor({m, n}, rng);
  std::vector<ArgValue> args = {&a, &b, &c};
  auto error = argus::interp::run(kernel, args);
  ASSERT_FALSE(error) << error->message;
  size_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        want += a.get(static_cast<size_t>(i * k + kk)) * b.get(static_cast<size_t>(kk * n + j));
      double got = c.get(static_cast<size_t>(i * n + j));
      if (!(std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want))) && ++bad <= 5)
        ADD_FAILURE() << "M=" << m << " N=" << n << " K=" << k << ": C[" << i << ", " << j << "] = " << got
                      << ", expected " << want;
    }
  EXPECT_EQ(bad, 0u);
}

class PipelinedGemm : public ::testing::TestWithParam<int> {};

TEST_P(PipelinedGemm, MatchesReferenceOnTheInterpreter) {
  argus::CompileOptions options;
  options.defines.push_back({"STAGES", std::to_string(GetParam())});
  argus::Compilation c(argus::SourceFile("gemm_pipelined.ag", example()), options);
  ASSERT_TRUE(c.check());
  for (const argus::Diagnostic& d : c.diagnostics()) ADD_FAILURE() << d.code() << " " << d.message;
  ASSERT_EQ(c.ir().functions.size(), 1u);
  const argus::ir::Function& kernel = *c.ir().functions[0];
  EXPECT_TRUE(argus::ir::verify(kernel).empty());
  std::mt19937 rng(7);
  // Ragged; one k tile (fewer than the prologue's S-1); S-1 tiles exactly; tiles that divide.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{100, 70, 33}, {17, 130, 9}, {65, 63, 32}, {64, 64, 80}})
    expectGemm(kernel, m, n, k, rng);
}

INSTANTIATE_TEST_SUITE_P(Stages, PipelinedGemm, ::testing::Values(2, 3, 4));

// A pipelined loop nested in another loop: the buffers are refilled for each
// column tile (the epilogue's barrier orders the last reads of one run before
// the prologue's copies of the next), and the copies read the outer loop's
// variable.
TEST(PipelinedGemmNested, MatchesReferenceAndPassesTheChecker) {
  const std::string text = argus::testing::readTestKernel("driver_pipeline/pipelined_loop_in_column_loop.ag");
  argus::Compilation c(argus::SourceFile("gemm_rows.ag", text), argus::CompileOptions{});
  EXPECT_FALSE(c.ptx().empty());  // sema, pipelining, checker, codegen
  for (const argus::Diagnostic& d : c.diagnostics()) ADD_FAILURE() << d.code() << " " << d.message;
  ASSERT_EQ(c.ir().functions.size(), 1u);
  std::mt19937 rng(11);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{40, 70, 19}, {32, 32, 5}})
    expectGemm(*c.ir().functions[0], m, n, k, rng);
}

TEST(PipelinedGemmPtx, CarriesThePipelineWaits) {
  argus::Compilation c(argus::SourceFile("gemm_pipelined.ag", example()), argus::CompileOptions{});
  const std::string& ptx = c.ptx();
  for (const argus::Diagnostic& d : c.diagnostics()) ADD_FAILURE() << d.code() << " " << d.message;
  ASSERT_FALSE(ptx.empty());
  EXPECT_NE(ptx.find("cp.async.wait_group 1"), std::string::npos);  // steady state: S-2 = 1
  EXPECT_NE(ptx.find("cp.async.wait_group 0"), std::string::npos);  // epilogue
  EXPECT_NE(ptx.find("cp.async.commit_group"), std::string::npos);
  if (!fs::exists(argus::CompileOptions{}.ptxasPath)) GTEST_SKIP() << "ptxas is not installed";
  EXPECT_TRUE(c.cubin().has_value());
  for (const argus::Diagnostic& d : c.diagnostics()) ADD_FAILURE() << d.code() << " " << d.message;
}

// The checker runs on the rewritten IR, so it validates the pass itself: the
// correct pipeline passes, and a pipeline with a wrong wait or without its
// barrier is caught.
enum class Sabotage { None, WaitTooLoose, NoBarrier };

std::vector<argus::Diagnostic> checkPipeline(Sabotage sabotage) {
  argus::SourceFile file("gemm_pipelined.ag", example());
  argus::DiagnosticSink diags;
  std::unique_ptr<argus::ast::Module> ast = argus::parseModule(file, diags);
  argus::sema::Result result = argus::sema::analyze(*ast, file, {}, diags);
  EXPECT_FALSE(diags.hasErrors());
  if (!result.module || result.module->functions.size() != 1) return diags.diagnostics();
  argus::ir::applyPipelining(*result.module, &file, diags);
  argus::ir::Function& fn = *result.module->functions[0];
  for (auto& op : fn.body.ops) {
    if (op->kind != argus::ir::OpKind::For) continue;
    auto& body = op->regions[0].ops;
    EXPECT_EQ(body[0]->kind, argus::ir::OpKind::WaitGroup);
    EXPECT_EQ(body[1]->kind, argus::ir::OpKind::Barrier);
    if (sabotage == Sabotage::WaitTooLoose) argus::ir::WaitGroupAttrs(body[0]->attrs).pending(2);  // leaves iteration j's copy in flight
    if (sabotage == Sabotage::NoBarrier) body.erase(body.begin() + 1);
  }
  EXPECT_TRUE(argus::ir::verify(fn).empty());
  argus::checker::check(*result.module, diags, &file);
  return diags.diagnostics();
}

TEST(PipelinedGemmChecker, AcceptsTheCompilersPipeline) {
  for (const argus::Diagnostic& d : checkPipeline(Sabotage::None)) ADD_FAILURE() << d.code() << " " << d.message;
}

std::string errorCodes(const std::vector<argus::Diagnostic>& diags) {
  std::string codes;
  for (const argus::Diagnostic& d : diags)
    if (d.severity == argus::Severity::Error) codes += std::string(d.code()) + " ";
  return codes;
}

TEST(PipelinedGemmChecker, CatchesAWaitThatRetiresTooLittle) {
  // wait_group(2) in a 3-stage pipeline lets the block read a tile still in flight.
  std::string codes = errorCodes(checkPipeline(Sabotage::WaitTooLoose));
  EXPECT_NE(codes.find("AG2005"), std::string::npos) << codes;
}

TEST(PipelinedGemmChecker, CatchesAMissingBarrier) {
  // Without the barrier a thread reads other threads' copies, and overwrites a
  // stage other threads may still read, with nothing ordering them.
  std::string codes = errorCodes(checkPipeline(Sabotage::NoBarrier));
  EXPECT_NE(codes.find("AG2005"), std::string::npos) << codes;  // read after copy
  EXPECT_NE(codes.find("AG2002"), std::string::npos) << codes;  // copy after read
}

}  // namespace

// The pipelining pass keeps the function as written (ir::Function::asWritten),
// which the checker's tag flow reads: the pipelined loop with its mark, the
// buffers without a stage axis, and every value's defining op inside the copy.
namespace {

void collectOps(const argus::ir::Block& block, std::set<const argus::ir::Op*>& out, int& pipelinedLoops) {
  for (const auto& op : block.ops) {
    out.insert(op.get());
    if (op->kind == argus::ir::OpKind::For && argus::ir::ForOp(*op).stages() > 0) ++pipelinedLoops;
    for (const argus::ir::Block& region : op->regions) collectOps(region, out, pipelinedLoops);
  }
}

}  // namespace

TEST(PipelinedGemmAsWritten, KeepsTheLoopAsTheUserWroteIt) {
  argus::Compilation c(argus::SourceFile("gemm_pipelined.ag", example()), {});
  const argus::ir::Module& module = c.ir();
  ASSERT_EQ(module.functions.size(), 1u);
  const argus::ir::Function& rewritten = *module.functions[0];
  ASSERT_TRUE(rewritten.asWritten);
  const argus::ir::Function& written = *rewritten.asWritten;
  EXPECT_FALSE(written.asWritten);
  std::set<const argus::ir::Op*> writtenOps, rewrittenOps;
  int writtenLoops = 0, rewrittenLoops = 0;
  collectOps(written.body, writtenOps, writtenLoops);
  collectOps(rewritten.body, rewrittenOps, rewrittenLoops);
  EXPECT_EQ(writtenLoops, 1);    // still marked pipelined
  EXPECT_EQ(rewrittenLoops, 0);  // rewritten into prologue, steady loop and epilogue
  for (size_t v = 0; v < written.values.size(); ++v) {
    const argus::ir::Op* def = written.values[v].def;
    if (def) {
      EXPECT_TRUE(writtenOps.count(def)) << "value " << v << " is defined outside the copy";
    }
  }
  // The shared buffers gain their stage axis only in the rewritten function.
  size_t shared = 0;
  for (const auto& op : written.body.ops)
    if (op->kind == argus::ir::OpKind::AllocShared) {
      ++shared;
      argus::ir::ValueId buffer = op->results[0];
      EXPECT_EQ(written.typeOf(buffer).shape.size() + 1, rewritten.typeOf(buffer).shape.size());
    }
  EXPECT_EQ(shared, 2u);
}

TEST(PipelinedGemmAsWritten, NothingIsKeptWithoutAPipelinedLoop) {
  argus::Compilation c(argus::SourceFile("gemm.ag", argus::testing::readExample("gemm.ag")), {});
  const argus::ir::Module& module = c.ir();
  ASSERT_FALSE(module.functions.empty());
  EXPECT_FALSE(module.functions[0]->asWritten);
}
