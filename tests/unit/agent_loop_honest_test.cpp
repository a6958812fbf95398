// Memory and honest evaluation together (issue 23): a program an earlier,
// weaker evaluation stored as the best is re-evaluated when replayed, found
// wrong, marked in memory, and never replayed again.
#include <gtest/gtest.h>

#include "agent/loop.h"
#include "agent/rewrite.h"
#include "tests/unit/agent_eval_test_util.h"

namespace argus::agent {
namespace {

Task smallTask() {
  std::string error;
  auto task = loadTask(std::string(ARGUS_SOURCE_DIR) + "/examples/agent/gemm_small.task.json", error);
  EXPECT_TRUE(task) << error;
  return task.value_or(Task{});
}

LoopResult runReal(const Task& task, ExperienceMemory* memory, int budget) {
  LoopOptions options;
  options.budget = budget;
  options.useGpu = false;
  options.memory = memory;
  return runAgentLoop(task, options);
}

bool mentions(const std::vector<std::string>& notes, const std::string& text) {
  for (const std::string& note : notes)
    if (note.find(text) != std::string::npos) return true;
  return false;
}

TEST(AgentLoopHonest, AStoredCandidateFoundWrongIsMarkedAndNeverReplayed) {
  std::string error;
  auto memory = ExperienceMemory::open(":memory:", error);
  ASSERT_TRUE(memory) << error;
  const Task task = smallTask();
  // What an earlier run stored: the baseline, then an LLM candidate with the
  // wrong B block index (right while one grid axis has a single block, as at
  // every validation shape of the task), judged correct and 3x faster.
  const nlohmann::json features = taskFeaturesFor(task, analyzeKernel(task.kernelSource, task.kernelPath));
  Case baseline;
  baseline.runId = "run-old";
  baseline.task = task.name;
  baseline.taskFeatures = features;
  baseline.stateHash = stateHash(task.kernelSource);
  baseline.action = "baseline";
  baseline.compiled = baseline.correct = true;
  baseline.timeMs = 3.0;
  baseline.speedup = 1.0;
  baseline.source = task.kernelSource;
  const int64_t baselineId = memory->record(baseline);
  Case cheat = baseline;
  cheat.predecessor = baselineId;
  cheat.action = "llm:tiling";
  cheat.source = argus::testing::replaced(task.kernelSource, "[kt * BK + kk, program_id(1)]",
                                          "[kt * BK + kk, program_id(1) + program_id(0) * program_id(1)]");
  cheat.stateHash = stateHash(cheat.source);
  cheat.timeMs = 1.0;
  cheat.speedup = cheat.speedRatio = 3.0;
  cheat.reward = 0.9;
  const int64_t cheatId = memory->record(cheat);

  LoopResult replayed = runReal(task, memory.get(), 2);
  ASSERT_TRUE(replayed.ok) << replayed.error;
  ASSERT_EQ(replayed.candidates.size(), 2u);
  EXPECT_EQ(replayed.candidates[1].origin, "replay");
  EXPECT_EQ(replayed.candidates[1].evaluation.verdict, Verdict::Wrong) << replayed.candidates[1].evaluation.detail;
  EXPECT_FALSE(replayed.candidates[1].becameIncumbent);
  std::optional<Case> marked = memory->get(cheatId);
  ASSERT_TRUE(marked);
  EXPECT_FALSE(marked->correct);
  EXPECT_NE(marked->invalidated.find(replayed.runId), std::string::npos) << marked->invalidated;
  // The new Case stores the verdict, its reason and the evidence.
  CaseFilter thisRun;
  thisRun.runId = replayed.runId;
  thisRun.action = "llm:tiling";
  std::vector<Case> stored = memory->find(thisRun);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].verdict, "wrong");
  EXPECT_NE(stored[0].verdictDetail.find("shape, seed "), std::string::npos) << stored[0].verdictDetail;
  EXPECT_TRUE(stored[0].evidence.contains("failed_at")) << stored[0].evidence.dump();

  LoopResult later = runReal(task, memory.get(), 1);
  ASSERT_TRUE(later.ok) << later.error;
  EXPECT_FALSE(mentions(later.notes, "replaying")) << "a case found wrong was replayed again";
}

}  // namespace
}  // namespace argus::agent
