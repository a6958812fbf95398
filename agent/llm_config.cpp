// LLM provider configuration from the environment or from a JSON file.
// The API key is read but never echoed into an error message.
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agent/llm.h"

namespace argus::agent {
namespace {

std::string environmentValue(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

// A whole decimal integer, or nothing ("12ms", "", overflow are rejected).
std::optional<long> parseInteger(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

bool isHttpUrl(const std::string& url) {
  return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

const char* const kKnownFileKeys[] = {"base_url",    "model",   "api_key",        "api_key_env",
                                      "timeout_ms",  "retries", "retry_delay_ms", "temperature",
                                      "max_tokens",  "context_window"};

std::string knownKeysList() {
  std::string list;
  for (const char* key : kKnownFileKeys) {
    if (!list.empty()) list += ", ";
    list += key;
  }
  return list;
}

// Reads an integer field when present; `minimum` guards against nonsense values.
bool readIntegerField(const nlohmann::json& object, const char* key, long minimum, int& target,
                      std::string& error) {
  auto it = object.find(key);
  if (it == object.end()) return true;
  if (!it->is_number_integer()) {
    error = std::string("\"") + key + "\" must be an integer, got " + it->dump();
    return false;
  }
  long long value = it->get<long long>();
  if (value < minimum || value > INT_MAX) {
    error = std::string("\"") + key + "\" must be an integer >= " + std::to_string(minimum) +
            ", got " + std::to_string(value);
    return false;
  }
  target = static_cast<int>(value);
  return true;
}

bool readStringField(const nlohmann::json& object, const char* key, std::string& target,
                     std::string& error) {
  auto it = object.find(key);
  if (it == object.end()) return true;
  if (!it->is_string()) {
    error = std::string("\"") + key + "\" must be a string";  // never dump: it may be a key
    return false;
  }
  target = it->get<std::string>();
  return true;
}

std::optional<LlmConfig> configFromJson(const nlohmann::json& object, std::string& error) {
  if (!object.is_object()) {
    error = "the configuration must be a JSON object like {\"base_url\": ..., \"model\": ...}";
    return std::nullopt;
  }
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const char* candidate : kKnownFileKeys) known = known || key == candidate;
    if (!known) {
      error = "unknown key \"" + key + "\"; the known keys are " + knownKeysList();
      return std::nullopt;
    }
  }
  LlmConfig config;
  if (!readStringField(object, "base_url", config.baseUrl, error) ||
      !readStringField(object, "model", config.model, error) ||
      !readStringField(object, "api_key", config.apiKey, error))
    return std::nullopt;
  if (config.baseUrl.empty()) {
    error = "missing \"base_url\" (e.g. \"https://api.openai.com/v1\")";
    return std::nullopt;
  }
  if (!isHttpUrl(config.baseUrl)) {
    error = "\"base_url\" must start with http:// or https://, got \"" + config.baseUrl + "\"";
    return std::nullopt;
  }
  if (config.model.empty()) {
    error = "missing \"model\" (the model name the server expects, e.g. \"gpt-4o\")";
    return std::nullopt;
  }
  if (object.contains("api_key") && object.contains("api_key_env")) {
    error = "give either \"api_key\" or \"api_key_env\", not both";
    return std::nullopt;
  }
  std::string keyVariable;
  if (!readStringField(object, "api_key_env", keyVariable, error)) return std::nullopt;
  if (object.contains("api_key_env")) {
    if (keyVariable.empty()) {
      error = "\"api_key_env\" must name an environment variable";
      return std::nullopt;
    }
    config.apiKey = environmentValue(keyVariable.c_str());
    if (config.apiKey.empty()) {
      error = "the environment variable " + keyVariable +
              " named by \"api_key_env\" is not set (export it, or drop \"api_key_env\" for "
              "a server that needs no key)";
      return std::nullopt;
    }
  }
  if (!readIntegerField(object, "timeout_ms", 1, config.timeoutMs, error) ||
      !readIntegerField(object, "retries", 0, config.retries, error) ||
      !readIntegerField(object, "retry_delay_ms", 0, config.retryDelayMs, error) ||
      !readIntegerField(object, "max_tokens", 1, config.maxTokens, error) ||
      !readIntegerField(object, "context_window", 1024, config.contextWindow, error))
    return std::nullopt;
  if (config.maxTokens >= config.contextWindow) {
    error = "\"max_tokens\" (" + std::to_string(config.maxTokens) + ") leaves no room for a prompt in \"context_window\" (" +
            std::to_string(config.contextWindow) + ")";
    return std::nullopt;
  }
  if (auto it = object.find("temperature"); it != object.end()) {
    if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 2) {
      error = "\"temperature\" must be a number between 0 and 2, got " + it->dump();
      return std::nullopt;
    }
    config.temperature = it->get<double>();
  }
  return config;
}

}  // namespace

std::optional<LlmConfig> llmConfigFromEnvironment() {
  LlmConfig config;
  config.baseUrl = environmentValue("ARGUS_LLM_BASE_URL");
  config.model = environmentValue("ARGUS_LLM_MODEL");
  if (config.baseUrl.empty() || config.model.empty() || !isHttpUrl(config.baseUrl))
    return std::nullopt;
  config.apiKey = environmentValue("ARGUS_LLM_API_KEY");
  if (config.apiKey.empty()) config.apiKey = environmentValue("OPENAI_API_KEY");
  // A malformed or non-positive timeout keeps the default rather than disabling the limit.
  if (auto timeout = parseInteger(environmentValue("ARGUS_LLM_TIMEOUT_MS"));
      timeout && *timeout > 0 && *timeout <= INT_MAX)
    config.timeoutMs = static_cast<int>(*timeout);
  if (auto window = parseInteger(environmentValue("ARGUS_LLM_CONTEXT_WINDOW")); window && *window >= 1024 && *window <= INT_MAX)
    config.contextWindow = static_cast<int>(*window);
  if (auto tokens = parseInteger(environmentValue("ARGUS_LLM_MAX_TOKENS"));
      tokens && *tokens > 0 && *tokens < config.contextWindow)
    config.maxTokens = static_cast<int>(*tokens);
  return config;
}

std::optional<LlmConfig> llmConfigFromFile(const std::string& path, std::string& error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open the LLM configuration file '" + path + "'";
    return std::nullopt;
  }
  std::stringstream contents;
  contents << file.rdbuf();
  nlohmann::json object = nlohmann::json::parse(contents.str(), nullptr, /*allow_exceptions=*/false,
                                                /*ignore_comments=*/true);
  if (object.is_discarded()) {
    error = "'" + path + "' is not valid JSON";
    return std::nullopt;
  }
  std::string detail;
  auto config = configFromJson(object, detail);
  if (!config) error = "'" + path + "': " + detail;
  return config;
}

}  // namespace argus::agent
