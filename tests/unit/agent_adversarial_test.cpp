// Candidates built to pass a weak evaluator (issue 23): each computes the right
// thing at small shapes and something else above them. Every one must be
// rejected as `wrong`, and by a shape the evaluator derived, not only by the
// task's own small shapes (which all of them pass).
#include <gtest/gtest.h>

#include <algorithm>

#include <set>

#include "agent/evaluator.h"
#include "tests/unit/agent_eval_test_util.h"

namespace argus::agent {
namespace {

using argus::testing::naiveGemm;
using argus::testing::replaced;
using argus::testing::ScratchDir;

EvaluatorOptions offline(uint64_t seed) {
  EvaluatorOptions o;
  o.useGpu = false;
  o.seed = seed;
  return o;
}

Task loaded(const std::string& path) {
  std::string error;
  std::optional<Task> task = loadTask(path, error);
  EXPECT_TRUE(task) << error;
  return task.value_or(Task{});
}

Evaluation evaluate(const Task& task, const std::string& source, uint64_t seed = 5) {
  Evaluator evaluator(task, offline(seed));
  Candidate candidate;
  candidate.source = source;
  return evaluator.evaluate(candidate);
}

// Only the task's own shapes: what the evaluator validated before issue 23.
bool passesTheTaskShapesAlone(Task task, const std::string& source) {
  task.measure = task.validate.front();  // every derived shape collapses onto small ones
  for (const Sizes& shape : task.validate) {
    Task one = task;
    one.validate = {shape};
    one.measure = shape;
    if (evaluate(one, source).verdict != Verdict::Ok) return false;
  }
  return true;
}

std::string failedRole(const Evaluation& ev) {
  return ev.evidence.contains("failed_at") ? ev.evidence["failed_at"].value("role", "") : "";
}

class GemmAdversaries : public ::testing::Test {
 protected:
  void SetUp() override { task = loaded(argus::testing::writeSmallTask(dir, naiveGemm())); }

  void expectRejected(const std::string& candidate, const std::string& why) {
    SCOPED_TRACE(why);
    EXPECT_TRUE(passesTheTaskShapesAlone(task, candidate)) << "the adversary should pass the task's small shapes";
    Evaluation ev = evaluate(task, candidate);
    EXPECT_EQ(ev.verdict, Verdict::Wrong) << ev.detail;
    EXPECT_FALSE(ev.timeMs);
    EXPECT_NE(failedRole(ev), "task") << ev.evidence.dump();
    EXPECT_NE(failedRole(ev), "") << ev.evidence.dump();
    EXPECT_NE(ev.detail.find("shape, seed "), std::string::npos) << ev.detail;
  }

  ScratchDir dir;
  Task task;
};

TEST_F(GemmAdversaries, WorkSkippedAboveASize) {
  expectRejected(replaced(naiveGemm(), "    for kt in range(cdiv(K, BK)):\n",
                          "    trips = cdiv(K, BK)\n    if K > 128:\n        trips = 0\n    for kt in range(trips):\n"),
                 "no work at all when K > 128");
}

TEST_F(GemmAdversaries, CappedTripCount) {
  expectRejected(replaced(naiveGemm(), "    for kt in range(cdiv(K, BK)):\n",
                          "    trips = cdiv(K, BK)\n    if trips > 4:\n        trips = 4\n    for kt in range(trips):\n"),
                 "the K loop stops after 64 elements");
}

TEST_F(GemmAdversaries, PartialOutput) {
  // Only the first row of blocks stores. The interpreter sees it only when the grid
  // has two block rows; the checker's AG2040 (every element of an output is
  // written) rejects it at any task shape, before anything runs.
  std::string candidate =
      replaced(naiveGemm(), "    C.tile((BM, BN))[program_id(0), program_id(1)] = cast(acc, bf16)",
               "    if program_id(0) == 0:\n        C.tile((BM, BN))[program_id(0), program_id(1)] = cast(acc, bf16)");
  Evaluation ev = evaluate(task, candidate);
  EXPECT_EQ(ev.verdict, Verdict::CheckFailed) << ev.detail;
  EXPECT_NE(std::find(ev.diagnosticCodes.begin(), ev.diagnosticCodes.end(), "AG2040"), ev.diagnosticCodes.end())
      << ev.detail;
  EXPECT_FALSE(ev.timeMs);
}

TEST_F(GemmAdversaries, WrongBlockIndexAtMultiTileSizes) {
  // Right whenever one grid axis has a single block, as at every task shape.
  expectRejected(replaced(naiveGemm(), "[kt * BK + kk, program_id(1)]",
                          "[kt * BK + kk, program_id(1) + program_id(0) * program_id(1)]"),
                 "B's block index is wrong when both grid axes have two blocks");
}

TEST_F(GemmAdversaries, AnHonestRewritePasses) {
  Evaluation ev = evaluate(task, replaced(naiveGemm(), "BN: const = 64", "BN: const = 32"));
  ASSERT_EQ(ev.verdict, Verdict::Ok) << ev.detail;
  // Evidence: the seed, and every shape with its role and largest error.
  ASSERT_TRUE(ev.evidence.contains("seed"));
  std::set<std::string> roles;
  for (const auto& shape : ev.evidence["shapes"]) {
    roles.insert(shape.value("role", ""));
    EXPECT_TRUE(shape.contains("max_error")) << shape.dump();
    EXPECT_TRUE(shape["sizes"].is_object()) << shape.dump();
  }
  EXPECT_TRUE(roles.count("task") && roles.count("tiles") && roles.count("ragged")) << ev.evidence.dump();
}

TEST(AgentValidationShapes, TilesCoverTwoTilesPerAxisAndStagesPlusOneTrips) {
  ScratchDir dir;
  Task task = loaded(argus::testing::writeSmallTask(dir, naiveGemm()));
  std::string tc = replaced(argus::testing::readExample("gemm_tc.ag"), "def gemm_tc(", "def gemm_naive(");
  tc = replaced(replaced(tc, "BM: const = 128", "BM: const = 64"), "BN: const = 128", "BN: const = 32");
  Evaluation ev = evaluate(task, tc);
  ASSERT_EQ(ev.verdict, Verdict::Ok) << ev.detail;
  EXPECT_EQ(ev.evidence["trip_target"], 5);  // STAGES = 4
  bool sawTiles = false;
  for (const auto& shape : ev.evidence["shapes"]) {
    if (shape["role"] != "tiles") continue;
    sawTiles = true;
    EXPECT_EQ(shape["sizes"]["M"], 128) << shape.dump();      // 2 tiles of BM = 64
    EXPECT_EQ(shape["sizes"]["N"], 64) << shape.dump();       // 2 tiles of BN = 32
    EXPECT_EQ(shape["sizes"]["K"], 5 * 32) << shape.dump();   // STAGES + 1 trips of BK = 32
  }
  EXPECT_TRUE(sawTiles) << ev.evidence.dump();
}

TEST(AgentValidationShapes, EveryEvaluationDrawsAFreshSeed) {
  ScratchDir dir;
  Task task = loaded(argus::testing::writeSmallTask(dir, naiveGemm()));
  task.measure = {{"M", 64}, {"N", 64}, {"K", 32}};
  Evaluator evaluator(task, offline(9));
  Candidate candidate;
  candidate.source = task.kernelSource;
  Evaluation first = evaluator.evaluate(candidate), second = evaluator.evaluate(candidate);
  ASSERT_EQ(first.verdict, Verdict::Ok) << first.detail;
  EXPECT_NE(first.evidence["seed"], second.evidence["seed"]);
  // The same options repeat the same sequence.
  Evaluator again(task, offline(9));
  EXPECT_EQ(again.evaluate(candidate).evidence["seed"], first.evidence["seed"]);
}

TEST(AgentValidationShapes, SoftmaxOverAPrefixOfTheRowIsWrong) {
  ScratchDir dir;
  std::string softmax = argus::testing::readExample("softmax.ag");
  dir.write("softmax.ag", softmax);
  Task task = loaded(dir.write("softmax.task.json", R"({"name": "softmax", "kernel": "softmax.ag",
    "validate": [{"M": 37, "N": 100}, {"M": 5, "N": 60}], "measure": {"M": 8192, "N": 1000}})"));
  // Normalizes over the first 128 columns only: right while rows are that short.
  std::string prefix = replaced(softmax, "    m = max(t, axis=1)\n",
                                "    t = where(iota((ROWS, BN), 1) < 128, t, -inf)\n    m = max(t, axis=1)\n");
  EXPECT_TRUE(passesTheTaskShapesAlone(task, prefix));
  Evaluation ev = evaluate(task, prefix);
  EXPECT_EQ(ev.verdict, Verdict::Wrong) << ev.detail;
  EXPECT_NE(failedRole(ev), "task") << ev.evidence.dump();
  // Nothing tiles along N (one tile holds a row): it is validated at its measured extent.
  Evaluation honest = evaluate(task, softmax);
  ASSERT_EQ(honest.verdict, Verdict::Ok) << honest.detail;
  bool fullRows = false;
  for (const auto& shape : honest.evidence["shapes"]) fullRows |= shape["sizes"]["N"] == 1000;
  EXPECT_TRUE(fullRows) << honest.evidence.dump();
}

TEST(AgentValidationShapes, DerivedShapesKeepTheTasksPromises) {
  // A TMA kernel requires K % 8 == 0 and N % 8 == 0 (16-byte rows of A and B). The task
  // promises them; the evaluator's derived shapes (ragged, stretched) keep the promise,
  // and every shape still runs.
  std::string nn = replaced(argus::testing::readExample("gemm_nn.ag"), "def gemm_nn(", "def gemm_naive(");
  ScratchDir dir;
  dir.write("kernel.ag", naiveGemm());
  Task task = loaded(dir.write("h.task.json", R"({"kernel": "kernel.ag", "arch": "sm_90a",
    "validate": [{"M": 64, "N": 48, "K": 40}, {"M": 33, "N": 72, "K": 24}],
    "measure": {"M": 512, "N": 1000, "K": 1000}, "multiple_of": {"K": 8, "N": 8}})"));
  Evaluation ev = evaluate(task, nn);
  ASSERT_EQ(ev.verdict, Verdict::Ok) << ev.detail;
  std::set<std::string> roles;
  for (const auto& shape : ev.evidence["shapes"]) {
    roles.insert(shape.value("role", ""));
    EXPECT_EQ(shape["sizes"]["K"].get<int64_t>() % 8, 0) << shape.dump();
    EXPECT_EQ(shape["sizes"]["N"].get<int64_t>() % 8, 0) << shape.dump();
  }
  EXPECT_TRUE(roles.count("tiles") && roles.count("ragged")) << ev.evidence.dump();
  // Without the promise, the task's own K = 17 shape is one the kernel refuses to run.
  Task unpromised = loaded(argus::testing::writeSmallTask(dir, naiveGemm(), R"(, "arch": "sm_90a")"));
  Evaluation refused = evaluate(unpromised, nn);
  EXPECT_EQ(refused.verdict, Verdict::RunFailed) << refused.detail;
  EXPECT_NE(refused.detail.find("K % 8 == 0"), std::string::npos) << refused.detail;
}

}  // namespace
}  // namespace argus::agent
