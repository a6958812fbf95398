// A scripted HTTP/1.1 server on 127.0.0.1 for tests of HTTP clients (the LLM
// providers, the agent loop end to end). Each connection carries one request
// and gets the next scripted response from a queue; every request is
// recorded. Connections are served concurrently, so a delayed reply does not
// hold back a client's retry.
//
//   ScriptedServer server;                       // listens on an ephemeral port
//   ASSERT_TRUE(server.ok()) << server.error();
//   server.enqueue(ScriptedResponse::json(500, R"({"error":"busy"})"));
//   server.enqueue(ScriptedResponse::json(200, body));
//   config.baseUrl = server.baseUrl();           // http://127.0.0.1:<port>/v1
//   ... server.requests()[0].body ...
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace argus::agent::testing {

struct ScriptedResponse {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra response headers
  int delayMs = 0;                  // wait this long after the request before replying
  bool closeWithoutReply = false;   // read the request, then hang up silently

  static ScriptedResponse json(int status, std::string body, int delayMs = 0);
  static ScriptedResponse hangUp(int delayMs = 0);
};

struct RecordedRequest {
  std::string method;
  std::string path;                            // e.g. /v1/chat/completions
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  // The header's value, or "" when it was not sent (name is case-insensitive).
  std::string header(const std::string& name) const;
  bool hasHeader(const std::string& name) const;
};

class ScriptedServer {
 public:
  ScriptedServer();   // binds 127.0.0.1:0 and starts serving
  ~ScriptedServer();  // stops at once, cutting short any scripted delay
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  bool ok() const { return listenFd_ >= 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  // http://127.0.0.1:<port><prefix>; the default suits LlmConfig::baseUrl.
  std::string baseUrl(const std::string& prefix = "/v1") const;

  void enqueue(ScriptedResponse response);
  // When the queue is empty the server answers this (default: 500 saying so).
  void setFallback(ScriptedResponse response);

  std::vector<RecordedRequest> requests() const;
  size_t requestCount() const;
  size_t pendingResponses() const;

 private:
  void acceptLoop();
  void serveConnection(int fd);
  ScriptedResponse nextResponse();
  bool waitOrStop(int delayMs);  // false when stopping

  int listenFd_ = -1;
  int port_ = 0;
  std::string error_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::condition_variable stopSignal_;
  std::deque<ScriptedResponse> queue_;
  ScriptedResponse fallback_;
  std::vector<RecordedRequest> requests_;
  std::vector<std::thread> connections_;
  std::thread acceptThread_;
};

}  // namespace argus::agent::testing
