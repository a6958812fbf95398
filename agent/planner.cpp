#include "agent/planner.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace argus::agent {

namespace {

// Evaluates + - * / ( ) over integers and parameter names; nothing when a
// name is unknown or the text is malformed. Small on purpose: the knowledge
// base only writes products and sums of tile parameters here.
class ParamExpression {
 public:
  ParamExpression(const std::string& text, const std::map<std::string, int64_t>& params)
      : text_(text), params_(params) {}

  std::optional<int64_t> evaluate() {
    auto value = sum();
    skipSpaces();
    if (!value || pos_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  void skipSpaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skipSpaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<int64_t> sum() {
    auto left = product();
    while (left) {
      if (accept('+')) {
        auto right = product();
        if (!right) return std::nullopt;
        *left += *right;
      } else if (accept('-')) {
        auto right = product();
        if (!right) return std::nullopt;
        *left -= *right;
      } else {
        break;
      }
    }
    return left;
  }
  std::optional<int64_t> product() {
    auto left = atom();
    while (left) {
      if (accept('*')) {
        auto right = atom();
        if (!right) return std::nullopt;
        *left *= *right;
      } else if (accept('/')) {
        auto right = atom();
        if (!right || *right == 0) return std::nullopt;
        *left /= *right;
      } else {
        break;
      }
    }
    return left;
  }
  std::optional<int64_t> atom() {
    skipSpaces();
    if (accept('(')) {
      auto inner = sum();
      if (!inner || !accept(')')) return std::nullopt;
      return inner;
    }
    if (pos_ >= text_.size()) return std::nullopt;
    size_t start = pos_;
    if (std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      return std::stoll(text_.substr(start, pos_ - start));
    }
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    if (start == pos_) return std::nullopt;
    auto it = params_.find(text_.substr(start, pos_ - start));
    if (it == params_.end()) return std::nullopt;
    return it->second;
  }

  const std::string& text_;
  const std::map<std::string, int64_t>& params_;
  size_t pos_ = 0;
};

bool stagesInShared(const KnowledgeEntry& entry, const KernelFeatures& features) {
  if (features.usesShared) return true;
  for (const char* word : {"shared", "stage", "pipeline", "async", "mma", "swizzle"}) {
    if (entry.rewrite.find(word) != std::string::npos || entry.name.find(word) != std::string::npos) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : ", ") + word;
  return text;
}

double softmaxWeight(double score, double best, double temperature) {
  return std::exp((score - best) / std::max(temperature, 1e-6));
}

}  // namespace

std::string proposalKey(const std::string& action, const nlohmann::json& args) {
  // nlohmann::json objects iterate in key order, so dump() is canonical.
  return action + " " + args.dump();
}

double candidateReward(const Evaluation& evaluation, std::optional<double> speedRatio) {
  const double warningCost = 0.01 * evaluation.warningCount;
  if (evaluation.verdict == Verdict::Ok) {
    double ratio = speedRatio.value_or(1.0);
    if (!(ratio > 0) || !std::isfinite(ratio)) ratio = 1.0;
    // 0.5 for no change; a 2x step earns about 0.88, a 0.8x step about 0.26:
    // a slower valid step must sink below the priors of untried entries.
    double speedTerm = 0.5 + 0.5 * std::tanh(2.0 * std::log2(ratio));
    return std::clamp(0.1 + 0.8 * speedTerm - warningCost, 0.0, 1.0);
  }
  double base = 0;
  switch (evaluation.verdict) {
    case Verdict::CheckFailed: base = 0.1; break;
    case Verdict::CompileFailed: base = 0.06; break;
    case Verdict::RunFailed: base = 0.03; break;
    case Verdict::Wrong:
    case Verdict::SignatureChanged:
    case Verdict::Ok: base = 0; break;
  }
  return std::clamp(base - 0.02 * evaluation.errorCount - warningCost, 0.0, 1.0);
}

std::optional<int64_t> estimateSharedBytes(const KnowledgeEntry& entry, const KernelFeatures& features,
                                           const nlohmann::json& args) {
  if (!stagesInShared(entry, features)) return 0;
  std::map<std::string, int64_t> params = features.constParams;
  if (args.is_object()) {
    for (const auto& [key, value] : args.items()) {
      if (!value.is_number_integer()) continue;
      params[key] = value.get<int64_t>();
      if (key == "stages") params["STAGES"] = value.get<int64_t>();  // set_stages/async_pipeline spell it so
    }
  }
  const bool halfPrecision =
      features.usesTensorCoreDtype || entry.rewrite.find("tensor_core") != std::string::npos;
  params.emplace("ELEM", halfPrecision ? 2 : 4);
  if (!params.count("STAGES")) {
    bool pipelines = features.usesPipelined || entry.rewrite.find("pipeline") != std::string::npos;
    params["STAGES"] = pipelines ? 2 : 1;
  }
  auto formula = [&](const char* key) -> std::optional<std::string> {
    if (!entry.constraints.is_object() || !entry.constraints.contains(key) || !entry.constraints[key].is_string())
      return std::nullopt;
    std::string text = entry.constraints[key].get<std::string>();
    // The knowledge base writes the element size as sizeof(dtype).
    for (size_t at; (at = text.find("sizeof(dtype)")) != std::string::npos;) text.replace(at, 13, "ELEM");
    return text;
  };
  if (auto total = formula("shared_bytes")) return ParamExpression(*total, params).evaluate();
  if (auto perStage = formula("shared_bytes_per_stage")) {
    auto bytes = ParamExpression(*perStage, params).evaluate();
    if (!bytes) return std::nullopt;
    return *bytes * params["STAGES"];
  }
  for (const char* name : {"BM", "BN", "BK"}) {
    if (!params.count(name)) return std::nullopt;
  }
  return params["STAGES"] * (params["BM"] * params["BK"] + params["BK"] * params["BN"]) * params["ELEM"];
}

static int64_t sharedLimitFor(const KnowledgeEntry& entry, int64_t plannerLimit) {
  if (entry.constraints.is_object() && entry.constraints.contains("max_shared_bytes") &&
      entry.constraints["max_shared_bytes"].is_number_integer())
    return std::min(plannerLimit, entry.constraints["max_shared_bytes"].get<int64_t>());
  return plannerLimit;
}

Planner::Planner(const KnowledgeBase& knowledge, PlannerOptions options)
    : knowledge_(knowledge), options_(options), rng_(options.seed) {}

double Planner::prior(const std::string& action) const {
  const KnowledgeEntry* entry = knowledge_.find(action);
  return entry ? std::clamp(entry->prior, 0.0, 1.0) : 0.5;
}

double Planner::actionValue(const std::string& action) const {
  // The prior counts as one observation, so a single bad reward does not
  // bury an entry the knowledge base rates highly.
  auto it = byAction_.find(action);
  double sum = prior(action), count = 1;
  if (it != byAction_.end()) {
    sum += it->second.sum;
    count += it->second.count;
  }
  return sum / count;
}

double Planner::value(const std::string& action, const nlohmann::json& args) const {
  auto it = byAlternative_.find(proposalKey(action, args));
  double sum = actionValue(action), count = 1;
  if (it != byAlternative_.end()) {
    sum += it->second.sum;
    count += it->second.count;
  }
  return sum / count;
}

int Planner::observations(const std::string& action) const {
  auto it = byAction_.find(action);
  return it == byAction_.end() ? 0 : static_cast<int>(std::lround(it->second.count));
}

void Planner::update(const std::string& action, const nlohmann::json& args, double reward, double weight) {
  if (!(weight > 0) || !std::isfinite(reward)) return;
  reward = std::clamp(reward, 0.0, 1.0);
  byAction_[action].sum += weight * reward;
  byAction_[action].count += weight;
  auto& alternative = byAlternative_[proposalKey(action, args)];
  alternative.sum += weight * reward;
  alternative.count += weight;
}

namespace {
// candidateReward of a valid step at about 0.83x its predecessor's speed.
constexpr double kClearlyWorseReward = 0.3;
}  // namespace

void Planner::warmStart(const std::vector<ExperienceMemory::ActionStats>& stats, const std::vector<Case>& cases) {
  // An LLM candidate ("llm:<entry>") counts for the entry it applied.
  auto entryOf = [](const std::string& action) { return action.starts_with("llm:") ? action.substr(4) : action; };
  for (const auto& stat : stats) {
    if (stat.tries <= 0 || stat.action == "baseline") continue;
    // At most three observations' worth: another task's experience should
    // steer the first picks, not outvote this task's own rewards.
    double weight = std::min(3.0, 0.5 * stat.tries);
    auto& estimate = byAction_[entryOf(stat.action)];
    estimate.sum += weight * std::clamp(stat.meanReward, 0.0, 1.0);
    estimate.count += weight;
  }
  for (const auto& c : cases) {
    if (c.action == "baseline") continue;
    const bool llm = c.action.starts_with("llm:");
    auto& alternative = byAlternative_[proposalKey(entryOf(c.action), llm ? nlohmann::json::object() : c.actionArgs)];
    // Half an observation, but a whole one for a step the other task measured
    // clearly slower than what it replaced (below about 0.83x) or wrong: sizes
    // change how much faster a step is far more often than whether it is a
    // step back (bench/results/agent/h100_softmax_s28: run 2 drew first the
    // W = 1 that run 1 had measured at 0.59x, about one first draw in eight).
    const double weight = c.reward < kClearlyWorseReward ? 1.0 : 0.5;
    alternative.sum += weight * std::clamp(c.reward, 0.0, 1.0);
    alternative.count += weight;
  }
}

std::vector<Proposal> Planner::propose(const KernelFeatures& features,
                                       const std::vector<std::string>& diagnosticCodes) const {
  std::vector<Proposal> accepted, rejected;
  const auto tags = features.tags();
  for (const KnowledgeEntry* entry : knowledge_.applicable(features, diagnosticCodes)) {
    if (entry->rewrite.empty() && !options_.includeLlmOnly) continue;
    std::string context;
    if (!entry->requires_.empty()) context = "requires " + joined(entry->requires_);
    std::vector<std::string> matched;
    for (const auto& code : entry->diagnostics) {
      if (std::find(diagnosticCodes.begin(), diagnosticCodes.end(), code) != diagnosticCodes.end())
        matched.push_back(code);
    }
    if (!matched.empty()) context += (context.empty() ? "" : "; ") + std::string("repairs ") + joined(matched);
    std::vector<nlohmann::json> alternatives = entry->alternatives;
    if (entry->alternativesFrom == "consts") {
      // Every const parameter, one at a time, doubled and halved (within 1 .. 4096).
      for (const auto& [name, value] : features.constParams) {
        if (value <= 0) continue;
        // A block has at most 32 warps (AG4017): a const the warps follow stops there.
        if (value * 2 <= 4096 && !features.warpsLimitedConsts.count(name)) alternatives.push_back({{name, value * 2}});
        if (value / 2 >= 1) alternatives.push_back({{name, value / 2}});
      }
      if (alternatives.empty()) continue;  // a kernel without const parameters has nothing to search
    }
    if (alternatives.empty()) alternatives.push_back(nlohmann::json::object());
    for (const auto& args : alternatives) {
      Proposal p;
      p.action = entry->name;
      p.rewrite = entry->rewrite;
      p.args = args;
      p.context = context;
      p.invariants = entry->invariants;
      p.summary = entry->summary;
      p.score = value(entry->name, args);
      p.sharedBytes = estimateSharedBytes(*entry, features, args);
      const int64_t limit = sharedLimitFor(*entry, options_.sharedLimitBytes);
      if (p.sharedBytes && *p.sharedBytes > limit) {
        p.rejectedWhy = "needs " + std::to_string(*p.sharedBytes) + " bytes of shared memory per block, over the " +
                        std::to_string(limit) + "-byte limit";
        rejected.push_back(std::move(p));
      } else {
        accepted.push_back(std::move(p));
      }
    }
  }
  auto byScore = [](const Proposal& a, const Proposal& b) { return a.score > b.score; };
  std::stable_sort(accepted.begin(), accepted.end(), byScore);
  std::stable_sort(rejected.begin(), rejected.end(), byScore);
  accepted.insert(accepted.end(), std::make_move_iterator(rejected.begin()),
                  std::make_move_iterator(rejected.end()));
  return accepted;
}

std::optional<size_t> Planner::sample(const std::vector<Proposal>& proposals) {
  // Best score per action, in first-seen (ranked) order.
  std::vector<std::string> actions;
  std::map<std::string, double> bestByAction;
  for (const auto& p : proposals) {
    if (!p.rejectedWhy.empty()) continue;
    auto [it, inserted] = bestByAction.emplace(p.action, p.score);
    if (inserted) actions.push_back(p.action);
    else it->second = std::max(it->second, p.score);
  }
  if (actions.empty()) return std::nullopt;
  double best = -1e9;
  for (const auto& [action, score] : bestByAction) best = std::max(best, score);
  std::vector<double> weights;
  for (const auto& action : actions) weights.push_back(softmaxWeight(bestByAction[action], best, options_.temperature));
  std::discrete_distribution<size_t> pickAction(weights.begin(), weights.end());
  const std::string& action = actions[pickAction(rng_)];

  std::vector<size_t> members;
  for (size_t i = 0; i < proposals.size(); ++i) {
    if (proposals[i].rejectedWhy.empty() && proposals[i].action == action) members.push_back(i);
  }
  std::vector<double> memberWeights;
  for (size_t i : members)
    memberWeights.push_back(softmaxWeight(proposals[i].score, bestByAction[action], options_.temperature));
  std::discrete_distribution<size_t> pickMember(memberWeights.begin(), memberWeights.end());
  return members[pickMember(rng_)];
}

}  // namespace argus::agent
