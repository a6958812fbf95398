// The planner: ranked, sampled proposals, value updates, the shared-memory
// coupling filter and the reward's ordering.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "agent/planner.h"
#include "agent/rewrite.h"

namespace argus::agent {
namespace {

KnowledgeEntry entry(const std::string& name, double prior, std::vector<nlohmann::json> alternatives = {},
                     std::string rewriteId = "set_params") {
  KnowledgeEntry e;
  e.name = name;
  e.kind = "optimization";
  e.summary = name;
  e.requires_ = {"dot"};
  e.rewrite = std::move(rewriteId);
  e.alternatives = std::move(alternatives);
  e.prior = prior;
  e.invariants = {"the accumulator tile is owned by one block"};
  return e;
}

KernelFeatures gemmFeatures() {
  KernelFeatures f;
  f.kernelName = "gemm";
  f.parsed = true;
  f.hasDot = true;
  f.usesShared = true;
  f.constParams = {{"BM", 64}, {"BN", 64}, {"BK", 16}};
  return f;
}

Evaluation valid(double ms) {
  Evaluation e;
  e.verdict = Verdict::Ok;
  e.timeMs = ms;
  return e;
}

TEST(AgentPlanner, RanksBySamplesMostlyTheTopButNotAlways) {
  KnowledgeBase kb;
  kb.entries = {entry("good", 0.8), entry("fair", 0.6), entry("poor", 0.4)};
  Planner planner(kb, PlannerOptions{.seed = 7});
  auto proposals = planner.propose(gemmFeatures(), {});
  ASSERT_EQ(proposals.size(), 3u);
  EXPECT_EQ(proposals[0].action, "good");
  EXPECT_EQ(proposals[2].action, "poor");
  EXPECT_NEAR(proposals[0].score, 0.8, 1e-9);
  EXPECT_FALSE(proposals[0].invariants.empty());

  std::map<std::string, int> picks;
  for (int i = 0; i < 2000; ++i) picks[proposals[*planner.sample(proposals)].action]++;
  EXPECT_GT(picks["good"], picks["fair"]);
  EXPECT_GT(picks["fair"], picks["poor"]);
  EXPECT_GT(picks["good"], 1000);   // mostly the top...
  EXPECT_GT(picks["fair"], 100);    // ...but not always
  EXPECT_GT(picks["poor"], 0);
}

TEST(AgentPlanner, SamplingIsReproducibleForASeed) {
  KnowledgeBase kb;
  kb.entries = {entry("a", 0.6), entry("b", 0.55), entry("c", 0.5)};
  Planner first(kb, PlannerOptions{.seed = 3}), second(kb, PlannerOptions{.seed = 3});
  auto proposals = first.propose(gemmFeatures(), {});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(first.sample(proposals), second.sample(proposals));
}

TEST(AgentPlanner, RewardsMoveValuesAndTheRanking) {
  KnowledgeBase kb;
  kb.entries = {entry("tiles", 0.7, {{{"BM", 128}}, {{"BM", 32}}}), entry("stages", 0.6)};
  Planner planner(kb, PlannerOptions{});
  EXPECT_NEAR(planner.value("tiles", {{"BM", 128}}), 0.7, 1e-9);
  for (int i = 0; i < 4; ++i) planner.update("tiles", {{"BM", 32}}, 0.0);
  // The bad alternative falls fastest; its sibling shares the action's drop.
  EXPECT_LT(planner.value("tiles", {{"BM", 32}}), 0.1);
  EXPECT_LT(planner.actionValue("tiles"), 0.2);
  EXPECT_GT(planner.value("tiles", {{"BM", 128}}), planner.value("tiles", {{"BM", 32}}));
  EXPECT_EQ(planner.observations("tiles"), 4);
  auto proposals = planner.propose(gemmFeatures(), {});
  EXPECT_EQ(proposals[0].action, "stages");

  planner.update("stages", nlohmann::json::object(), 1.0);
  EXPECT_NEAR(planner.actionValue("stages"), 0.8, 1e-9);  // (prior 0.6 + 1) / 2
}

TEST(AgentPlanner, WarmStartFromMemoryStatisticsAndCases) {
  KnowledgeBase kb;
  kb.entries = {entry("a", 0.5), entry("b", 0.5)};
  Planner planner(kb, PlannerOptions{});
  ExperienceMemory::ActionStats good;
  good.action = "a";
  good.tries = 4;
  good.meanReward = 0.9;
  Case c;
  c.action = "b";
  c.actionArgs = {{"BM", 64}};
  c.reward = 0.0;
  planner.warmStart({good}, {c});
  EXPECT_GT(planner.actionValue("a"), 0.7);
  EXPECT_LT(planner.value("b", {{"BM", 64}}), 0.5);
  EXPECT_EQ(planner.propose(gemmFeatures(), {})[0].action, "a");
}

TEST(AgentPlanner, LlmCandidatesInMemoryCountForTheEntryTheyApplied) {
  KnowledgeBase kb;
  kb.entries = {entry("a", 0.5), entry("b", 0.5)};
  Planner planner(kb, PlannerOptions{});
  // Before issue 23 these went to an "llm:a" key no proposal ever reads.
  ExperienceMemory::ActionStats llm;
  llm.action = "llm:a";
  llm.tries = 4;
  llm.meanReward = 0.95;
  Case c;
  c.action = "llm:a";
  c.reward = 0.95;
  planner.warmStart({llm}, {c});
  EXPECT_GT(planner.actionValue("a"), 0.7);
  EXPECT_DOUBLE_EQ(planner.actionValue("b"), 0.5);
  EXPECT_EQ(planner.observations("llm:a"), 0);
  EXPECT_EQ(planner.propose(gemmFeatures(), {})[0].action, "a");
}

TEST(AgentPlanner, ARelatedTasksClearlySlowerStepWeighsAWholeObservation) {
  KnowledgeBase kb;
  kb.entries = {entry("a", 0.5)};
  Planner planner(kb, PlannerOptions{});
  Evaluation valid;
  valid.verdict = Verdict::Ok;
  Case slower;  // measured at 0.59x by the other task
  slower.action = "a";
  slower.actionArgs = {{"W", 1}};
  slower.reward = candidateReward(valid, 0.59);
  Case faster;  // 1.2x: sizes may change by how much, so half an observation
  faster.action = "a";
  faster.actionArgs = {{"W", 8}};
  faster.reward = candidateReward(valid, 1.2);
  planner.warmStart({}, {slower, faster});
  // (prior 0.5 + 1 x 0.14) / 2 with the whole observation; it was (0.5 + 0.5 x 0.14) / 1.5 = 0.38.
  EXPECT_LT(planner.value("a", {{"W", 1}}), 0.33);
  const double fasterReward = candidateReward(valid, 1.2);
  EXPECT_NEAR(planner.value("a", {{"W", 8}}), (0.5 + 0.5 * fasterReward) / 1.5, 1e-9);
}

// The shipped const_search entry's shape: alternatives from the kernel's consts.
KnowledgeBase constSearchOnly() {
  KnowledgeBase kb;
  KnowledgeEntry search = entry("const_search", 0.3);
  search.requires_ = {"parsed"};
  search.alternativesFrom = "consts";
  kb.entries = {search};
  return kb;
}

std::set<std::string> proposedArgs(const Planner& planner, const KernelFeatures& features) {
  std::set<std::string> args;
  for (const Proposal& p : planner.propose(features, {})) args.insert(p.args.dump());
  return args;
}

TEST(AgentPlanner, ConstSearchProposesEveryConstDoubledAndHalved) {
  KnowledgeBase kb = constSearchOnly();
  Planner planner(kb, PlannerOptions{});
  KernelFeatures softmax;
  softmax.kernelName = "softmax";
  softmax.parsed = true;
  softmax.constParams = {{"ROWS", 4}, {"BN", 1024}, {"ONE", 1}};
  EXPECT_EQ(proposedArgs(planner, softmax), (std::set<std::string>{R"({"ROWS":8})", R"({"ROWS":2})", R"({"BN":2048})", R"({"BN":512})",
                                         R"({"ONE":2})"}));
  KernelFeatures none = softmax;
  none.constParams.clear();
  EXPECT_TRUE(planner.propose(none, {}).empty());
}

// A block has at most 32 warps (AG4017): the const the kernel's warps= follows is
// not doubled past that (the softmax search spent an evaluation on W = 64).
TEST(AgentPlanner, ConstSearchStopsTheWarpsAtThirtyTwo) {
  KnowledgeBase kb = constSearchOnly();
  Planner planner(kb, PlannerOptions{});
  KernelFeatures f = analyzeKernel(
      "@kernel(grid=(M,), warps=W)\n"
      "def f(x: Tensor[f32, (M, N)], y: Tensor[f32, (M, N)], BLOCK: const = 1024, W: const = 32):\n"
      "    y.tile((BLOCK,))[program_id(0), 0] = load(x.tile((BLOCK,))[program_id(0), 0])\n");
  ASSERT_TRUE(f.parsed);
  EXPECT_EQ(f.warps, 32);
  EXPECT_EQ(f.warpsLimitedConsts, std::set<std::string>{"W"});
  EXPECT_EQ(proposedArgs(planner, f), (std::set<std::string>{R"({"W":16})", R"({"BLOCK":2048})", R"({"BLOCK":512})"}));
}

TEST(AgentPlanner, SharedMemoryCouplingRejectsBeforeEvaluation) {
  KnowledgeBase kb;
  // bf16 operands: 4 stages * (256*64 + 64*256) * 2 bytes = 256 KiB > 227 KiB.
  kb.entries = {entry("pipeline",
                      0.9,
                      {{{"BM", 256}, {"BN", 256}, {"BK", 64}, {"STAGES", 4}},
                       {{"BM", 128}, {"BN", 128}, {"BK", 32}, {"STAGES", 4}},
                       {{"BM", 128}, {"BN", 256}, {"BK", 64}, {"STAGES", 3}}},
                      "async_pipeline")};
  KernelFeatures f = gemmFeatures();
  f.usesTensorCoreDtype = true;
  Planner planner(kb, PlannerOptions{.seed = 5});
  auto proposals = planner.propose(f, {});
  ASSERT_EQ(proposals.size(), 3u);
  EXPECT_TRUE(proposals[0].rejectedWhy.empty());
  EXPECT_EQ(*proposals[0].sharedBytes, 4 * (128 * 32 + 32 * 128) * 2);
  // 3 * (128*64 + 64*256) * 2 = 144 KiB fits.
  EXPECT_TRUE(proposals[1].rejectedWhy.empty());
  EXPECT_EQ(proposals[2].args["BM"], 256);
  EXPECT_NE(proposals[2].rejectedWhy.find("262144 bytes"), std::string::npos) << proposals[2].rejectedWhy;
  for (int i = 0; i < 300; ++i) EXPECT_NE(*planner.sample(proposals), 2u);

  // The kernel's own constants count: BK from the kernel, BM/BN from args.
  nlohmann::json args = {{"BM", 512}, {"BN", 512}};
  EXPECT_EQ(*estimateSharedBytes(kb.entries[0], f, args), 2 * (512 * 16 + 16 * 512) * 2);
  // A knowledge entry may state its own formula.
  KnowledgeEntry custom = entry("custom", 0.5, {}, "swizzle_shared");
  custom.constraints = {{"shared_bytes", "STAGES * (BM + BN) * BK * ELEM + 1024"}};
  EXPECT_EQ(*estimateSharedBytes(custom, f, {{"STAGES", 3}}), 3 * 128 * 16 * 2 + 1024);
  custom.constraints = {{"shared_bytes_per_stage", "(BM*BK + BK*BN) * sizeof(dtype)"}};
  EXPECT_EQ(*estimateSharedBytes(custom, f, {{"stages", 4}}), 4 * (64 * 16 + 16 * 64) * 2);
  custom.constraints = {{"shared_bytes", "UNKNOWN * 2"}};
  EXPECT_FALSE(estimateSharedBytes(custom, f, {}).has_value());
  // Every alternative over the limit: nothing to sample.
  kb.entries[0].alternatives = {{{"BM", 256}, {"BN", 256}, {"BK", 64}, {"STAGES", 4}}};
  Planner strict(kb, PlannerOptions{});
  EXPECT_FALSE(strict.sample(strict.propose(f, {})).has_value());
}

TEST(AgentPlanner, RepairsApplyOnlyWithTheirDiagnostics) {
  KnowledgeBase kb;
  KnowledgeEntry repair = entry("shrink_stages", 0.5, {{{"STAGES", 2}}}, "set_stages");
  repair.kind = "repair";
  repair.diagnostics = {"AG2031"};
  kb.entries = {repair};
  Planner planner(kb, PlannerOptions{});
  EXPECT_TRUE(planner.propose(gemmFeatures(), {}).empty());
  auto proposals = planner.propose(gemmFeatures(), {"AG2031"});
  ASSERT_EQ(proposals.size(), 1u);
  EXPECT_NE(proposals[0].context.find("AG2031"), std::string::npos);
}

TEST(AgentPlanner, LlmOnlyEntriesOnlyWhenAsked) {
  KnowledgeBase kb;
  kb.entries = {entry("warp_specialize", 0.5, {}, "")};
  EXPECT_TRUE(Planner(kb, PlannerOptions{}).propose(gemmFeatures(), {}).empty());
  EXPECT_EQ(Planner(kb, PlannerOptions{.includeLlmOnly = true}).propose(gemmFeatures(), {}).size(), 1u);
}

TEST(AgentPlanner, RewardCombinesInvariantPenaltiesAndSpeed) {
  Evaluation checkFailed;
  checkFailed.verdict = Verdict::CheckFailed;
  checkFailed.errorCount = 1;
  Evaluation manyErrors = checkFailed;
  manyErrors.errorCount = 3;
  manyErrors.warningCount = 2;
  Evaluation wrong;
  wrong.verdict = Verdict::Wrong;
  Evaluation warned = valid(1.0);
  warned.warningCount = 2;

  double faster = candidateReward(valid(1.0), 2.0), same = candidateReward(valid(1.0), 1.0),
         slower = candidateReward(valid(2.0), 0.5);
  EXPECT_GT(faster, same);
  EXPECT_GT(same, slower);
  EXPECT_GT(same, candidateReward(warned, 1.0));
  EXPECT_GT(slower, candidateReward(checkFailed, std::nullopt));
  EXPECT_GT(candidateReward(checkFailed, std::nullopt), candidateReward(manyErrors, std::nullopt));
  EXPECT_EQ(candidateReward(wrong, std::nullopt), 0.0);
  for (double r : {faster, same, slower}) {
    EXPECT_GE(r, 0.0);
    EXPECT_LE(r, 1.0);
  }
}

}  // namespace
}  // namespace argus::agent
