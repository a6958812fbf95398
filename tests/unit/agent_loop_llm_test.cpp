// The loop's LLM path end to end against the scripted server and the real
// Evaluator: a good rewrite is accepted, broken code is rejected with its
// diagnostics recorded (and shown to the model next time), garbage and a
// timeout are notes, not crashes, and three failures in a row end the LLM
// steps.
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

TEST(AgentLoopLlm, GoodBrokenGarbageAndTimeout) {
  // The task's baseline, which the scripted model rewrites.
  const std::string baseline = argus::testing::readTestKernel("agent_loop_llm/vadd.ag");
  ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
  ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  fs::path dir = fs::temp_directory_path() / ("argus_agent_llm_loop_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream(dir / "vadd.ag") << baseline;
    std::ofstream(dir / "vadd.task.json") << R"({"name": "vadd_llm", "kernel": "vadd.ag",
        "validate": [{"N": 1000}], "measure": {"N": 1048576}, "budget": {"candidates": 8}})";
  }
  std::string error;
  auto task = loadTask((dir / "vadd.task.json").string(), error);
  ASSERT_TRUE(task) << error;

  ScriptedServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  const std::string good = replaced(baseline, "BLOCK: const = 256", "BLOCK: const = 1024");
  const std::string broken = replaced(baseline, "a + b", "a + missing_tile");
  server.enqueue(ScriptedResponse::json(200, chatReply("Larger blocks:\n```python\n" + good + "```\n")));
  server.enqueue(ScriptedResponse::json(200, chatReply("Try this:\n```python\n" + broken + "```\n")));
  server.enqueue(ScriptedResponse::json(200, chatReply("I am sorry, I cannot help with that.")));
  server.enqueue(ScriptedResponse::json(200, chatReply("too late"), 5000));
  server.enqueue(ScriptedResponse::json(200, "this is not JSON"));

  LlmConfig config;
  config.baseUrl = server.baseUrl();
  config.model = "scripted";
  config.timeoutMs = 400;
  config.retries = 0;
  auto provider = makeOpenAiCompatibleProvider(config);
  auto memory = ExperienceMemory::open(":memory:", error);
  ASSERT_TRUE(memory) << error;

  LoopOptions options;
  options.useGpu = false;
  options.memory = memory.get();
  options.llm = provider.get();
  options.llmEvery = 1;
  std::vector<std::string> lines;
  options.progress = [&](const std::string& line) { lines.push_back(line); };
  LoopResult result = runAgentLoop(*task, options);
  ASSERT_TRUE(result.ok) << result.error;

  // Two LLM candidates, then (after three LLM failures in a row) the knowledge
  // base alone: for a vadd, the search over its const parameter.
  ASSERT_GE(result.candidates.size(), 3u);
  for (size_t i = 3; i < result.candidates.size(); ++i) {
    EXPECT_EQ(result.candidates[i].origin, "planner");
    EXPECT_EQ(result.candidates[i].candidate.action, "const_search");
  }
  const auto& accepted = result.candidates[1];
  EXPECT_EQ(accepted.origin, "llm");
  EXPECT_TRUE(accepted.candidate.action.starts_with("llm")) << accepted.candidate.action;
  EXPECT_EQ(accepted.evaluation.verdict, Verdict::Ok) << accepted.evaluation.detail;
  EXPECT_NE(accepted.candidate.source.find("BLOCK: const = 1024"), std::string::npos);

  const auto& rejected = result.candidates[2];
  EXPECT_EQ(rejected.evaluation.verdict, Verdict::CheckFailed);
  ASSERT_FALSE(rejected.evaluation.diagnosticCodes.empty());
  auto stored = memory->get(rejected.caseId);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->diagnostics, rejected.evaluation.diagnostics);
  EXPECT_FALSE(stored->correct);
  EXPECT_EQ(*stored->predecessor, result.candidates[*rejected.parent].caseId);

  EXPECT_EQ(result.llmSteps, 5);
  EXPECT_EQ(result.llmFailures, 3);
  ASSERT_TRUE(result.incumbent);
  EXPECT_EQ(result.candidates[*result.incumbent].evaluation.verdict, Verdict::Ok);
  bool stopped = false;
  for (const auto& note : result.notes) stopped |= note.find("failures in a row") != std::string::npos;
  EXPECT_TRUE(stopped);

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);
  // Hot tier: the task and the incumbent; after the broken reply, its
  // diagnostics and the failed attempt.
  EXPECT_NE(requests[0].body.find("BLOCK: const = 256"), std::string::npos);
  EXPECT_NE(requests[0].body.find("keep the kernel's name and parameter list"), std::string::npos);
  EXPECT_NE(requests[2].body.find(rejected.evaluation.diagnosticCodes[0]), std::string::npos);
  EXPECT_NE(requests[2].body.find("missing_tile"), std::string::npos);
  if (accepted.becameIncumbent) {
    EXPECT_NE(requests[2].body.find("BLOCK: const = 1024"), std::string::npos);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace argus::agent
