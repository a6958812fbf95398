// The server layer: JSON-RPC dispatch, the LSP lifecycle, documents and the
// language features. It talks to libargus only through its public API
// (Compilation, sema::Result, the diagnostic renderers) and writes nothing
// itself: messages go to `send`, warnings to `log`.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "lsp/protocol.h"
#include "lsp/scheduler.h"
#include "lsp/transport.h"

namespace argus::lsp {

struct ServerOptions {
  SchedulerOptions scheduler;
  // How long `shutdown` waits for pending requests before answering them
  // itself (cancelled), so that the editor is never left without an answer.
  std::chrono::milliseconds shutdownGrace{5000};
};

class Server {
 public:
  using Send = std::function<void(const json&)>;
  using Log = std::function<void(const std::string&)>;

  Server(Send send, Log log, ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // One message body as read from the transport (may be anything at all).
  void handleBody(const std::string& body);
  void handle(const json& message);
  // A framing problem the transport found.
  void handleMalformed(const std::string& problem);
  // Reads and handles messages until `exit` or the end of the stream; returns
  // the process exit code (0 only after `shutdown`).
  int run(MessageReader& reader);

  bool exitRequested() const { return exited_; }
  // The server's text of an open document (what every edit so far made of it).
  std::optional<std::string> documentText(const std::string& uri) const;
  int exitCode() const { return shutdownReceived_ ? 0 : 1; }

 private:
  enum class State { Uninitialized, Running, ShutDown };

  void handleRequest(const json& id, const std::string& method, const json& params);
  void handleNotification(const std::string& method, const json& params);
  void didOpen(const json& params);
  void didChange(const json& params);
  void didClose(const json& params);
  void didChangeConfiguration(const json& params);
  // Runs a feature once the document's latest text is analysed.
  void onSnapshot(const json& id, const std::string& method, const json& params);
  void reply(const json& id, json result);
  void replyError(const json& id, int code, const std::string& message);
  json initializeResult() const;
  void runFeature(const json& id, const std::string& method, const json& params,
                  const std::shared_ptr<const Snapshot>& snapshot);
  // In-flight request ids (dumped JSON), for $/cancelRequest and shutdown.
  bool isCancelled(const json& id);
  // Moves a request from pending to running; false when it was already
  // answered (at shutdown): then it must not be answered again.
  bool startRequest(const json& id);
  void finishRequest(const json& id);
  void publish(const std::string& uri, int64_t version, const SourceFile& file,
               const std::vector<Diagnostic>& diagnostics);
  // `$/progress` for background checks, when the client supports it.
  void onCheckEvent(const CheckEvent& event);
  void onResponse(const json& id, bool ok);

  Send send_;
  Log log_;
  std::chrono::milliseconds shutdownGrace_;
  State state_ = State::Uninitialized;
  bool shutdownReceived_ = false;
  bool exited_ = false;
  bool snippetSupport_ = false;  // the client takes completion snippets (insertTextFormat 2)
  std::mutex inFlightMutex_;
  std::condition_variable inFlightDone_;
  std::map<std::string, json> inFlight_;  // dumped id -> id
  size_t running_ = 0;  // requests whose feature is computing its answer
  std::set<std::string> cancelled_;
  bool workDoneProgress_ = false;  // the client can show server-initiated progress
  // The client re-asks for inlay hints on workspace/inlayHint/refresh (sent when
  // ptxas's register counts arrive after a check).
  std::atomic<bool> inlayHintRefresh_{false};
  std::atomic<bool> diagnosticRefresh_{false};  // workspace.diagnostics.refreshSupport
  std::atomic<uint64_t> nextRefreshId_{1};
  void onResourcesMeasured(const std::string& uri);
  struct ProgressState {
    bool created = false, begun = false, ended = false;
  };
  std::mutex progressMutex_;
  std::map<uint64_t, ProgressState> progress_;  // by check id
  // The last semantic tokens sent per document, for full/delta.
  struct TokensResult {
    std::string resultId;
    std::vector<uint32_t> data;
  };
  json semanticTokensFor(const Snapshot& snapshot, const std::string* previousResultId);
  std::mutex tokensMutex_;
  std::map<std::string, TokensResult> lastTokens_;
  uint64_t nextResultId_ = 1;
  std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace argus::lsp
