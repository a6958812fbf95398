// The agent loop on the shipped knowledge base and rewrites: a stand-in
// evaluator keeps the search logic fast to test (improvement, memory
// records and links, duplicate states, repairs, the reward-hacking guard,
// lineage replay); one run with the real Evaluator and cost model covers the
// whole path on examples/agent/gemm_small.task.json.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "agent/loop.h"
#include "agent/report.h"
#include "agent/rewrite.h"

namespace argus::agent {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("argus_agent_loop_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Task smallTask() {
  std::string error;
  auto task = loadTask(std::string(ARGUS_SOURCE_DIR) + "/examples/agent/gemm_small.task.json", error);
  EXPECT_TRUE(task) << error;
  return task ? *task : Task{};
}

int64_t param(const KernelFeatures& f, const char* name, int64_t fallback) {
  auto it = f.constParams.find(name);
  return it == f.constParams.end() ? fallback : it->second;
}

// A deterministic stand-in for the Evaluator: speed grows with shared
// staging, pipelining, tensor cores and tile area; tiles over 128x128 fail
// the (pretend) register check with AG2033; a swizzled kernel pretends to be
// very fast but computes the wrong thing, which must never win.
// With `stagingAloneIsSlower`, shared staging without tensor cores or a
// pipeline is slower than the naive kernel (what a lineage replay must
// follow through).
Evaluation standInEvaluate(const Candidate& candidate, bool stagingAloneIsSlower = false) {
  KernelFeatures f = analyzeKernel(candidate.source);
  Evaluation e;
  e.timeSource = "model";
  if (!f.parsed) {
    e.verdict = Verdict::CheckFailed;
    e.errorCount = 1;
    e.diagnosticCodes = {"AG1001"};
    e.diagnostics = nlohmann::json::array({{{"code", "AG1001"}, {"severity", "error"}, {"message", "syntax"}}});
    e.detail = "AG1001: does not parse";
    return e;
  }
  int64_t bm = param(f, "BM", 64), bn = param(f, "BN", 64);
  if (bm * bn > 128 * 128) {
    e.verdict = Verdict::CheckFailed;
    e.errorCount = 1;
    e.diagnosticCodes = {"AG2033"};
    e.diagnostics = nlohmann::json::array(
        {{{"code", "AG2033"}, {"severity", "error"}, {"message", "the accumulator needs too many registers"}}});
    e.detail = "AG2033 at 3:5: too many registers";
    return e;
  }
  if (f.usesSwizzle) {
    e.verdict = Verdict::Wrong;
    e.timeMs = 1e-4;
    e.detail = "C[0,0] = 3 but the reference computes 2";
    return e;
  }
  double staging = !f.usesShared ? 1.0 : stagingAloneIsSlower && !f.usesMmaLayout && !f.usesPipelined ? 0.9 : 2.0;
  double speed = staging * (f.usesPipelined ? 1.5 : 1.0) * (f.usesMmaLayout ? 4.0 : 1.0) *
                 std::sqrt(static_cast<double>(bm * bn) / 4096.0);
  e.verdict = Verdict::Ok;
  e.timeMs = 10.0 / speed;
  e.modelTimeMs = e.timeMs;
  return e;
}

struct RunOutcome {
  LoopResult result;
  std::vector<std::string> lines;
  std::vector<size_t> seenCounts;  // candidates in the run at each afterCandidate call
};

RunOutcome runStandIn(const Task& task, ExperienceMemory* memory, int budget, uint64_t seed,
                      bool stagingAloneIsSlower = false) {
  RunOutcome run;
  LoopOptions options;
  options.budget = budget;
  options.seed = seed;
  options.useGpu = false;
  options.memory = memory;
  options.evaluate = [stagingAloneIsSlower](const Candidate& c) { return standInEvaluate(c, stagingAloneIsSlower); };
  options.progress = [&](const std::string& line) { run.lines.push_back(line); };
  options.afterCandidate = [&](const LoopResult& partial) { run.seenCounts.push_back(partial.candidates.size()); };
  run.result = runAgentLoop(task, options);
  return run;
}

TEST(AgentLoop, ImprovesRecordsEveryCaseAndNeverCrownsAnInvalidCandidate) {
  fs::path dir = freshDir("record");
  std::string error;
  auto memory = ExperienceMemory::open((dir / "memory.db").string(), error);
  ASSERT_TRUE(memory) << error;
  Task task = smallTask();
  RunOutcome run = runStandIn(task, memory.get(), 14, 1);
  const LoopResult& result = run.result;
  ASSERT_TRUE(result.ok) << result.error;
  ASSERT_GE(result.candidates.size(), 6u);
  EXPECT_LE(result.candidates.size(), 14u);
  EXPECT_EQ(result.candidates[0].origin, "baseline");
  ASSERT_TRUE(result.incumbent);
  EXPECT_GT(*result.bestSpeedup(), 1.9);
  EXPECT_EQ(*result.evaluationsToBest, *result.incumbent + 1);

  std::set<std::string> hashes;
  int progressLines = 0;
  for (const auto& line : run.lines) progressLines += line.starts_with("#");
  EXPECT_EQ(progressLines, static_cast<int>(result.candidates.size()));
  // afterCandidate saw the run grow by one candidate at a time.
  ASSERT_EQ(run.seenCounts.size(), result.candidates.size());
  for (size_t i = 0; i < run.seenCounts.size(); ++i) EXPECT_EQ(run.seenCounts[i], i + 1);
  CaseFilter mine;
  mine.runId = result.runId;
  mine.limit = 1000;
  auto cases = memory->find(mine);
  EXPECT_EQ(cases.size(), result.candidates.size());
  for (const auto& record : result.candidates) {
    EXPECT_TRUE(hashes.insert(record.stateHash).second) << "state evaluated twice: #" << record.index;
    if (record.becameIncumbent) {
      EXPECT_EQ(record.evaluation.verdict, Verdict::Ok) << "#" << record.index;
    }
    auto stored = memory->get(record.caseId);
    ASSERT_TRUE(stored) << "#" << record.index;
    EXPECT_EQ(stored->action, record.candidate.action);
    EXPECT_EQ(stored->stateHash, record.stateHash);
    EXPECT_EQ(stored->taskFeatures.value("family", ""), "gemm/bf16");
    EXPECT_EQ(stored->correct, record.evaluation.verdict == Verdict::Ok);
    if (record.parent) {
      ASSERT_TRUE(stored->predecessor);
      EXPECT_EQ(*stored->predecessor, result.candidates[*record.parent].caseId);
    } else {
      EXPECT_FALSE(stored->predecessor);
    }
  }
  EXPECT_EQ(result.candidates[*result.incumbent].evaluation.verdict, Verdict::Ok);
  fs::remove_all(dir);
}

TEST(AgentLoop, RepairsAFailedCandidateFromItsDiagnostics) {
  std::string error;
  auto memory = ExperienceMemory::open(":memory:", error);
  ASSERT_TRUE(memory) << error;
  RunOutcome run = runStandIn(smallTask(), memory.get(), 24, 2);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  // Some candidate failed with AG2033 and a repair entry was tried on it.
  bool repaired = false;
  for (const auto& record : run.result.candidates) {
    if (!record.parent) continue;
    const auto& parent = run.result.candidates[*record.parent];
    if (parent.evaluation.verdict == Verdict::CheckFailed &&
        record.candidate.action.starts_with("repair_"))
      repaired = true;
  }
  EXPECT_TRUE(repaired) << "no repair among " << run.result.candidates.size() << " candidates";
}

TEST(AgentLoop, SecondRunReplaysTheBestLineageFirst) {
  std::string error;
  auto memory = ExperienceMemory::open(":memory:", error);
  ASSERT_TRUE(memory) << error;
  Task first = smallTask();
  RunOutcome one = runStandIn(first, memory.get(), 16, 3);
  ASSERT_TRUE(one.result.ok && one.result.incumbent) << one.result.error;
  ASSERT_GT(*one.result.bestSpeedup(), 1.05);

  Task second = first;  // a similar task: same kernel family, another shape
  second.name = "gemm_small_wide";
  second.measure = {{"M", 512}, {"N", 128}, {"K", 256}};
  // On it, the lineage's first step alone is slower: the replay goes on anyway.
  RunOutcome two = runStandIn(second, memory.get(), 16, 4, true);
  ASSERT_TRUE(two.result.ok && two.result.incumbent) << two.result.error;
  ASSERT_GE(two.result.replayed, 1);
  EXPECT_EQ(two.result.candidates[1].origin, "replay");
  EXPECT_GE(*two.result.bestSpeedup(), *one.result.bestSpeedup() - 1e-9);
  // The replayed lineage reaches the first run's best speed right away.
  int reached = 0;
  for (const auto& record : two.result.candidates) {
    if (record.speedup && *record.speedup >= *one.result.bestSpeedup() - 1e-9) {
      reached = record.index + 1;
      break;
    }
  }
  ASSERT_GT(reached, 0);
  EXPECT_LE(reached, two.result.replayed + 1);
  EXPECT_LE(reached, *one.result.evaluationsToBest)
      << "first run: best after " << *one.result.evaluationsToBest << ", second run: " << reached;
  bool warmStarted = false;
  for (const auto& note : two.result.notes) warmStarted |= note.starts_with("warm start");
  EXPECT_TRUE(warmStarted);
}

TEST(AgentLoop, BadKnowledgeDirectoryIsAClearError) {
  LoopOptions options;
  options.knowledgeDir = "/nonexistent/argus/knowledge";
  options.evaluate = [](const Candidate& c) { return standInEvaluate(c); };
  LoopResult result = runAgentLoop(smallTask(), options);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("knowledge"), std::string::npos) << result.error;
}

// The whole path: the real Evaluator (CPU interpreter, cost model), memory in
// a temporary SQLite file, the report files.
TEST(AgentLoop, RealEvaluatorImprovesGemmSmallUnderTheCostModel) {
  fs::path dir = freshDir("real");
  std::string error;
  auto memory = ExperienceMemory::open((dir / "memory.db").string(), error);
  ASSERT_TRUE(memory) << error;
  LoopOptions options;
  options.budget = 4;
  options.useGpu = false;
  options.memory = memory.get();
  LoopResult result = runAgentLoop(smallTask(), options);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.timeSource, "model");
  ASSERT_EQ(result.candidates[0].evaluation.verdict, Verdict::Ok) << result.candidates[0].evaluation.detail;
  ASSERT_TRUE(result.incumbent);
  EXPECT_GT(*result.bestSpeedup(), 1.0);
  CaseFilter mine;
  mine.runId = result.runId;
  EXPECT_EQ(memory->find(mine).size(), result.candidates.size());

  ASSERT_TRUE(writeReport(result, (dir / "report").string(), error)) << error;
  for (const char* name : {"report.md", "report.json", "speed.png", "best.ag"})
    EXPECT_TRUE(fs::exists(dir / "report" / name)) << name;
  std::ifstream png(dir / "report" / "speed.png", std::ios::binary);
  std::string signature(8, '\0');
  png.read(signature.data(), 8);
  EXPECT_EQ(signature, std::string("\x89PNG\r\n\x1a\n", 8));
  fs::remove_all(dir);
}


// The naive softmax keeps a whole row in one tile (require(N <= BLOCK)); halving
// BLOCK gives a kernel that can never run at the measured 8192 columns. Such a
// rewrite is skipped before evaluation (it was evaluated, as run-failed, once
// from every parent: 5 of the first 12 evaluations).
TEST(AgentLoop, RewritesThatCannotRunAtTheMeasuredShapeCostNoEvaluation) {
  std::string error;
  auto task = loadTask(std::string(ARGUS_SOURCE_DIR) + "/examples/agent/softmax_8192.task.json", error);
  ASSERT_TRUE(task) << error;
  LoopOptions options;
  options.budget = 6;
  options.useGpu = false;
  LoopResult result = runAgentLoop(*task, options);
  ASSERT_TRUE(result.ok) << result.error;
  ASSERT_GE(result.candidates.size(), 3u);
  for (const auto& record : result.candidates)
    EXPECT_EQ(record.evaluation.detail.find("does not hold at the measured shape"), std::string::npos)
        << "#" << record.index << " " << record.evaluation.detail;
  bool noted = false;
  for (const auto& line : result.notes) noted |= line.find("N <= BLOCK") != std::string::npos;
  EXPECT_TRUE(noted) << "the skipped rewrites are reported";
}

}  // namespace
}  // namespace argus::agent
