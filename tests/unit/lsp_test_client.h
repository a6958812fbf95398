// An in-process LSP client for tests: drives a Server directly (the test
// thread plays the server's main loop) and collects what it sends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lsp/server.h"

namespace argus::lsp::testing {

class TestClient {
 public:
  explicit TestClient(std::chrono::milliseconds debounce = std::chrono::milliseconds(20), unsigned workers = 1)
      : server_([this](const json& m) { push(m); }, [this](const std::string& line) { log(line); },
                ServerOptions{SchedulerOptions{debounce, workers}}) {}
  explicit TestClient(ServerOptions options)
      : server_([this](const json& m) { push(m); }, [this](const std::string& line) { log(line); }, options) {}

  Server& server() { return server_; }

  void send(const json& message) { server_.handle(message); }
  void sendRaw(const std::string& body) { server_.handleBody(body); }
  void notify(const std::string& method, json params) {
    send(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  // Sends a request and waits for its response (other messages stay queued).
  json request(const std::string& method, json params, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    int id = nextId_++;
    send(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    std::optional<json> reply = waitFor([id](const json& m) { return m.contains("id") && m["id"] == id; }, timeout);
    return reply ? *reply : json{{"timeout", true}};
  }
  void initialize() { request("initialize", json{{"capabilities", json::object()}}); }
  // As an editor that shows server-initiated progress (window.workDoneProgress).
  void initializeWithProgress() {
    request("initialize", json{{"capabilities", {{"window", {{"workDoneProgress", true}}}}}});
  }
  // The next publishDiagnostics for `uri` of `version` that `accept` accepts
  // (a valid file's first publish is the front end's, the checker's follows).
  std::optional<json> diagnosticsWhere(const std::string& uri, int version, const std::function<bool(const json&)>& accept,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    return waitFor(
        [&](const json& m) {
          return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri &&
                 m["params"].contains("version") && m["params"]["version"] == version && accept(m["params"]["diagnostics"]);
        },
        timeout);
  }
  void open(const std::string& uri, const std::string& text, int version = 1) {
    notify("textDocument/didOpen",
           {{"textDocument", {{"uri", uri}, {"languageId", "argus"}, {"version", version}, {"text", text}}}});
  }
  // The next publishDiagnostics for `uri` (optionally of `version`).
  std::optional<json> diagnostics(const std::string& uri, std::optional<int> version = std::nullopt,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    return waitFor(
        [&](const json& m) {
          return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri &&
                 (!version || (m["params"].contains("version") && m["params"]["version"] == *version));
        },
        timeout);
  }

  // Removes and returns the first queued or arriving message that matches.
  std::optional<json> waitFor(const std::function<bool(const json&)>& match, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      for (auto it = messages_.begin(); it != messages_.end(); ++it)
        if (match(*it)) {
          json found = *it;
          messages_.erase(it);
          return found;
        }
      if (arrived_.wait_until(lock, deadline) == std::cv_status::timeout) return std::nullopt;
    }
  }
  // Everything that arrives until `quiet` passes without a message.
  std::vector<json> drain(std::chrono::milliseconds quiet) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      size_t before = messages_.size();
      arrived_.wait_for(lock, quiet);
      if (messages_.size() == before) break;
    }
    std::vector<json> all(messages_.begin(), messages_.end());
    messages_.clear();
    return all;
  }
  std::vector<std::string> logs() {
    std::lock_guard<std::mutex> lock(mutex_);
    return logs_;
  }

 private:
  void push(const json& message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      messages_.push_back(message);
    }
    arrived_.notify_all();
  }
  void log(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    logs_.push_back(line);
  }

  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<json> messages_;
  std::vector<std::string> logs_;
  int nextId_ = 1000;
  Server server_;  // last: destroyed first, while the queues still exist
};

inline std::string readSourceFile(const std::string& relative) {
  std::string path = std::string(ARGUS_SOURCE_DIR) + "/" + relative;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  std::fclose(f);
  return text;
}

}  // namespace argus::lsp::testing
