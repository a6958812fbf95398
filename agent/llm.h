// LLM providers over HTTP (libcurl): OpenAI-compatible chat completions.
// The model's output is text; the caller only ever parses, checks, compiles
// and runs it as a kernel, never executes it on the host.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace argus::agent {

struct LlmConfig {
  std::string baseUrl;   // e.g. https://api.openai.com/v1 (".../chat/completions" is appended)
  std::string model;
  std::string apiKey;    // may be empty for local servers
  int timeoutMs = 60000;
  int retries = 2;       // extra attempts after a timeout, 429 or 5xx
  int retryDelayMs = 500;
  double temperature = 0.2;
  int maxTokens = 4096;       // the generation allowance: asked of the server, kept free in the prompt
  int contextWindow = 32768;  // the model's context window in tokens (prompt + generation)
};

// ARGUS_LLM_BASE_URL, ARGUS_LLM_MODEL, ARGUS_LLM_API_KEY (or OPENAI_API_KEY),
// ARGUS_LLM_TIMEOUT_MS, ARGUS_LLM_CONTEXT_WINDOW, ARGUS_LLM_MAX_TOKENS;
// nothing when no base URL/model is configured.
std::optional<LlmConfig> llmConfigFromEnvironment();
// A JSON file {"base_url", "model", "api_key" | "api_key_env", "timeout_ms", "retries",
// "context_window", "max_tokens", ...}.
std::optional<LlmConfig> llmConfigFromFile(const std::string& path, std::string& error);

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

struct LlmReply {
  bool ok = false;
  std::string content;
  std::string error;   // transport error, HTTP status, or malformed reply
  int httpStatus = 0;
  int attempts = 0;
};

class LlmProvider {
 public:
  virtual ~LlmProvider() = default;
  virtual LlmReply complete(const std::vector<ChatMessage>& messages) = 0;
  virtual std::string name() const = 0;
  // What the prompt may use: the model's window, and the tokens kept free for its reply.
  virtual int contextWindow() const { return 32768; }
  virtual int maxOutputTokens() const { return 4096; }
};

std::unique_ptr<LlmProvider> makeOpenAiCompatibleProvider(const LlmConfig& config);

// The kernel in a reply: the last fenced code block (```python, ```ag or
// bare) that contains "@kernel"; nothing when there is none.
std::optional<std::string> extractKernelSource(const std::string& reply);

}  // namespace argus::agent
