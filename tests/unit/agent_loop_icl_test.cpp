// In-context learning over the LLM path (issue 23), against the scripted
// OpenAI-compatible server and the real Evaluator: every prompt carries the
// run's trajectory (attempts, verdicts with reasons, diagnostics, rewards),
// the model's own last failure stays in view after later attempts, a second
// run sees the first run's failure modes, and the context window and the
// generation allowance come from the provider's configuration.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "agent/loop.h"
#include "agent_scripted_server.h"
#include "test_sources.h"

namespace argus::agent {
namespace {

namespace fs = std::filesystem;
using testing::ScriptedResponse;
using testing::ScriptedServer;

// The task's baseline, which the scripted model rewrites.
std::string baselineKernel() { return argus::testing::readTestKernel("agent_loop_icl/vadd.ag"); }

std::string chatReply(const std::string& content) {
  nlohmann::json reply = {
      {"id", "chatcmpl-1"},
      {"object", "chat.completion"},
      {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", "stop"}}}}};
  return reply.dump();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

std::string kernelReply(const std::string& source) { return chatReply("Here:\n```python\n" + source + "```\n"); }

// The user message of a recorded chat request.
std::string userMessage(const std::string& body) {
  nlohmann::json request = nlohmann::json::parse(body, nullptr, false);
  if (request.is_discarded()) return "";
  for (const auto& message : request["messages"])
    if (message["role"] == "user") return message["content"].get<std::string>();
  return "";
}

class AgentLoopIcl : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
    dir = fs::temp_directory_path() / ("argus_agent_icl_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "vadd.ag") << baselineKernel();
    std::ofstream(dir / "vadd.task.json") << R"({"name": "vadd_icl", "kernel": "vadd.ag",
        "validate": [{"N": 1000}], "measure": {"N": 4096}, "budget": {"candidates": 4}})";
    std::string error;
    auto loaded = loadTask((dir / "vadd.task.json").string(), error);
    ASSERT_TRUE(loaded) << error;
    task = *loaded;
    memory = ExperienceMemory::open(":memory:", error);
    ASSERT_TRUE(memory) << error;
  }
  void TearDown() override { fs::remove_all(dir); }

  LoopResult run(ScriptedServer& server, int window, int generation) {
    LlmConfig config;
    config.baseUrl = server.baseUrl();
    config.model = "scripted";
    config.timeoutMs = 2000;
    config.retries = 0;
    config.contextWindow = window;
    config.maxTokens = generation;
    auto provider = makeOpenAiCompatibleProvider(config);
    LoopOptions options;
    options.useGpu = false;
    options.memory = memory.get();
    options.llm = provider.get();
    options.llmEvery = 1;
    options.replay = false;
    return runAgentLoop(task, options);
  }

  fs::path dir;
  Task task;
  std::unique_ptr<ExperienceMemory> memory;
};

TEST_F(AgentLoopIcl, PromptsCarryTheTrajectoryAndTheModelsOwnLastFailure) {
  ScriptedServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  const std::string baseline = baselineKernel();
  const std::string wrong = replaced(baseline, "a + b", "a - b");
  const std::string broken = replaced(baseline, "a + b", "a + missing_tile");
  const std::string good = replaced(baseline, "BLOCK: const = 256", "BLOCK: const = 1024");
  server.enqueue(ScriptedResponse::json(200, kernelReply(wrong)));
  server.enqueue(ScriptedResponse::json(200, kernelReply(broken)));
  server.enqueue(ScriptedResponse::json(200, kernelReply(good)));
  LoopResult result = run(server, 20000, 1234);
  ASSERT_TRUE(result.ok) << result.error;
  ASSERT_EQ(result.candidates.size(), 4u);
  const auto& wrongRecord = result.candidates[1];
  ASSERT_EQ(wrongRecord.evaluation.verdict, Verdict::Wrong) << wrongRecord.evaluation.detail;
  ASSERT_EQ(result.candidates[2].evaluation.verdict, Verdict::CheckFailed);
  ASSERT_EQ(result.candidates[3].evaluation.verdict, Verdict::Ok) << result.candidates[3].evaluation.detail;

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  // The generation allowance is the configured one.
  EXPECT_EQ(nlohmann::json::parse(requests[0].body)["max_tokens"], 1234);
  const std::string second = userMessage(requests[1].body), third = userMessage(requests[2].body);
  // The trajectory: every attempt with its verdict, reason and reward.
  EXPECT_NE(second.find("Your trajectory in this run"), std::string::npos) << second;
  EXPECT_NE(second.find("#0 baseline baseline: ok"), std::string::npos) << second;
  EXPECT_NE(second.find("#1 llm"), std::string::npos) << second;
  EXPECT_NE(second.find("reward 0"), std::string::npos) << second;
  // The wrong verdict's reason (worst element, shape and seed) is shown...
  EXPECT_NE(second.find("Your own last attempt that failed (#1, verdict wrong)"), std::string::npos) << second;
  EXPECT_NE(second.find("Why: " + wrongRecord.evaluation.detail), std::string::npos) << second;
  EXPECT_NE(second.find("a - b"), std::string::npos) << second;
  // ... and the next failure (a checker error) replaces it, with its diagnostics.
  EXPECT_NE(third.find("Your own last attempt that failed (#2, verdict check-failed)"), std::string::npos) << third;
  EXPECT_NE(third.find(result.candidates[2].evaluation.diagnosticCodes.at(0)), std::string::npos) << third;
  EXPECT_NE(third.find("why: " + wrongRecord.evaluation.detail), std::string::npos) << "the trajectory keeps #1's reason";

  // The memory keeps the reason of the wrong verdict, and the LLM action names the entry applied.
  std::optional<Case> stored = memory->get(wrongRecord.caseId);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->verdict, "wrong");
  EXPECT_EQ(stored->verdictDetail, wrongRecord.evaluation.detail);
  EXPECT_TRUE(wrongRecord.candidate.action.starts_with("llm")) << wrongRecord.candidate.action;

  // A later run on the task sees the first run's failure modes in its warm tier,
  // and its own last failure even after a success.
  ScriptedServer again;
  ASSERT_TRUE(again.ok()) << again.error();
  again.enqueue(ScriptedResponse::json(200, kernelReply(broken)));
  again.enqueue(ScriptedResponse::json(200, kernelReply(good)));
  again.enqueue(ScriptedResponse::json(200, chatReply("no code today")));
  LoopResult later = run(again, 20000, 1234);
  ASSERT_TRUE(later.ok) << later.error;
  auto laterRequests = again.requests();
  ASSERT_GE(laterRequests.size(), 3u);
  const std::string first = userMessage(laterRequests[0].body);
  EXPECT_NE(first.find("Failure modes seen on similar tasks"), std::string::npos) << first;
  EXPECT_NE(first.find(wrongRecord.evaluation.detail), std::string::npos) << first;
  const std::string afterSuccess = userMessage(laterRequests[2].body);
  EXPECT_NE(afterSuccess.find("Your own last attempt that failed (#1, verdict check-failed)"), std::string::npos)
      << afterSuccess;
}

TEST_F(AgentLoopIcl, TheContextWindowComesFromTheProviderConfiguration) {
  ScriptedServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  server.setFallback(ScriptedResponse::json(200, chatReply("unused")));
  // 1,500 tokens of window less 1,000 of generation leaves no room for the task and the kernel.
  LoopResult result = run(server, 1500, 1000);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(server.requestCount(), 0u);
  bool tooSmall = false;
  for (const auto& note : result.notes) tooSmall |= note.find("the prompt does not fit") != std::string::npos;
  EXPECT_TRUE(tooSmall);
}

}  // namespace
}  // namespace argus::agent
