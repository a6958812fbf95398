// The OpenAI-compatible provider against a scripted loopback server, the
// configuration readers, and kernel extraction from replies.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/llm.h"
#include "agent_scripted_server.h"

namespace argus::agent {
namespace {

using testing::ScriptedResponse;
using testing::ScriptedServer;

std::string recordedReply(const std::string& name) {
  std::ifstream file(std::string(ARGUS_SOURCE_DIR) + "/tests/agent/replies/" + name,
                     std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Sets environment variables for one test and restores them afterwards.
class ScopedEnvironment {
 public:
  void set(const std::string& name, const std::string& value) {
    remember(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string& name) {
    remember(name);
    ::unsetenv(name.c_str());
  }
  ~ScopedEnvironment() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else ::unsetenv(it->first.c_str());
    }
  }

 private:
  void remember(const std::string& name) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

class LlmProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server.ok()) << server.error();
    // A proxy configured on the machine must not intercept loopback traffic.
    environment.set("NO_PROXY", "127.0.0.1,localhost");
    environment.set("no_proxy", "127.0.0.1,localhost");
    config.baseUrl = server.baseUrl();
    config.model = "test-model";
    config.apiKey = "sk-test-secret-0123";
    config.timeoutMs = 2000;
    config.retries = 2;
    config.retryDelayMs = 5;
    config.temperature = 0.3;
    config.maxTokens = 777;
  }

  LlmReply ask() {
    auto provider = makeOpenAiCompatibleProvider(config);
    return provider->complete({{"system", "You optimize Argus kernels."},
                               {"user", "Make this faster:\n@kernel\ndef f(): pass"}});
  }

  ScopedEnvironment environment;
  ScriptedServer server;
  LlmConfig config;
};

TEST_F(LlmProviderTest, GoodReplyIsParsedAndItsKernelExtracted) {
  server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json")));
  LlmReply reply = ask();
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.httpStatus, 200);
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_TRUE(reply.error.empty());
  auto kernel = extractKernelSource(reply.content);
  ASSERT_TRUE(kernel.has_value());
  EXPECT_NE(kernel->find("@kernel(grid=(cdiv(N, BLOCK),), warps=8)"), std::string::npos);
  EXPECT_NE(kernel->find("def gelu(v):"), std::string::npos);
  EXPECT_EQ(kernel->find("```"), std::string::npos);
  EXPECT_EQ(kernel->find("Invariants kept"), std::string::npos);
}

TEST_F(LlmProviderTest, RequestCarriesModelMessagesTemperatureAndBearerKey) {
  server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json")));
  ASSERT_TRUE(ask().ok);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
  EXPECT_EQ(requests[0].header("authorization"), "Bearer sk-test-secret-0123");
  EXPECT_NE(requests[0].header("content-type").find("application/json"), std::string::npos);
  auto body = nlohmann::json::parse(requests[0].body, nullptr, false);
  ASSERT_FALSE(body.is_discarded()) << requests[0].body;
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.3);
  EXPECT_EQ(body["max_tokens"], 777);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][1]["role"], "user");
  EXPECT_EQ(body["messages"][1]["content"], "Make this faster:\n@kernel\ndef f(): pass");
}

TEST_F(LlmProviderTest, NoAuthorizationHeaderWithoutKeyAndTrailingSlashTolerated) {
  config.apiKey.clear();
  config.baseUrl = server.baseUrl("/v1/");
  server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json")));
  ASSERT_TRUE(ask().ok);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_FALSE(requests[0].hasHeader("authorization"));
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
}

TEST_F(LlmProviderTest, RetriesAfterServerErrorThenSucceeds) {
  server.enqueue(ScriptedResponse::json(500, R"({"error":{"message":"overloaded"}})"));
  server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json")));
  LlmReply reply = ask();
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(server.requestCount(), 2u);
  EXPECT_TRUE(reply.error.empty());
}

TEST_F(LlmProviderTest, RetriesAfterRateLimit) {
  server.enqueue(ScriptedResponse::json(429, R"({"error":{"message":"slow down"}})"));
  server.enqueue(ScriptedResponse::json(503, "unavailable"));
  server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json")));
  LlmReply reply = ask();
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 3);
}

TEST_F(LlmProviderTest, UnauthorizedIsNotRetriedAndNeverLeaksTheKey) {
  server.enqueue(ScriptedResponse::json(401, recordedReply("error_body.json")));
  server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json")));
  LlmReply reply = ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_EQ(reply.httpStatus, 401);
  EXPECT_EQ(server.requestCount(), 1u);
  EXPECT_NE(reply.error.find("401"), std::string::npos) << reply.error;
  EXPECT_NE(reply.error.find("Incorrect API key"), std::string::npos) << reply.error;
  // The server echoed the key; the error must not.
  EXPECT_EQ(reply.error.find("sk-test-secret-0123"), std::string::npos) << reply.error;
  EXPECT_EQ(makeOpenAiCompatibleProvider(config)->name().find("sk-test"), std::string::npos);
}

TEST_F(LlmProviderTest, OtherClientErrorsAreNotRetried) {
  server.enqueue(ScriptedResponse::json(400, R"({"error":{"message":"bad model"}})"));
  LlmReply reply = ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_NE(reply.error.find("bad model"), std::string::npos) << reply.error;
}

TEST_F(LlmProviderTest, RetriesExhaustedReportTheLastError) {
  for (int i = 0; i < 3; ++i) server.enqueue(ScriptedResponse::json(502, "bad gateway"));
  LlmReply reply = ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 3);
  EXPECT_EQ(reply.httpStatus, 502);
  EXPECT_NE(reply.error.find("502"), std::string::npos) << reply.error;
  EXPECT_NE(reply.error.find("3 attempts"), std::string::npos) << reply.error;
}

TEST_F(LlmProviderTest, GarbageBodyIsAClearError) {
  server.enqueue(ScriptedResponse::json(200, recordedReply("garbage.json")));
  LlmReply reply = ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 1);  // a malformed reply is not retried
  EXPECT_NE(reply.error.find("not JSON"), std::string::npos) << reply.error;
}

TEST_F(LlmProviderTest, EmptyChoicesIsAClearError) {
  server.enqueue(ScriptedResponse::json(200, recordedReply("empty_choices.json")));
  LlmReply reply = ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.error.find("empty \"choices\""), std::string::npos) << reply.error;
}

TEST_F(LlmProviderTest, MissingChoicesAndNullContentAreClearErrors) {
  server.enqueue(ScriptedResponse::json(200, R"({"id":"x","object":"chat.completion"})"));
  LlmReply reply = ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.error.find("no \"choices\""), std::string::npos) << reply.error;

  server.enqueue(ScriptedResponse::json(
      200, R"({"choices":[{"message":{"role":"assistant","content":null,"refusal":"no"}}]})"));
  reply = ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.error.find("refused"), std::string::npos) << reply.error;
}

TEST_F(LlmProviderTest, BrokenCodeReplyStillParsesAndExtracts) {
  // Checking the code is the caller's job; the provider only delivers the text.
  server.enqueue(ScriptedResponse::json(200, recordedReply("broken_code.json")));
  LlmReply reply = ask();
  ASSERT_TRUE(reply.ok) << reply.error;
  auto kernel = extractKernelSource(reply.content);
  ASSERT_TRUE(kernel.has_value());
  EXPECT_NE(kernel->find("a = load(x.tile((BLOCK,))[i]\n"), std::string::npos);
}

TEST_F(LlmProviderTest, TimeoutIsRetriedThenReported) {
  config.timeoutMs = 200;
  config.retries = 2;
  for (int i = 0; i < 3; ++i)
    server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json"), 3000));
  auto start = std::chrono::steady_clock::now();
  LlmReply reply = ask();
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, config.retries + 1);
  EXPECT_NE(reply.error.find("timed out"), std::string::npos) << reply.error;
  EXPECT_LT(elapsed, std::chrono::milliseconds(2000));
  EXPECT_GE(elapsed, std::chrono::milliseconds(3 * 200));
}

TEST_F(LlmProviderTest, ConnectionClosedWithoutReplyIsRetried) {
  server.enqueue(ScriptedResponse::hangUp());
  server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json")));
  LlmReply reply = ask();
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.attempts, 2);

  config.retries = 0;
  server.enqueue(ScriptedResponse::hangUp());
  reply = ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_FALSE(reply.error.empty());
}

TEST_F(LlmProviderTest, ConnectionRefusedIsRetriedThenReported) {
  int port = 0;
  {
    ScriptedServer closed;
    port = closed.port();
  }  // nothing listens there any more
  config.baseUrl = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  config.retries = 1;
  LlmReply reply = ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_NE(reply.error.find("failed"), std::string::npos) << reply.error;
}

TEST_F(LlmProviderTest, RetryAfterHeaderIsHonoured) {
  auto limited = ScriptedResponse::json(429, R"({"error":"later"})");
  limited.headers.push_back({"Retry-After", "1"});
  server.enqueue(limited);
  server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json")));
  auto start = std::chrono::steady_clock::now();
  LlmReply reply = ask();
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_GE(elapsed, std::chrono::milliseconds(950));
}

TEST_F(LlmProviderTest, ConcurrentRequestsFromSeveralThreads) {
  constexpr int kThreads = 4;
  for (int i = 0; i < kThreads; ++i)
    server.enqueue(ScriptedResponse::json(200, recordedReply("good_rewrite.json")));
  auto provider = makeOpenAiCompatibleProvider(config);
  std::vector<LlmReply> replies(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] { replies[i] = provider->complete({{"user", "go"}}); });
  for (std::thread& thread : threads) thread.join();
  for (const LlmReply& reply : replies) EXPECT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(server.requestCount(), static_cast<size_t>(kThreads));
}

// --- configuration -------------------------------------------------------------

class LlmConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"ARGUS_LLM_BASE_URL", "ARGUS_LLM_MODEL", "ARGUS_LLM_API_KEY",
                             "OPENAI_API_KEY", "ARGUS_LLM_TIMEOUT_MS", "ARGUS_TEST_LLM_KEY"})
      environment.unset(name);
  }
  std::string writeConfig(const std::string& text) {
    auto path = std::filesystem::temp_directory_path() /
                ("argus_llm_config_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json");
    std::ofstream(path) << text;
    paths.push_back(path);
    return path.string();
  }
  void TearDown() override {
    for (const auto& path : paths) std::filesystem::remove(path);
  }
  ScopedEnvironment environment;
  std::vector<std::filesystem::path> paths;
};

TEST_F(LlmConfigTest, EnvironmentNeedsBaseUrlAndModel) {
  EXPECT_FALSE(llmConfigFromEnvironment().has_value());
  environment.set("ARGUS_LLM_BASE_URL", "http://localhost:8000/v1");
  EXPECT_FALSE(llmConfigFromEnvironment().has_value());
  environment.set("ARGUS_LLM_MODEL", "qwen-coder");
  auto config = llmConfigFromEnvironment();
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->baseUrl, "http://localhost:8000/v1");
  EXPECT_EQ(config->model, "qwen-coder");
  EXPECT_TRUE(config->apiKey.empty());
  EXPECT_EQ(config->timeoutMs, LlmConfig{}.timeoutMs);
}

TEST_F(LlmConfigTest, EnvironmentKeyAndTimeout) {
  environment.set("ARGUS_LLM_BASE_URL", "https://api.example.com/v1");
  environment.set("ARGUS_LLM_MODEL", "m");
  environment.set("OPENAI_API_KEY", "sk-openai");
  environment.set("ARGUS_LLM_TIMEOUT_MS", "1500");
  auto config = llmConfigFromEnvironment();
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->apiKey, "sk-openai");
  EXPECT_EQ(config->timeoutMs, 1500);
  environment.set("ARGUS_LLM_API_KEY", "sk-argus");  // the specific variable wins
  environment.set("ARGUS_LLM_TIMEOUT_MS", "soon");   // malformed: keep the default
  config = llmConfigFromEnvironment();
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->apiKey, "sk-argus");
  EXPECT_EQ(config->timeoutMs, LlmConfig{}.timeoutMs);
}

TEST_F(LlmConfigTest, FileWithAllFields) {
  environment.set("ARGUS_TEST_LLM_KEY", "sk-from-env");
  std::string error;
  auto config = llmConfigFromFile(writeConfig(R"({
      "base_url": "http://127.0.0.1:8080/v1", "model": "local",
      "api_key_env": "ARGUS_TEST_LLM_KEY", "timeout_ms": 30000, "retries": 4,
      "retry_delay_ms": 100, "temperature": 0.7, "max_tokens": 2048})"),
                                  error);
  ASSERT_TRUE(config.has_value()) << error;
  EXPECT_EQ(config->baseUrl, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(config->model, "local");
  EXPECT_EQ(config->apiKey, "sk-from-env");
  EXPECT_EQ(config->timeoutMs, 30000);
  EXPECT_EQ(config->retries, 4);
  EXPECT_EQ(config->retryDelayMs, 100);
  EXPECT_DOUBLE_EQ(config->temperature, 0.7);
  EXPECT_EQ(config->maxTokens, 2048);
}

TEST_F(LlmConfigTest, FileWithInlineKeyAndDefaults) {
  std::string error;
  auto config = llmConfigFromFile(
      writeConfig(R"({"base_url": "https://x/v1", "model": "m", "api_key": "sk-inline"})"), error);
  ASSERT_TRUE(config.has_value()) << error;
  EXPECT_EQ(config->apiKey, "sk-inline");
  EXPECT_EQ(config->retries, LlmConfig{}.retries);
}

TEST_F(LlmConfigTest, FileErrorsAreExplained) {
  struct Case {
    std::string text, expected;
  };
  std::vector<Case> cases = {
      {R"({"model": "m"})", "missing \"base_url\""},
      {R"({"base_url": "http://x/v1"})", "missing \"model\""},
      {R"({"base_url": "ftp://x", "model": "m"})", "http:// or https://"},
      {R"({"base_url": "http://x", "model": "m", "api_key_env": "ARGUS_TEST_LLM_KEY"})",
       "ARGUS_TEST_LLM_KEY"},
      {R"({"base_url": "http://x", "model": "m", "timeout_ms": "fast"})", "\"timeout_ms\""},
      {R"({"base_url": "http://x", "model": "m", "retries": -1})", "\"retries\""},
      {R"({"base_url": "http://x", "model": "m", "temperature": 9})", "\"temperature\""},
      {R"({"base_url": "http://x", "model": "m", "modle": "typo"})", "unknown key \"modle\""},
      {R"(["not", "an", "object"])", "JSON object"},
      {R"({"base_url": )", "not valid JSON"},
  };
  for (const Case& c : cases) {
    std::string error;
    EXPECT_FALSE(llmConfigFromFile(writeConfig(c.text), error).has_value()) << c.text;
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.text << " -> " << error;
  }
  std::string error;
  EXPECT_FALSE(llmConfigFromFile("/nonexistent/argus-llm.json", error).has_value());
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST_F(LlmConfigTest, KeyNeverAppearsInFileErrors) {
  std::string error;
  EXPECT_FALSE(
      llmConfigFromFile(writeConfig(R"({"base_url": "http://x", "api_key": "sk-hidden"})"), error)
          .has_value());
  EXPECT_EQ(error.find("sk-hidden"), std::string::npos) << error;
}

// --- kernel extraction ---------------------------------------------------------

TEST(ExtractKernelSource, TakesTheLastKernelBlock) {
  std::string reply =
      "First try:\n```python\n@kernel\ndef a(): pass\n```\nBetter:\n```ag\n@kernel\ndef b(): "
      "pass\n```\nUsage:\n```python\nrun(b)\n```\n";
  auto kernel = extractKernelSource(reply);
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(*kernel, "@kernel\ndef b(): pass\n");
}

TEST(ExtractKernelSource, HandlesCrlfBareAndTildeFences) {
  EXPECT_EQ(extractKernelSource("x\r\n```\r\n@kernel\r\ndef k(): pass\r\n```\r\n"),
            std::optional<std::string>("@kernel\ndef k(): pass\n"));
  EXPECT_EQ(extractKernelSource("~~~python\n@kernel\ndef k():\n    pass\n~~~\n"),
            std::optional<std::string>("@kernel\ndef k():\n    pass\n"));
  // A longer fence may contain a shorter one.
  EXPECT_EQ(extractKernelSource("````\n@kernel\n```\ninner\n````\n"),
            std::optional<std::string>("@kernel\n```\ninner\n"));
}

TEST(ExtractKernelSource, NothingWithoutAKernelBlock) {
  EXPECT_FALSE(extractKernelSource("").has_value());
  EXPECT_FALSE(extractKernelSource("I cannot improve this kernel.").has_value());
  EXPECT_FALSE(extractKernelSource("@kernel\ndef k(): pass\n").has_value());  // not fenced
  EXPECT_FALSE(extractKernelSource("```python\ndef helper(): pass\n```").has_value());
  EXPECT_FALSE(extractKernelSource("```diff\n+@kernel\n```").has_value());  // not a kernel tag
  EXPECT_FALSE(extractKernelSource("Use `@kernel` like ```@kernel``` inline.").has_value());
}

TEST(ExtractKernelSource, UnclosedFenceRunsToTheEndAndIndentIsRemoved) {
  EXPECT_EQ(extractKernelSource("Here:\n```python\n@kernel\ndef k(): pass\n"),
            std::optional<std::string>("@kernel\ndef k(): pass\n"));
  EXPECT_EQ(extractKernelSource("1. step\n  ```python\n  @kernel\n  def k():\n      pass\n  ```\n"),
            std::optional<std::string>("@kernel\ndef k():\n    pass\n"));
}

}  // namespace
}  // namespace argus::agent
