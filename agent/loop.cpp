#include "agent/loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "agent/planner.h"
#include "agent/rewrite.h"

namespace argus::agent {

namespace {

constexpr int kMaxIdleSteps = 400;          // planner picks that gave no new program
constexpr int kMaxConsecutiveLlmFailures = 3;
constexpr size_t kMaxTrajectory = 40;      // attempts an LLM prompt lists (the newest)
constexpr double kGpuNoiseFraction = 0.003;  // repeated timings of one kernel differ by about this much

std::string nowRunId(uint64_t seed) {
  auto now = std::chrono::system_clock::now();
  auto seconds = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  return "run-" + std::to_string(seconds) + "-" + std::to_string(seed);
}

std::string formatNumber(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

// Takes the result of the first stage of a lineage step that applies;
// `args` trimmed to the parent's own parameters is the adaptation tried
// second (another task's kernel may lack a parameter the lineage set).
RewriteResult rewriteAdapted(const std::string& rewriteId, const std::string& source, const nlohmann::json& args,
                             const KernelFeatures& features) {
  RewriteResult result = rewrite(rewriteId, source, args);
  if (result.applied || !args.is_object()) return result;
  nlohmann::json trimmed = nlohmann::json::object();
  for (const auto& [key, value] : args.items()) {
    if (!value.is_number_integer() || features.constParams.count(key)) trimmed[key] = value;
  }
  if (trimmed == args) return result;
  RewriteResult retry = rewrite(rewriteId, source, trimmed);
  return retry.applied ? retry : result;
}

class AgentRun {
 public:
  AgentRun(const Task& task, const LoopOptions& options) : task_(task), options_(options), rng_(options.seed) {}

  LoopResult run() {
    result_.task = task_;
    result_.runId = nowRunId(options_.seed);
    if (!setUp()) return std::move(result_);
    result_.ok = true;
    evaluateBaseline();
    if (options_.replay) replayLineage();
    search();
    return std::move(result_);
  }

 private:
  // --- set-up ----------------------------------------------------------------------
  bool setUp() {
    std::string error;
    std::string dir = options_.knowledgeDir.empty() ? defaultKnowledgeDir() : options_.knowledgeDir;
    auto knowledge = loadKnowledgeBase(dir, error);
    if (!knowledge) {
      result_.error = "cannot load the knowledge base: " + error;
      return false;
    }
    knowledge_ = std::move(*knowledge);
    memory_ = options_.memory;
    if (!memory_) {
      ownedMemory_ = ExperienceMemory::open(":memory:", error);
      if (!ownedMemory_) {
        result_.error = "cannot open an in-memory experience database: " + error;
        return false;
      }
      memory_ = ownedMemory_.get();
    }
    if (options_.evaluate) {
      result_.timeSource = options_.useGpu ? "gpu" : "model";
    } else {
      EvaluatorOptions evaluatorOptions;
      evaluatorOptions.useGpu = options_.useGpu;
      evaluatorOptions.seed = options_.seed;  // the seed of a sequence: inputs still differ per evaluation
      if (options_.interpreterBudget > 0) evaluatorOptions.interpreterBudget = options_.interpreterBudget;
      evaluator_ = std::make_unique<Evaluator>(task_, evaluatorOptions);
      result_.usedGpu = evaluator_->hasGpu();
      result_.gpuName = evaluator_->gpuName();
      result_.timeSource = result_.usedGpu ? "gpu" : "model";
    }
    PlannerOptions plannerOptions;
    plannerOptions.seed = options_.seed;
    plannerOptions.includeLlmOnly = options_.llm != nullptr;
    planner_ = std::make_unique<Planner>(knowledge_, plannerOptions);
    baselineFeatures_ = analyzeKernel(task_.kernelSource, task_.kernelPath);
    baselineFeatures_.arch = task_.arch;
    taskFeatures_ = taskFeaturesFor(task_, baselineFeatures_);
    warmStart();
    calibrate();
    return true;
  }

  CaseFilter similarTasks(int limit) const {
    CaseFilter filter;
    filter.featureKey = "family";
    filter.featureValue = taskFeatures_.value("family", "");
    filter.limit = limit;
    return filter;
  }

  void warmStart() {
    CaseFilter filter = similarTasks(500);
    auto stats = memory_->actionStats(filter);
    auto cases = memory_->find(filter);
    if (cases.empty()) return;
    planner_->warmStart(stats, cases);
    result_.notes.push_back("warm start: " + std::to_string(cases.size()) + " cases of similar tasks (" +
                            filter.featureValue.value_or("") + ")");
  }

  // Fits the cost model to GPU measurements in memory when this run has no GPU.
  void calibrate() {
    if (!evaluator_ || result_.usedGpu) return;
    CaseFilter filter = similarTasks(500);
    filter.correct = true;
    std::vector<std::pair<double, double>> pairs;
    for (const auto& c : memory_->find(filter)) {
      if (c.timeSource != "gpu" || !c.timeMs || !c.taskFeatures.contains("model_time_ms")) continue;
      const auto& modelled = c.taskFeatures["model_time_ms"];
      if (modelled.is_number() && modelled.get<double>() > 0) pairs.emplace_back(modelled.get<double>(), *c.timeMs);
    }
    if (pairs.empty()) return;
    evaluator_->calibrate(pairs);
    result_.notes.push_back("cost model calibrated from " + std::to_string(pairs.size()) + " GPU-measured cases");
  }

  // --- evaluation and bookkeeping -------------------------------------------------
  int budget() const { return options_.budget > 0 ? options_.budget : std::max(1, task_.candidateBudget); }
  bool budgetLeft() const { return static_cast<int>(result_.candidates.size()) < budget(); }

  const KernelFeatures& featuresOf(int index) {
    const auto& record = result_.candidates[index];
    auto it = features_.find(record.stateHash);
    if (it == features_.end()) {
      KernelFeatures f = analyzeKernel(record.candidate.source, task_.kernelPath);
      f.arch = task_.arch;  // the Hopper rewrites apply only to sm_90a tasks
      it = features_.emplace(record.stateHash, std::move(f)).first;
    }
    return it->second;
  }

  void say(const std::string& line) {
    if (options_.progress) options_.progress(line);
  }

  void note(const std::string& line) {
    result_.notes.push_back(line);
    say("   " + line);
  }

  int addCandidate(Candidate candidate, std::optional<int> parent, const std::string& origin) {
    CandidateRecord record;
    record.index = static_cast<int>(result_.candidates.size());
    record.parent = parent;
    record.origin = origin;
    record.stateHash = stateHash(candidate.source);
    record.evaluation = options_.evaluate ? options_.evaluate(candidate) : evaluator_->evaluate(candidate);
    record.candidate = std::move(candidate);
    const Evaluation& evaluation = record.evaluation;
    const bool ok = evaluation.verdict == Verdict::Ok && evaluation.timeMs && *evaluation.timeMs > 0;
    if (ok && parent) {
      const auto& parentEvaluation = result_.candidates[*parent].evaluation;
      if (parentEvaluation.verdict == Verdict::Ok && parentEvaluation.timeMs)
        record.speedRatio = *parentEvaluation.timeMs / *evaluation.timeMs;
    }
    if (ok && !result_.candidates.empty() && result_.candidates[0].evaluation.verdict == Verdict::Ok &&
        result_.candidates[0].evaluation.timeMs)
      record.speedup = *result_.candidates[0].evaluation.timeMs / *evaluation.timeMs;
    if (ok && record.index == 0) record.speedup = 1.0;
    record.reward = candidateReward(evaluation, record.speedRatio);
    // An LLM candidate's reward goes to the knowledge entry it applied ("llm:<entry>").
    if (record.index > 0) {
      const std::string& action = record.candidate.action;
      if (action.starts_with("llm:")) planner_->update(action.substr(4), nlohmann::json::object(), record.reward);
      else planner_->update(action, record.candidate.actionArgs, record.reward);
    }
    if (ok) {
      auto incumbent = result_.incumbent;
      // A GPU time must beat the incumbent by more than timing noise.
      const double margin = evaluation.timeSource == "gpu" ? 1.0 - kGpuNoiseFraction : 1.0;
      if (!incumbent || *evaluation.timeMs < margin * *result_.candidates[*incumbent].evaluation.timeMs) {
        record.becameIncumbent = true;
        result_.incumbent = record.index;
        result_.evaluationsToBest = record.index + 1;
      }
    }
    if (result_.incumbent) {
      record.incumbentSpeedup =
          record.becameIncumbent ? record.speedup : result_.candidates[*result_.incumbent].speedup;
    }
    record.caseId = remember(record);
    evaluated_[record.stateHash] = record.index;
    if (origin == "replay") ++result_.replayed;
    std::optional<CandidateRecord> incumbentRecord;
    if (result_.incumbent && !record.becameIncumbent) incumbentRecord = result_.candidates[*result_.incumbent];
    if (record.becameIncumbent) incumbentRecord = record;
    say(progressLine(record, incumbentRecord));
    result_.candidates.push_back(std::move(record));
    if (options_.afterCandidate) options_.afterCandidate(result_);
    return result_.candidates.back().index;
  }

  int64_t remember(const CandidateRecord& record) {
    const Evaluation& evaluation = record.evaluation;
    Case c;
    if (record.parent) c.predecessor = result_.candidates[*record.parent].caseId;
    c.runId = result_.runId;
    c.task = task_.name;
    c.taskFeatures = taskFeatures_;
    // The model's prediction beside a GPU time is what later runs without a
    // GPU calibrate the cost model from.
    if (evaluation.modelTimeMs) c.taskFeatures["model_time_ms"] = *evaluation.modelTimeMs;
    c.stateHash = record.stateHash;
    c.action = record.candidate.action;
    c.actionArgs = record.candidate.actionArgs;
    c.diagnosticCodes = evaluation.diagnosticCodes;
    c.diagnostics = evaluation.diagnostics;
    c.compiled = evaluation.verdict != Verdict::CheckFailed && evaluation.verdict != Verdict::CompileFailed;
    c.correct = evaluation.verdict == Verdict::Ok;
    c.timeMs = evaluation.timeMs;
    c.timeSource = evaluation.timeSource;
    c.speedRatio = record.speedRatio;
    c.speedup = record.speedup;
    c.bucket = outcomeBucket(record.speedRatio, c.correct);
    c.confidence = !c.correct ? 1.0 : evaluation.timeSource == "gpu" ? 0.9 : 0.5;
    c.reward = record.reward;
    c.source = record.candidate.source;
    c.verdict = verdictName(evaluation.verdict);
    c.verdictDetail = evaluation.detail;
    c.evidence = evaluation.evidence;
    // A program stored as correct by an earlier run (a weaker check, other
    // inputs) that this evaluation finds wrong: marked, never replayed again.
    if (evaluation.verdict == Verdict::Wrong) {
      int marked = memory_->markWrong(record.stateHash, "run " + result_.runId + ": " + evaluation.detail);
      if (marked > 0)
        note("memory: " + std::to_string(marked) + " stored case(s) of this program, once judged correct, are marked wrong");
    }
    return memory_->record(std::move(c));
  }

  void evaluateBaseline() {
    Candidate baseline;
    baseline.source = task_.kernelSource;
    baseline.action = "baseline";
    baseline.description = "the task's kernel";
    addCandidate(std::move(baseline), std::nullopt, "baseline");
  }

  // --- replay ------------------------------------------------------------------------
  // The chain of actions that led, in an earlier run on a similar task, to
  // its fastest correct case (downstream score breaks ties), replayed from
  // this run's incumbent with each step's args adapted to the kernel.
  void replayLineage() {
    CaseFilter filter = similarTasks(500);
    filter.correct = true;
    std::optional<Case> target;
    double targetScore = 0;
    for (const auto& c : memory_->retrieve(filter)) {
      if (c.runId == result_.runId || !c.speedup || *c.speedup < 1.05 || !c.predecessor) continue;
      if (!target || *c.speedup > *target->speedup + 1e-9) {
        target = c;
        targetScore = memory_->downstreamScore(c.id);
      } else if (std::abs(*c.speedup - *target->speedup) <= 1e-9) {
        double score = memory_->downstreamScore(c.id);
        if (score > targetScore) {
          target = c;
          targetScore = score;
        }
      }
    }
    if (!target) return;
    std::vector<Case> chain{*target};
    std::set<int64_t> seen{target->id};
    while (chain.back().predecessor && chain.size() < 200) {
      auto previous = memory_->get(*chain.back().predecessor);
      if (!previous || seen.count(previous->id)) break;
      seen.insert(previous->id);
      chain.push_back(*previous);
    }
    std::reverse(chain.begin(), chain.end());
    const bool sameStart = chain.front().stateHash == result_.candidates[0].stateHash;
    note("replaying the best lineage of task " + target->task + " (" + std::to_string(chain.size() - 1) +
         " steps to " + formatNumber(*target->speedup, 2) + "x)");
    // Each step applies to the previous step's program, as in the lineage,
    // even when that one was slower: the lineage's speed came from the chain.
    int parent = result_.incumbent.value_or(0);
    for (size_t i = 1; i < chain.size() && budgetLeft(); ++i) {
      const Case& step = chain[i];
      if (!step.invalidated.empty()) {
        note("replay: case " + std::to_string(step.id) + " was found wrong (" + step.invalidated + "); skipped");
        continue;
      }
      Candidate candidate;
      const KnowledgeEntry* entry = knowledge_.find(step.action);
      if (entry && !entry->rewrite.empty()) {
        RewriteResult rewritten =
            rewriteAdapted(entry->rewrite, result_.candidates[parent].candidate.source, step.actionArgs, featuresOf(parent));
        if (!rewritten.applied) {
          note("replay: " + step.action + " does not apply here (" + rewritten.whyNot + ")");
          continue;
        }
        candidate.source = rewritten.source;
        candidate.description = rewritten.description;
      } else if (sameStart) {
        candidate.source = step.source;  // an LLM step: its program, as it was
        candidate.description = "replayed program of case " + std::to_string(step.id);
      } else {
        note("replay: " + step.action + " cannot be redone on this kernel");
        continue;
      }
      candidate.action = step.action;
      candidate.actionArgs = step.actionArgs;
      if (auto seen = evaluated_.find(stateHash(candidate.source)); seen != evaluated_.end()) {
        parent = seen->second;
        continue;
      }
      int index = addCandidate(std::move(candidate), parent, "replay");
      if (result_.candidates[index].evaluation.verdict == Verdict::Ok) parent = index;
    }
  }

  // --- search --------------------------------------------------------------------------
  // The states proposals may start from: a failed latest candidate when a
  // repair matches its diagnostics, else mostly the incumbent, sometimes one
  // of the next-best valid candidates (a slower step can enable a faster one).
  std::vector<int> parentOrder() {
    std::vector<int> order;
    const auto& latest = result_.candidates.back();
    if (latest.evaluation.verdict != Verdict::Ok && !latest.evaluation.diagnosticCodes.empty())
      order.push_back(latest.index);
    std::vector<int> valid;
    for (const auto& record : result_.candidates) {
      if (record.evaluation.verdict == Verdict::Ok && record.evaluation.timeMs) valid.push_back(record.index);
    }
    std::sort(valid.begin(), valid.end(), [&](int a, int b) {
      return *result_.candidates[a].evaluation.timeMs < *result_.candidates[b].evaluation.timeMs;
    });
    // Runners-up within 3x of the incumbent's time: far slower states are
    // not worth an evaluation.
    size_t runnersUp = 0;
    while (runnersUp + 1 < valid.size() && runnersUp < 3 &&
           *result_.candidates[valid[runnersUp + 1]].evaluation.timeMs <=
               3 * *result_.candidates[valid[0]].evaluation.timeMs)
      ++runnersUp;
    if (runnersUp > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < 0.2) {
      int pick = std::uniform_int_distribution<int>(1, static_cast<int>(runnersUp))(rng_);
      std::swap(valid[0], valid[pick]);
    }
    order.insert(order.end(), valid.begin(), valid.end());
    if (order.empty()) order.push_back(0);  // no valid state: repair the baseline
    return order;
  }

  std::vector<Proposal> openProposals(int parent, bool repairsOnly, bool allowLlmOnly) {
    const auto& record = result_.candidates[parent];
    auto proposals = planner_->propose(featuresOf(parent), record.evaluation.diagnosticCodes);
    std::vector<Proposal> open;
    for (auto& p : proposals) {
      if (!allowLlmOnly && p.rewrite.empty()) continue;
      if (repairsOnly) {
        const KnowledgeEntry* entry = knowledge_.find(p.action);
        if (!entry || entry->kind != "repair") continue;
      }
      if (tried_.count(record.stateHash + " " + proposalKey(p.action, p.args))) continue;
      open.push_back(std::move(p));
    }
    return open;
  }

  void search() {
    int idle = 0, step = 0, consecutiveLlmFailures = 0;
    bool llmEnabled = options_.llm != nullptr;
    auto askLlm = [&] {
      if (llmStep()) {
        consecutiveLlmFailures = 0;
      } else if (++consecutiveLlmFailures >= kMaxConsecutiveLlmFailures) {
        llmEnabled = false;
        note("LLM steps stop after " + std::to_string(kMaxConsecutiveLlmFailures) +
             " failures in a row; the knowledge base goes on alone");
      }
    };
    while (budgetLeft() && idle < kMaxIdleSteps) {
      ++step;
      if (llmEnabled && options_.llmEvery > 0 && step % options_.llmEvery == 0) {
        askLlm();
        continue;
      }
      // The first state in parentOrder() with a proposal that fits: one whose
      // proposals all need too much shared memory does not end the search.
      std::optional<int> parent;
      std::optional<size_t> pick;
      std::vector<Proposal> proposals;
      bool onlyOversized = false;
      for (int candidateParent : parentOrder()) {
        const auto& record = result_.candidates[candidateParent];
        bool repairsOnly = record.evaluation.verdict != Verdict::Ok;
        proposals = openProposals(candidateParent, repairsOnly, false);
        if (proposals.empty()) continue;
        pick = planner_->sample(proposals);
        if (!pick) {
          onlyOversized = true;
          continue;
        }
        parent = candidateParent;
        break;
      }
      if (!parent && llmEnabled) {  // the knowledge base is spent: the model may still know more
        askLlm();
        continue;
      }
      if (!parent) {
        note(onlyOversized ? "nothing left to try: every remaining proposal needs more shared memory than a block may have"
                           : "nothing left to try: every applicable rewrite of every valid state was tried");
        break;
      }
      const Proposal& proposal = proposals[*pick];
      const auto& parentRecord = result_.candidates[*parent];
      tried_.insert(parentRecord.stateHash + " " + proposalKey(proposal.action, proposal.args));
      RewriteResult rewritten = rewrite(proposal.rewrite, parentRecord.candidate.source, proposal.args);
      if (!rewritten.applied) {
        ++idle;
        continue;
      }
      std::string hash = stateHash(rewritten.source);
      if (auto seen = evaluated_.find(hash); seen != evaluated_.end()) {
        ++idle;
        continue;
      }
      // A program that can never run at the measured shape costs no evaluation.
      if (auto broken = evaluator_ ? evaluator_->requirementBrokenAtMeasure(rewritten.source) : std::nullopt) {
        if (skippedByRequirement_++ == 0)
          firstSkipped_ = proposalKey(proposal.action, proposal.args) + ": requirement '" + *broken + "'";
        ++idle;
        continue;
      }
      Candidate candidate;
      candidate.source = std::move(rewritten.source);
      candidate.action = proposal.action;
      candidate.actionArgs = proposal.args;
      candidate.description = rewritten.description;
      addCandidate(std::move(candidate), parent, "planner");
    }
    if (skippedByRequirement_ > 0)
      note("skipped without evaluating " + std::to_string(skippedByRequirement_) +
           " rewrite(s) whose kernel cannot run at the measured shape (first: " + firstSkipped_ + ")");
    if (idle >= kMaxIdleSteps) note("stopped: the planner's picks stopped producing new programs");
  }

  static AttemptSummary summary(const CandidateRecord& record) {
    AttemptSummary a;
    a.index = record.index;
    a.parent = record.parent;
    a.origin = record.origin;
    a.action = record.candidate.action;
    a.actionArgs = record.candidate.actionArgs;
    a.verdict = verdictName(record.evaluation.verdict);
    a.reason = record.evaluation.detail;
    a.diagnosticCodes = record.evaluation.diagnosticCodes;
    a.timeMs = record.evaluation.timeMs;
    a.speedup = record.speedup;
    a.reward = record.reward;
    a.becameIncumbent = record.becameIncumbent;
    return a;
  }

  // One LLM rewrite of the incumbent; false when it produced no candidate.
  bool llmStep() {
    ++result_.llmSteps;
    int parent = result_.incumbent.value_or(0);
    const auto& latest = result_.candidates.back();
    LlmStepInput input;
    input.task = &task_;
    input.incumbentSource = result_.candidates[parent].candidate.source;
    // The trajectory (the last kMaxTrajectory attempts) and the model's own last failure.
    const size_t first = result_.candidates.size() > kMaxTrajectory ? result_.candidates.size() - kMaxTrajectory : 0;
    for (size_t i = first; i < result_.candidates.size(); ++i) input.trajectory.push_back(summary(result_.candidates[i]));
    std::optional<int> ownFailure;
    for (const auto& record : result_.candidates)
      if (record.origin == "llm" && record.evaluation.verdict != Verdict::Ok) ownFailure = record.index;
    if (ownFailure) {
      const auto& failed = result_.candidates[*ownFailure];
      input.lastLlmFailure = summary(failed);
      input.lastLlmFailureSource = failed.candidate.source;
      input.lastLlmFailureDiagnostics = failed.evaluation.diagnostics;
    }
    if (!ownFailure || *ownFailure != latest.index) {  // else the hot tier already shows it
      input.latestDiagnostics = latest.evaluation.diagnostics;
      if (latest.evaluation.verdict != Verdict::Ok) input.latestSource = latest.candidate.source;
    }
    CaseFilter filter = similarTasks(6);
    filter.correct = true;
    input.warmCases = memory_->retrieve(filter);
    CaseFilter failures = similarTasks(60);
    failures.correct = false;
    for (Case& c : memory_->find(failures)) {
      if (c.runId == result_.runId || c.action == "baseline" || input.failureCases.size() >= 6) continue;
      input.failureCases.push_back(std::move(c));
    }
    auto proposals = openProposals(parent, false, true);
    if (auto pick = planner_->sample(proposals)) std::swap(proposals[0], proposals[*pick]);
    std::set<std::string> named;
    for (const auto& p : proposals) {
      if (named.insert(p.action).second) input.entries.push_back(knowledge_.find(p.action));
    }
    input.budget = options_.tokenBudget;
    input.budget.window = options_.llm->contextWindow();
    input.budget.generation = options_.llm->maxOutputTokens();
    LlmStepResult step = runLlmStep(*options_.llm, input);
    if (!step.candidate) {  // nothing was applied: no entry is credited
      ++result_.llmFailures;
      note("llm step: " + step.error);
      return false;
    }
    if (auto seen = evaluated_.find(stateHash(step.candidate->source)); seen != evaluated_.end()) {
      note("llm step: the reply repeats candidate #" + std::to_string(seen->second));
      return false;
    }
    addCandidate(std::move(*step.candidate), parent, "llm");
    return true;
  }

  const Task& task_;
  const LoopOptions& options_;
  std::mt19937_64 rng_;
  LoopResult result_;
  KnowledgeBase knowledge_;
  ExperienceMemory* memory_ = nullptr;
  std::unique_ptr<ExperienceMemory> ownedMemory_;
  std::unique_ptr<Evaluator> evaluator_;
  std::unique_ptr<Planner> planner_;
  KernelFeatures baselineFeatures_;
  nlohmann::json taskFeatures_;
  std::map<std::string, KernelFeatures> features_;  // by state hash
  std::map<std::string, int> evaluated_;            // state hash -> candidate index
  std::set<std::string> tried_;                     // "parentHash action args"
  int skippedByRequirement_ = 0;                    // rewrites whose requirements exclude the measured shape
  std::string firstSkipped_;
};

}  // namespace

LoopResult runAgentLoop(const Task& task, const LoopOptions& options) {
  try {
    return AgentRun(task, options).run();
  } catch (const std::exception& e) {
    LoopResult result;
    result.task = task;
    result.error = std::string("internal error: ") + e.what();
    return result;
  }
}

}  // namespace argus::agent
