// The Evaluator (agent/evaluator.h): verdicts for the reference and for
// candidates that break the signature, skip work, or fail to check.
#include <gtest/gtest.h>

#include <algorithm>

#include "agent/evaluator.h"
#include "tests/unit/agent_eval_test_util.h"

namespace argus::agent {
namespace {

using argus::testing::naiveGemm;
using argus::testing::replaced;
using argus::testing::ScratchDir;

Task smallTask(const ScratchDir& dir, const std::string& kernel = naiveGemm()) {
  std::string error;
  std::optional<Task> task = loadTask(argus::testing::writeSmallTask(dir, kernel), error);
  EXPECT_TRUE(task) << error;
  return task.value_or(Task{});
}

EvaluatorOptions evaluatorOptions(bool useGpu, uint64_t seed) {
  EvaluatorOptions o;
  o.useGpu = useGpu;
  o.seed = seed;
  o.gpuRepeat = 3;
  return o;
}

Evaluation evaluate(const Task& task, const std::string& source, EvaluatorOptions options = evaluatorOptions(false, 7)) {
  Evaluator evaluator(task, options);
  Candidate candidate;
  candidate.source = source;
  return evaluator.evaluate(candidate);
}

TEST(AgentEvaluator, ReferenceIsOkWithAModelledTime) {
  ScratchDir dir;
  Task task = smallTask(dir);
  Evaluation ev = evaluate(task, task.kernelSource);
  ASSERT_EQ(ev.verdict, Verdict::Ok) << ev.detail;
  EXPECT_EQ(ev.timeSource, "model");
  ASSERT_TRUE(ev.timeMs && ev.modelTimeMs && ev.tflops);
  EXPECT_GT(*ev.timeMs, 0);
  EXPECT_DOUBLE_EQ(*ev.timeMs, *ev.modelTimeMs);
  EXPECT_NEAR(*ev.tflops, 2.0 * 4096 * 4096 * 4096 / (*ev.timeMs * 1e-3) / 1e12, 1e-9);
  EXPECT_NE(ev.detail.find("matches the reference at "), std::string::npos) << ev.detail;
  EXPECT_NE(ev.detail.find(" shapes in the interpreter (seed "), std::string::npos) << ev.detail;
  EXPECT_NE(ev.detail.find("GPU measurement is off"), std::string::npos) << ev.detail;
  EXPECT_EQ(ev.errorCount, 0);
  EXPECT_TRUE(ev.diagnostics.is_array());
  EXPECT_EQ(ev.estimate.blocks, 64 * 64);
}

TEST(AgentEvaluator, WithoutAGpuFallsBackToTheModelAndSaysSo) {
  ScratchDir dir;
  Task task = smallTask(dir);
  Evaluator evaluator(task, evaluatorOptions(true, 0));
  if (evaluator.hasGpu()) GTEST_SKIP() << "this machine has a GPU: " << evaluator.gpuName();
  EXPECT_EQ(evaluator.gpuName(), "");
  Candidate candidate;
  candidate.source = task.kernelSource;
  Evaluation ev = evaluator.evaluate(candidate);
  ASSERT_EQ(ev.verdict, Verdict::Ok) << ev.detail;
  EXPECT_EQ(ev.timeSource, "model");
  EXPECT_NE(ev.detail.find("time from the cost model ("), std::string::npos) << ev.detail;
  EXPECT_EQ(ev.detail.find("GPU measurement is off"), std::string::npos) << ev.detail;
}

TEST(AgentEvaluator, SignatureChangesAreRejected) {
  ScratchDir dir;
  Task task = smallTask(dir);
  std::string source = task.kernelSource;
  // Renaming a parameter everywhere still computes C = A @ B, but it is another kernel's interface.
  std::string renamed = source;
  for (size_t at; (at = renamed.find("B.tile")) != std::string::npos;) renamed.replace(at, 1, "W");
  renamed = replaced(renamed, "B: Tensor", "W: Tensor");
  Evaluation ev = evaluate(task, renamed);
  EXPECT_EQ(ev.verdict, Verdict::SignatureChanged) << ev.detail;
  EXPECT_NE(ev.detail.find("renamed from 'B' to 'W'"), std::string::npos) << ev.detail;
  EXPECT_FALSE(ev.timeMs);

  ev = evaluate(task, replaced(replaced(source, "C: Tensor[bf16", "C: Tensor[f32"), "cast(acc, bf16)", "acc"));
  EXPECT_EQ(ev.verdict, Verdict::SignatureChanged) << ev.detail;
  EXPECT_NE(ev.detail.find("'C' changed dtype from bf16 to f32"), std::string::npos) << ev.detail;

  ev = evaluate(task, replaced(source, "def gemm_naive(", "def gemm_fast("));
  EXPECT_EQ(ev.verdict, Verdict::SignatureChanged) << ev.detail;
  EXPECT_NE(ev.detail.find("'gemm_naive' is missing"), std::string::npos) << ev.detail;

  // Const parameters are the candidate's to change.
  ev = evaluate(task, replaced(source, "BN: const = 64", "BN: const = 32"));
  EXPECT_EQ(ev.verdict, Verdict::Ok) << ev.detail;
}

TEST(AgentEvaluator, SkippedWorkIsWrong) {
  ScratchDir dir;
  Task task = smallTask(dir);
  // Stores zeros: the k loop's products never reach C.
  Evaluation ev = evaluate(task, replaced(task.kernelSource, "acc = acc + cast(a, f32) * cast(b, f32)", "acc = acc"));
  EXPECT_EQ(ev.verdict, Verdict::Wrong) << ev.detail;
  EXPECT_NE(ev.detail.find("C["), std::string::npos) << ev.detail;
  EXPECT_NE(ev.detail.find("want "), std::string::npos) << ev.detail;
  EXPECT_NE(ev.detail.find("M=64"), std::string::npos) << ev.detail;
  EXPECT_FALSE(ev.timeMs);
  EXPECT_TRUE(ev.modelTimeMs);  // compiled: the model still predicts

  // Half the grid: the blocks of the second half never run. The checker's AG2040
  // (every element of an output is written) says so before anything runs.
  ev = evaluate(task, replaced(task.kernelSource, "cdiv(N, BN)), warps", "cdiv(N, 2 * BN)), warps"));
  EXPECT_EQ(ev.verdict, Verdict::CheckFailed) << ev.detail;
  EXPECT_NE(ev.detail.find("AG2040"), std::string::npos) << ev.detail;

  // A kernel that reads one k step short is off by a small amount: still caught.
  ev = evaluate(task, replaced(task.kernelSource, "for kk in range(BK)", "for kk in range(BK - 1)"));
  EXPECT_EQ(ev.verdict, Verdict::Wrong) << ev.detail;
}

TEST(AgentEvaluator, CheckerErrorsAreCheckFailedWithCodes) {
  ScratchDir dir;
  Task task = smallTask(dir);
  Evaluation ev = evaluate(task, replaced(task.kernelSource, "cast(b, f32)", "cast(bb, f32)"));
  EXPECT_EQ(ev.verdict, Verdict::CheckFailed) << ev.detail;
  EXPECT_GE(ev.errorCount, 1);
  ASSERT_FALSE(ev.diagnosticCodes.empty());
  EXPECT_EQ(ev.diagnosticCodes[0].rfind("AG", 0), 0u);
  ASSERT_TRUE(ev.diagnostics.is_array() && !ev.diagnostics.empty());
  EXPECT_EQ(ev.diagnostics[0]["code"], ev.diagnosticCodes[0]);
  EXPECT_TRUE(ev.diagnostics[0].contains("range"));
  EXPECT_NE(ev.detail.find(ev.diagnosticCodes[0]), std::string::npos) << ev.detail;
  EXPECT_FALSE(ev.timeMs);
  EXPECT_FALSE(ev.modelTimeMs);

  // A race the invariant checker proves (the tiled GEMM without its second barrier).
  std::string racy = argus::testing::withoutLine(argus::testing::readExample("gemm.ag"), "barrier()", 1);
  ev = evaluate(task, racy);
  EXPECT_EQ(ev.verdict, Verdict::CheckFailed) << ev.detail;
  EXPECT_GE(ev.errorCount, 1);
}

TEST(AgentEvaluator, TensorCoreCandidateMatchesAndIsFaster) {
  ScratchDir dir;
  Task task = smallTask(dir);
  std::string tc = replaced(argus::testing::readExample("gemm_tc.ag"), "def gemm_tc(", "def gemm_naive(");
  Evaluation ev = evaluate(task, tc);
  ASSERT_EQ(ev.verdict, Verdict::Ok) << ev.detail;
  Evaluation naive = evaluate(task, task.kernelSource);
  ASSERT_EQ(naive.verdict, Verdict::Ok) << naive.detail;
  EXPECT_LT(*ev.timeMs * 5, *naive.timeMs);
  EXPECT_TRUE(ev.estimate.tensorCores);
  EXPECT_EQ(ev.estimate.pipelineStages, 4);
}

TEST(AgentEvaluator, CalibrationScalesTheModel) {
  ScratchDir dir;
  Task task = smallTask(dir);
  Evaluator evaluator(task, evaluatorOptions(false, 1));
  Candidate candidate;
  candidate.source = task.kernelSource;
  Evaluation before = evaluator.evaluate(candidate);
  ASSERT_EQ(before.verdict, Verdict::Ok) << before.detail;
  evaluator.calibrate({{1.0, 2.5}, {4.0, 10.0}});
  Evaluation after = evaluator.evaluate(candidate);
  ASSERT_EQ(after.verdict, Verdict::Ok) << after.detail;
  // The calibrated time is the verdict's; modelTimeMs stays the model's own, what calibration pairs.
  EXPECT_NEAR(*after.timeMs / *before.timeMs, 2.5, 1e-9);
  EXPECT_NEAR(after.estimate.timeMs / before.estimate.timeMs, 2.5, 1e-9);
  EXPECT_DOUBLE_EQ(*after.modelTimeMs, *before.modelTimeMs);
  EXPECT_DOUBLE_EQ(after.estimate.calibrationScale, 2.5);
  // Calibrating again from the same raw pairs gives the same scale (no compounding).
  evaluator.calibrate({{1.0, 2.5}, {4.0, 10.0}});
  EXPECT_NEAR(*evaluator.evaluate(candidate).timeMs / *before.timeMs, 2.5, 1e-9);
}

TEST(AgentEvaluator, InterpreterFaultsAreRunFailed) {
  ScratchDir dir;
  Task task = smallTask(dir);
  // A requirement the validation shapes break: the interpreter refuses to run it.
  Evaluation ev = evaluate(task, replaced(task.kernelSource, "    acc = zeros(", "    require(K % 16 == 0, \"K must be a multiple of 16\")\n    acc = zeros("));
  EXPECT_EQ(ev.verdict, Verdict::RunFailed) << ev.detail;
  EXPECT_NE(ev.detail.find("K=40"), std::string::npos) << ev.detail;
  EXPECT_GE(ev.errorCount, 1);
  ASSERT_FALSE(ev.diagnosticCodes.empty());
  EXPECT_EQ(ev.diagnostics.size(), ev.diagnosticCodes.size());
  EXPECT_FALSE(ev.timeMs);
}

TEST(AgentEvaluator, ARequirementExcludingTheMeasuredShapeIsRunFailed) {
  ScratchDir dir;
  Task task = smallTask(dir);
  Evaluation ev = evaluate(task, replaced(task.kernelSource, "    acc = zeros(", "    require(M <= 128, \"small M only\")\n    acc = zeros("));
  EXPECT_EQ(ev.verdict, Verdict::RunFailed) << ev.detail;
  EXPECT_NE(ev.detail.find("does not hold at the measured shape"), std::string::npos) << ev.detail;
  EXPECT_FALSE(ev.timeMs);
}

TEST(AgentEvaluator, TheCiTaskRunsWithoutAGpu) {
  std::string error;
  std::optional<Task> task = loadTask(std::string(ARGUS_SOURCE_DIR) + "/examples/agent/gemm_small.task.json", error);
  ASSERT_TRUE(task) << error;
  Evaluation ev = evaluate(*task, task->kernelSource);
  ASSERT_EQ(ev.verdict, Verdict::Ok) << ev.detail;
  EXPECT_EQ(ev.estimate.blocks, 16);
}

TEST(AgentEvaluator, FixedSeedsRepeatAndFreshSeedsDiffer) {
  ScratchDir dir;
  Task task = smallTask(dir);
  std::string wrong = replaced(task.kernelSource, "for kk in range(BK)", "for kk in range(BK - 1)");
  Evaluation a = evaluate(task, wrong, evaluatorOptions(false, 11)), b = evaluate(task, wrong, evaluatorOptions(false, 11));
  EXPECT_EQ(a.verdict, Verdict::Wrong);
  EXPECT_EQ(a.detail, b.detail);
  Evaluation c = evaluate(task, wrong, evaluatorOptions(false, 0)), d = evaluate(task, wrong, evaluatorOptions(false, 0));
  EXPECT_EQ(c.verdict, Verdict::Wrong);
  EXPECT_NE(c.detail, d.detail);  // fresh inputs (and seeds) every evaluation
}

TEST(AgentEvaluator, ABrokenReferenceIsReportedOnEveryEvaluation) {
  ScratchDir dir;
  Task task = smallTask(dir, "def nothing(:\n");
  Evaluation ev = evaluate(task, naiveGemm());
  EXPECT_EQ(ev.verdict, Verdict::RunFailed);
  EXPECT_NE(ev.detail.find("does not check"), std::string::npos) << ev.detail;
}

TEST(AgentEvaluator, NamesAndHashes) {
  EXPECT_STREQ(verdictName(Verdict::Ok), "ok");
  EXPECT_STREQ(verdictName(Verdict::CheckFailed), "check-failed");
  EXPECT_STREQ(verdictName(Verdict::CompileFailed), "compile-failed");
  EXPECT_STREQ(verdictName(Verdict::SignatureChanged), "signature-changed");
  EXPECT_STREQ(verdictName(Verdict::Wrong), "wrong");
  EXPECT_STREQ(verdictName(Verdict::RunFailed), "run-failed");
  EXPECT_EQ(stateHash("a = 1\nb = 2\n"), stateHash("a = 1  \r\nb = 2\n"));
  EXPECT_NE(stateHash("a = 1\n"), stateHash("a = 2\n"));
  EXPECT_EQ(stateHash("x").size(), 16u);
}

}  // namespace
}  // namespace argus::agent
