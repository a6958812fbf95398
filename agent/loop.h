// The agent loop: plan -> rewrite -> check -> compile -> validate -> measure
// -> remember, for one task (a .ag kernel plus a task file).
//
// Every candidate is derived from a parent state (usually the incumbent, the
// fastest valid candidate so far; a failed candidate when a repair entry
// matches its diagnostics), evaluated by the Evaluator (the same diagnostics
// `argusc --diagnostics-format=json` prints), scored into a reward the
// planner learns from, and recorded in the experience memory as a Case linked
// to its parent's Case. Only Ok candidates can become the incumbent. With a
// memory that holds a similar task, the planner's values are warm-started
// from it and the best lineage found there is replayed first.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/context.h"
#include "agent/evaluator.h"
#include "agent/knowledge.h"
#include "agent/llm.h"
#include "agent/memory.h"
#include "agent/task.h"

namespace argus::agent {

struct LoopResult;

struct LoopOptions {
  int budget = 0;                // candidates to evaluate, baseline included; 0: the task's budget
  uint64_t seed = 1;
  bool useGpu = true;            // false: CPU-interpreter validation, cost-model ranking
  std::string knowledgeDir;      // empty: defaultKnowledgeDir()
  ExperienceMemory* memory = nullptr;  // nullptr: an in-memory database for this run
  LlmProvider* llm = nullptr;          // nullptr: offline (knowledge-base rewrites only)
  int llmEvery = 2;              // with an LLM: every llmEvery-th step is an LLM rewrite
  TokenBudget tokenBudget;       // its window and generation come from the LLM provider
  bool replay = true;            // replay the best lineage of a similar task first
  double interpreterBudget = 0;  // EvaluatorOptions::interpreterBudget; 0: its default
  // Test hook: evaluates instead of an Evaluator built from the task.
  std::function<Evaluation(const Candidate&)> evaluate;
  // One line per candidate (and per step that produced none), as it happens.
  std::function<void(const std::string&)> progress;
  // After every recorded candidate, with the run so far (the CLI rewrites the
  // report each time, so a run that is stopped leaves one behind).
  std::function<void(const LoopResult&)> afterCandidate;
};

struct CandidateRecord {
  int index = 0;                 // 0: the baseline
  std::optional<int> parent;     // index of the state it was derived from
  Candidate candidate;
  Evaluation evaluation;
  std::string stateHash;
  int64_t caseId = 0;
  std::optional<double> speedRatio;  // over the parent (both Ok)
  std::optional<double> speedup;     // over the baseline (both Ok)
  double reward = 0;
  bool becameIncumbent = false;
  std::optional<double> incumbentSpeedup;  // after this candidate
  std::string origin = "planner";          // "baseline" | "planner" | "replay" | "llm"
};

struct LoopResult {
  bool ok = false;               // false: the loop could not start (error says why)
  std::string error;
  Task task;
  std::string runId;
  bool usedGpu = false;
  std::string gpuName;
  std::string timeSource;        // "gpu" | "model"
  std::vector<CandidateRecord> candidates;
  std::optional<int> incumbent;  // index of the best Ok candidate
  std::optional<int> evaluationsToBest;  // candidates evaluated up to the incumbent, baseline included
  int replayed = 0;              // candidates that came from a replayed lineage
  int llmSteps = 0, llmFailures = 0;     // LLM calls, and those that gave no candidate
  std::vector<std::string> notes;        // steps that gave no candidate, warm start, calibration
  std::optional<double> baselineMs() const;
  std::optional<double> bestMs() const;
  std::optional<double> bestSpeedup() const;
  std::optional<double> bestTflops() const;
};

LoopResult runAgentLoop(const Task& task, const LoopOptions& options);

// "#3 set_params {BM:128} <- #1: ok, 1.234 ms (model), 2.10x, incumbent #3".
std::string progressLine(const CandidateRecord& record, const std::optional<CandidateRecord>& incumbent);

// What the memory stores about a task to find similar ones: op ("dot" or the
// kernel name), dtype of the first tensor, the measure sizes, kernel tags,
// and "family" (op/dtype), the key similar tasks are retrieved by.
nlohmann::json taskFeaturesFor(const Task& task, const KernelFeatures& baseline);

// --- the LLM path (llm_step.cpp) -------------------------------------------------

// One earlier attempt of this run, as the model sees it in its trajectory.
struct AttemptSummary {
  int index = 0;
  std::optional<int> parent;
  std::string origin;              // "baseline" | "planner" | "replay" | "llm"
  std::string action;
  nlohmann::json actionArgs = nlohmann::json::object();
  std::string verdict;             // verdictName()
  std::string reason;              // Evaluation::detail: why it failed, or what validated it
  std::vector<std::string> diagnosticCodes;
  std::optional<double> timeMs, speedup;
  double reward = 0;
  bool becameIncumbent = false;
};

struct LlmStepInput {
  const Task* task = nullptr;
  std::string incumbentSource;
  nlohmann::json latestDiagnostics = nlohmann::json::array();  // of the latest candidate
  std::string latestSource;        // the latest candidate when it failed (shown as a warm item)
  std::vector<AttemptSummary> trajectory;  // this run's attempts, oldest first
  // The model's own most recent failed attempt, shown every step (hot tier).
  std::optional<AttemptSummary> lastLlmFailure;
  std::string lastLlmFailureSource;
  nlohmann::json lastLlmFailureDiagnostics = nlohmann::json::array();
  std::vector<Case> warmCases;     // retrieved from memory: what worked on similar tasks
  std::vector<Case> failureCases;  // retrieved from memory: what failed there, and why
  std::vector<const KnowledgeEntry*> entries;  // applicable knowledge; the first is the focus
  TokenBudget budget;              // window and generation from the provider
};

struct LlmStepResult {
  std::optional<Candidate> candidate;  // the reply's kernel, unevaluated
  std::string error;                   // why there is none
  BuiltPrompt prompt;
  LlmReply reply;
};

// The system message every LLM step sends.
std::string llmSystemPrompt();
// The context items of one step (hot: task, incumbent, latest diagnostics, the
// model's own last failure; warm: the trajectory, the failed attempt, cases
// that worked and failure modes from memory; cold: the entries' prompt fragments).
std::vector<ContextItem> llmContextItems(const LlmStepInput& input);
// Builds the prompt, asks the provider, extracts the kernel. Never throws.
LlmStepResult runLlmStep(LlmProvider& provider, const LlmStepInput& input);

}  // namespace argus::agent
