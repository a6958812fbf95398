// The OpenAI-compatible chat-completions provider over libcurl.
// Each attempt uses a fresh easy handle (no shared state between threads);
// transient failures (timeouts, connection errors, 429, 5xx) are retried with
// exponential backoff, client errors (other 4xx, malformed replies) are not.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "agent/llm.h"

namespace argus::agent {
namespace {

// A reply larger than this is not a chat completion; stop reading it.
constexpr size_t kMaxResponseBytes = 16u << 20;
constexpr long kMaxConnectTimeoutMs = 10000;
constexpr long long kMaxRetryDelayMs = 60000;
constexpr size_t kMaxQuotedBodyBytes = 300;

// curl_global_init is not thread-safe: run it exactly once, before any handle.
bool ensureCurlInitialized() {
  static std::once_flag once;
  static bool initialized = false;
  std::call_once(once, [] { initialized = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; });
  return initialized;
}

struct ResponseSink {
  std::string body;
  long long retryAfterMs = -1;  // from a Retry-After: <seconds> header
  bool overflowed = false;
};

size_t writeBody(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<ResponseSink*>(user);
  size_t bytes = size * count;
  if (sink->body.size() + bytes > kMaxResponseBytes) {
    sink->overflowed = true;
    return 0;  // makes curl abort the transfer
  }
  sink->body.append(data, bytes);
  return bytes;
}

size_t readHeader(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<ResponseSink*>(user);
  size_t bytes = size * count;
  std::string line(data, bytes);
  constexpr std::string_view kRetryAfter = "retry-after:";
  if (line.size() > kRetryAfter.size()) {
    std::string prefix = line.substr(0, kRetryAfter.size());
    std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (prefix == kRetryAfter) {
      char* end = nullptr;
      long seconds = std::strtol(line.c_str() + kRetryAfter.size(), &end, 10);
      if (end != line.c_str() + kRetryAfter.size() && seconds >= 0)
        sink->retryAfterMs = std::min<long long>(seconds * 1000LL, kMaxRetryDelayMs);
    }
  }
  return bytes;
}

// Transport failures worth another attempt: the server may be busy or restarting.
bool isTransientCurlError(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

bool isTransientHttpStatus(long status) { return status == 429 || status >= 500; }

std::string quoteBody(const std::string& body) {
  if (body.size() <= kMaxQuotedBodyBytes) return body;
  return body.substr(0, kMaxQuotedBodyBytes) + "...";
}

// The server's own explanation from an OpenAI-style error body, else the raw body.
std::string describeErrorBody(const std::string& body) {
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object()) {
    auto error = parsed.find("error");
    if (error != parsed.end()) {
      if (error->is_string()) return error->get<std::string>();
      if (error->is_object() && error->contains("message") && (*error)["message"].is_string())
        return (*error)["message"].get<std::string>();
    }
    if (parsed.contains("message") && parsed["message"].is_string())
      return parsed["message"].get<std::string>();
  }
  return quoteBody(body);
}

// Pulls choices[0].message.content out of a 2xx body, or says what is wrong with it.
bool parseCompletion(const std::string& body, std::string& content, std::string& error) {
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_discarded()) {
    error = "the server's reply is not JSON: " + quoteBody(body);
    return false;
  }
  if (!parsed.is_object()) {
    error = "the server's reply is not a JSON object: " + quoteBody(body);
    return false;
  }
  if (parsed.contains("error") && !parsed["error"].is_null()) {
    error = "the server reported an error: " + describeErrorBody(body);
    return false;
  }
  auto choices = parsed.find("choices");
  if (choices == parsed.end() || !choices->is_array()) {
    error = "the server's reply has no \"choices\" array";
    return false;
  }
  if (choices->empty()) {
    error = "the server's reply has an empty \"choices\" array (no completion was produced)";
    return false;
  }
  const nlohmann::json& first = (*choices)[0];
  if (!first.is_object() || !first.contains("message") || !first["message"].is_object()) {
    error = "the server's reply has no choices[0].message object";
    return false;
  }
  const nlohmann::json& message = first["message"];
  auto text = message.find("content");
  if (text == message.end() || !text->is_string()) {
    std::string why = "the server's reply has no text in choices[0].message.content";
    if (message.contains("refusal") && message["refusal"].is_string())
      why += " (the model refused: " + quoteBody(message["refusal"].get<std::string>()) + ")";
    error = why;
    return false;
  }
  content = text->get<std::string>();
  return true;
}

// Never let the key reach an error string, even when a server echoes it back.
std::string redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
    text.replace(at, secret.size(), "[redacted]");
  return text;
}

std::string hostOf(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = url.find('/', start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

class OpenAiCompatibleProvider : public LlmProvider {
 public:
  explicit OpenAiCompatibleProvider(LlmConfig config) : config_(std::move(config)) {
    endpoint_ = config_.baseUrl;
    while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
    endpoint_ += "/chat/completions";
  }

  int contextWindow() const override { return config_.contextWindow; }
  int maxOutputTokens() const override { return config_.maxTokens; }

  std::string name() const override {
    return "openai-compatible (" + config_.model + " at " + hostOf(config_.baseUrl) + ")";
  }

  LlmReply complete(const std::vector<ChatMessage>& messages) override {
    LlmReply reply;
    if (!ensureCurlInitialized()) {
      reply.error = "libcurl could not be initialized";
      return reply;
    }
    const std::string body = requestBody(messages);
    const int attempts = 1 + std::max(0, config_.retries);
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      reply.attempts = attempt;
      long long retryAfterMs = -1;
      bool transient = false;
      attemptOnce(body, reply, transient, retryAfterMs);
      if (reply.ok || !transient || attempt == attempts) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(backoffMs(attempt, retryAfterMs)));
    }
    if (!reply.ok) {
      if (reply.attempts > 1)
        reply.error += " (after " + std::to_string(reply.attempts) + " attempts)";
      reply.error = redact(reply.error, config_.apiKey);
    }
    return reply;
  }

 private:
  std::string requestBody(const std::vector<ChatMessage>& messages) const {
    nlohmann::json request = {{"model", config_.model},
                              {"temperature", config_.temperature},
                              {"max_tokens", config_.maxTokens},
                              {"messages", nlohmann::json::array()}};
    for (const ChatMessage& message : messages)
      request["messages"].push_back({{"role", message.role}, {"content", message.content}});
    // Replace invalid UTF-8 rather than throw: prompts may quote arbitrary source bytes.
    return request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }

  long long backoffMs(int attempt, long long retryAfterMs) const {
    long long delay = std::max(0, config_.retryDelayMs);
    for (int i = 1; i < attempt && delay < kMaxRetryDelayMs; ++i) delay *= 2;
    delay = std::min(delay, kMaxRetryDelayMs);
    return std::max(delay, retryAfterMs);
  }

  // One HTTP exchange. Fills reply (ok/content or error, httpStatus); `transient`
  // says whether another attempt could succeed.
  void attemptOnce(const std::string& body, LlmReply& reply, bool& transient,
                   long long& retryAfterMs) const {
    reply.ok = false;
    reply.httpStatus = 0;
    reply.content.clear();
    CURL* handle = curl_easy_init();
    if (!handle) {
      reply.error = "libcurl could not create a request handle";
      transient = true;
      return;
    }
    ResponseSink sink;
    char curlError[CURL_ERROR_SIZE] = {0};
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Accept: application/json");
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
    std::string authorization;
    if (!config_.apiKey.empty()) {
      authorization = "Authorization: Bearer " + config_.apiKey;
      headers = curl_slist_append(headers, authorization.c_str());
    }
    const long timeoutMs = std::max(1, config_.timeoutMs);
    curl_easy_setopt(handle, CURLOPT_URL, endpoint_.c_str());
    curl_easy_setopt(handle, CURLOPT_POST, 1L);
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeoutMs);
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeoutMs, kMaxConnectTimeoutMs));
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: thread-safe
    curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);  // never resend the key elsewhere
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, writeBody);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, readHeader);
    curl_easy_setopt(handle, CURLOPT_HEADERDATA, &sink);
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, curlError);

    CURLcode code = curl_easy_perform(handle);
    long status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(handle);
    std::fill(authorization.begin(), authorization.end(), '\0');

    reply.httpStatus = static_cast<int>(status);
    retryAfterMs = sink.retryAfterMs;
    if (code != CURLE_OK) {
      if (sink.overflowed) {
        reply.error = "the server's reply exceeds " + std::to_string(kMaxResponseBytes >> 20) +
                      " MiB; it is not a chat completion";
        transient = false;
        return;
      }
      std::string detail = curlError[0] ? curlError : curl_easy_strerror(code);
      if (code == CURLE_OPERATION_TIMEDOUT)
        reply.error = "the request to " + endpoint_ + " timed out after " +
                      std::to_string(timeoutMs) + " ms (" + detail + ")";
      else
        reply.error = "the request to " + endpoint_ + " failed: " + detail;
      transient = isTransientCurlError(code);
      return;
    }
    if (status < 200 || status >= 300) {
      reply.error = "the server answered HTTP " + std::to_string(status) + ": " +
                    describeErrorBody(sink.body);
      if (status == 401 || status == 403)
        reply.error += " (check the API key" +
                       std::string(config_.apiKey.empty() ? ": none is configured)" : ")");
      transient = isTransientHttpStatus(status);
      return;
    }
    transient = false;
    reply.ok = parseCompletion(sink.body, reply.content, reply.error);
    if (reply.ok) reply.error.clear();
  }

  LlmConfig config_;
  std::string endpoint_;
};

}  // namespace

std::unique_ptr<LlmProvider> makeOpenAiCompatibleProvider(const LlmConfig& config) {
  return std::make_unique<OpenAiCompatibleProvider>(config);
}

}  // namespace argus::agent
