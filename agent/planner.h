// The planner: in-context reinforcement learning over the knowledge base.
// It turns the applicable knowledge entries (and each entry's parameter
// alternatives) into ranked proposals, drops the ones whose coupled choices
// (stages x tile sizes x element size) would need more shared memory than an
// SM has before anything is evaluated, samples among the rest (softmax over
// values, not always the top), and updates its values from rewards that
// combine dense invariant penalties (every checker/compiler error and warning
// costs) with the measured speed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/evaluator.h"
#include "agent/knowledge.h"
#include "agent/memory.h"

namespace argus::agent {

// 227 KiB: the most dynamic shared memory one block may use on sm_90.
inline constexpr int64_t kSharedMemoryLimitBytes = 227 * 1024;

struct Proposal {
  std::string action;       // knowledge entry name
  std::string rewrite;      // rewrite id; empty: the entry is LLM-only
  nlohmann::json args = nlohmann::json::object();
  std::string context;      // why it applies ("tags: dot, shared; diagnostics: AG2031")
  std::vector<std::string> invariants;
  std::string summary;      // the entry's one-line summary
  double score = 0;         // the planner's value estimate
  std::optional<int64_t> sharedBytes;  // estimated shared memory per block after the step
  std::string rejectedWhy;  // non-empty: filtered out before evaluation
};

struct PlannerOptions {
  uint64_t seed = 1;
  double temperature = 0.12;         // softmax temperature over values in [0, 1]
  int64_t sharedLimitBytes = kSharedMemoryLimitBytes;
  bool includeLlmOnly = false;       // propose entries without a deterministic rewrite
};

// The reward r_v of one evaluated candidate, in [0, 1]: a valid candidate
// earns 0.1 + 0.8 * (0.5 + 0.5 * tanh(2 * log2(speed over its predecessor)))
// (0.5 for no change) less 0.01 per warning; an invalid one at most 0.1
// (check failed; compile failed 0.06, run failed 0.03), less 0.02 per error
// and 0.01 per warning (the dense invariant signal), with wrong results and
// signature changes worth nothing. Every valid step outranks every invalid one.
double candidateReward(const Evaluation& evaluation, std::optional<double> speedRatio);

// Shared memory per block implied by `params` (the kernel's constants with
// the proposal's args over them): the entry's `constraints.shared_bytes`
// expression when it has one (STAGES times `constraints.shared_bytes_per_stage`
// for that form; sizeof(dtype) is the operands' element size), otherwise
// STAGES * (BM*BK + BK*BN) * element bytes; 0 when the kernel does not and
// will not stage through shared memory; nothing when a size is unknown.
// An entry's `constraints.max_shared_bytes` lowers the planner's limit.
std::optional<int64_t> estimateSharedBytes(const KnowledgeEntry& entry, const KernelFeatures& features,
                                           const nlohmann::json& args);

class Planner {
 public:
  Planner(const KnowledgeBase& knowledge, PlannerOptions options);

  // Every applicable (entry, alternative) for a kernel with these features and
  // diagnostic codes, ranked by score (highest first); rejected proposals
  // (shared memory over the limit) are returned after the others with
  // rejectedWhy set and are never sampled.
  std::vector<Proposal> propose(const KernelFeatures& features,
                                const std::vector<std::string>& diagnosticCodes) const;

  // Samples among the proposals that are not rejected: first an action by a
  // softmax over its best alternative's score, then an alternative by a
  // softmax within the action. Nothing when every proposal is rejected.
  std::optional<size_t> sample(const std::vector<Proposal>& proposals);

  // Learns from one reward (weight 1 = one observation).
  void update(const std::string& action, const nlohmann::json& args, double reward, double weight = 1);
  // Warm start from memory: action-level statistics and per-alternative cases
  // of similar tasks (each counted as half an observation; a case clearly
  // slower than its predecessor, or wrong, as a whole one).
  void warmStart(const std::vector<ExperienceMemory::ActionStats>& stats, const std::vector<Case>& cases);

  double value(const std::string& action, const nlohmann::json& args) const;
  double actionValue(const std::string& action) const;
  int observations(const std::string& action) const;
  const KnowledgeBase& knowledge() const { return knowledge_; }

 private:
  struct Estimate {
    double sum = 0, count = 0;
  };
  double prior(const std::string& action) const;

  const KnowledgeBase& knowledge_;
  PlannerOptions options_;
  std::mt19937_64 rng_;
  std::map<std::string, Estimate> byAction_, byAlternative_;
};

// A stable key for (action, args), e.g. "set_params {\"BM\":128}".
std::string proposalKey(const std::string& action, const nlohmann::json& args);

}  // namespace argus::agent
