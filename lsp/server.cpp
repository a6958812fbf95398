#include "lsp/server.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>

#include "lsp/document.h"
#include "lsp/features.h"
#include "lsp/features_extra.h"
#include "support/render.h"

#ifndef ARGUS_VERSION
#define ARGUS_VERSION "0.0.0"
#endif

namespace argus::lsp {

namespace {
// LSP messages nest a dozen levels; anything far deeper is refused before it
// is built, so that nothing downstream (copies, dumps) recurses that deep.
constexpr size_t kMaxJsonDepth = 64;
const char* kProgressIdPrefix = "argus-progress-";
const char* kRefreshIdPrefix = "argus-refresh-";

bool isValidId(const json& id) { return id.is_number_integer() || id.is_string(); }
}  // namespace

// features_format.cpp: the canonical formatter as TextEdit[] (null when the
// document has syntax errors).
json formatting(const Snapshot& snapshot);
json rangeFormatting(const Snapshot& snapshot, Range range);

Server::Server(Send send, Log log, ServerOptions options)
    : send_(std::move(send)), log_(std::move(log)), shutdownGrace_(options.shutdownGrace) {
  scheduler_ = std::make_unique<Scheduler>(
      options.scheduler,
      [this](const std::string& uri, int64_t version, const SourceFile& file, const std::vector<Diagnostic>& diags) {
        publish(uri, version, file, diags);
      },
      [this](const CheckEvent& event) { onCheckEvent(event); },
      [this](const std::string& uri) { onResourcesMeasured(uri); });
}

// Register counts arrive after the check's diagnostics; a client that can be
// told re-asks for the hints (others see them on their next request).
void Server::onResourcesMeasured(const std::string&) {
  if (!inlayHintRefresh_) return;
  send_(json{{"jsonrpc", "2.0"}, {"id", kRefreshIdPrefix + std::to_string(nextRefreshId_++)},
             {"method", "workspace/inlayHint/refresh"}});
}

std::optional<std::string> Server::documentText(const std::string& uri) const {
  std::optional<std::pair<std::string, int64_t>> current = scheduler_->text(uri);
  if (!current) return std::nullopt;
  return current->first;
}

void Server::publish(const std::string& uri, int64_t version, const SourceFile& file,
                     const std::vector<Diagnostic>& diagnostics) {
  json list = json::array();
  for (const Diagnostic& diag : diagnostics) list.push_back(diagnosticToJson(diag, file));
  send_(json{{"jsonrpc", "2.0"},
             {"method", "textDocument/publishDiagnostics"},
             {"params", {{"uri", uri}, {"version", version}, {"diagnostics", std::move(list)}}}});
}

// A check's progress: create the token (the client must accept it before it
// is used), then begin / report / end. A check that ends before the client
// answered still gets its begin and end, so that the token is closed.
void Server::onCheckEvent(const CheckEvent& event) {
  // A pulled report of the front end alone is now incomplete: ask the client to pull again.
  if (event.kind == CheckEvent::Kind::End && diagnosticRefresh_)
    send_(json{{"jsonrpc", "2.0"}, {"id", kRefreshIdPrefix + std::to_string(nextRefreshId_++)},
               {"method", "workspace/diagnostic/refresh"}});
  if (!workDoneProgress_) return;
  std::string token = "argus-check-" + std::to_string(event.id);
  auto progress = [&](json value) {
    send_(json{{"jsonrpc", "2.0"}, {"method", "$/progress"}, {"params", {{"token", token}, {"value", std::move(value)}}}});
  };
  std::lock_guard<std::mutex> lock(progressMutex_);
  switch (event.kind) {
    case CheckEvent::Kind::Begin:
      progress_[event.id] = ProgressState{};
      send_(json{{"jsonrpc", "2.0"}, {"id", kProgressIdPrefix + std::to_string(event.id)},
                 {"method", "window/workDoneProgress/create"}, {"params", {{"token", token}}}});
      break;
    case CheckEvent::Kind::Report: {
      auto it = progress_.find(event.id);
      if (it == progress_.end() || !it->second.begun || event.progress.total == 0) break;
      std::string what = event.progress.kernel.empty() ? "target checks" : "kernel '" + event.progress.kernel + "'";
      progress(json{{"kind", "report"}, {"message", what},
                    {"percentage", static_cast<unsigned>(100 * event.progress.done / event.progress.total)}});
      break;
    }
    case CheckEvent::Kind::End: {
      auto it = progress_.find(event.id);
      if (it == progress_.end()) break;
      if (it->second.begun) {
        progress(json{{"kind", "end"}});
        progress_.erase(it);
      } else {
        it->second.ended = true;
      }
      break;
    }
  }
}

void Server::onResponse(const json& id, bool ok) {
  if (!id.is_string()) return;
  std::string text = id.get<std::string>();
  if (text.rfind(kProgressIdPrefix, 0) != 0) return;
  uint64_t check = std::strtoull(text.c_str() + std::strlen(kProgressIdPrefix), nullptr, 10);
  std::lock_guard<std::mutex> lock(progressMutex_);
  auto it = progress_.find(check);
  if (it == progress_.end()) return;
  if (!ok) {
    progress_.erase(it);
    return;
  }
  std::string token = "argus-check-" + std::to_string(check);
  json begin = {{"kind", "begin"}, {"title", "Argus: checking"}, {"cancellable", false}};
  send_(json{{"jsonrpc", "2.0"}, {"method", "$/progress"}, {"params", {{"token", token}, {"value", begin}}}});
  it->second.begun = true;
  if (it->second.ended) {
    send_(json{{"jsonrpc", "2.0"}, {"method", "$/progress"}, {"params", {{"token", token}, {"value", {{"kind", "end"}}}}}});
    progress_.erase(it);
  }
}

Server::~Server() { scheduler_->stop(); }

int Server::run(MessageReader& reader) {
  while (!exited_) {
    ReadResult message = reader.read();
    switch (message.kind) {
      case ReadResult::Kind::Message:
        if (!message.problem.empty()) log_("skipped bytes before a message: " + message.problem);
        handleBody(message.body);
        break;
      case ReadResult::Kind::Malformed: handleMalformed(message.problem); break;
      case ReadResult::Kind::EndOfStream:
        log_("the client closed the connection without 'exit'");
        exited_ = true;
        break;
    }
  }
  return exitCode();
}

void Server::handleMalformed(const std::string& problem) { log_("ignoring a malformed message: " + problem); }

void Server::handleBody(const std::string& body) {
  bool tooDeep = false;
  json message = parseMessage(body, kMaxJsonDepth, tooDeep);
  if (message.is_discarded()) {
    log_("a message body is not valid JSON");
    replyError(nullptr, error_code::kParseError, "the message is not valid JSON");
    return;
  }
  if (tooDeep) {
    // Answer a request by its id when that is still readable.
    const json* id = message.is_object() ? member(message, "id") : nullptr;
    bool isRequest = id && isValidId(*id) && message.is_object() && member(message, "method");
    log_("refused a message nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (isRequest || !message.is_object() || !member(message, "method"))
      replyError(isRequest ? *id : json(nullptr), error_code::kInvalidRequest,
                 "the message is nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return;
  }
  handle(message);
}

void Server::handle(const json& message) {
  try {
    if (!message.is_object()) {
      replyError(nullptr, error_code::kInvalidRequest, "a JSON-RPC message must be an object");
      return;
    }
    const json* id = member(message, "id");
    const json* method = member(message, "method");
    bool validId = id && (id->is_number_integer() || id->is_string());
    if (!method) {
      // A response to a request of ours (window/workDoneProgress/create) or nonsense.
      if (id && (member(message, "result") || member(message, "error"))) onResponse(*id, !member(message, "error"));
      if (!member(message, "result") && !member(message, "error"))
        replyError(validId ? *id : json(nullptr), error_code::kInvalidRequest, "a request needs a 'method'");
      return;
    }
    if (!method->is_string()) {
      if (id) replyError(validId ? *id : json(nullptr), error_code::kInvalidRequest, "'method' must be a string");
      else log_("ignoring a notification whose 'method' is not a string");
      return;
    }
    const json* paramsPtr = member(message, "params");
    json params = paramsPtr ? *paramsPtr : json::object();
    if (id) {
      if (!validId) {
        replyError(nullptr, error_code::kInvalidRequest, "'id' must be an integer or a string");
        return;
      }
      handleRequest(*id, method->get<std::string>(), params);
    } else {
      handleNotification(method->get<std::string>(), params);
    }
  } catch (const std::exception& error) {
    log_(std::string("internal error while handling a message: ") + error.what());
  }
}

void Server::reply(const json& id, json result) {
  send_(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void Server::replyError(const json& id, int code, const std::string& message) {
  send_(json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

json Server::initializeResult() const {
  json capabilities = {
      {"positionEncoding", "utf-16"},
      {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", false}}},
      {"hoverProvider", true},
      {"definitionProvider", true},
      {"referencesProvider", true},
      {"documentHighlightProvider", true},
      {"renameProvider", {{"prepareProvider", true}}},
      {"documentSymbolProvider", true},
      {"completionProvider", {{"triggerCharacters", {"."}}, {"resolveProvider", false}}},
      {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}},
      {"signatureHelpProvider", {{"triggerCharacters", {"(", ","}}}},
      {"semanticTokensProvider", {{"legend", semanticTokensLegend()}, {"full", {{"delta", true}}}}},
      {"inlayHintProvider", true},
      {"documentFormattingProvider", true},
      {"documentRangeFormattingProvider", true},
  };
  return json{{"capabilities", capabilities}, {"serverInfo", {{"name", "argus-lsp"}, {"version", ARGUS_VERSION}}}};
}

void Server::handleRequest(const json& id, const std::string& method, const json& params) {
  if (state_ == State::Uninitialized && method != "initialize") {
    replyError(id, error_code::kServerNotInitialized, "the server is not initialized: send 'initialize' first");
    return;
  }
  if (state_ == State::ShutDown) {
    replyError(id, error_code::kInvalidRequest, "the server is shut down: only 'exit' is accepted");
    return;
  }
  if (method == "initialize") {
    if (state_ != State::Uninitialized) {
      replyError(id, error_code::kInvalidRequest, "'initialize' was already received");
      return;
    }
    state_ = State::Running;
    if (const json* capabilities = member(params, "capabilities"))
      if (const json* window = member(*capabilities, "window"))
        if (const json* progress = member(*window, "workDoneProgress"))
          workDoneProgress_ = progress->is_boolean() && progress->get<bool>();
    if (const json* capabilities = member(params, "capabilities"))
      if (const json* workspace = member(*capabilities, "workspace"))
        if (const json* hints = member(*workspace, "inlayHint"))
          if (const json* refresh = member(*hints, "refreshSupport"))
            inlayHintRefresh_ = refresh->is_boolean() && refresh->get<bool>();
    if (const json* capabilities = member(params, "capabilities"))
      if (const json* workspace = member(*capabilities, "workspace"))
        if (const json* diagnostics = member(*workspace, "diagnostics"))
          if (const json* refresh = member(*diagnostics, "refreshSupport"))
            diagnosticRefresh_ = refresh->is_boolean() && refresh->get<bool>();
    if (const json* options = member(params, "initializationOptions")) didChangeConfiguration(json{{"settings", *options}});
    snippetSupport_ = clientSupportsSnippets(params);
    json result = initializeResult();
    result["capabilities"].update(extraCapabilities(params));
    reply(id, std::move(result));
    return;
  }
  if (method == "shutdown") {
    // Answer what is still pending first, so that no request goes unanswered;
    // requests whose analysis takes longer are answered here (cancelled), and
    // their late results are dropped.
    std::vector<json> late;
    {
      std::unique_lock<std::mutex> lock(inFlightMutex_);
      inFlightDone_.wait_for(lock, shutdownGrace_, [this] { return inFlight_.empty() && running_ == 0; });
      for (auto& [key, pending] : inFlight_) late.push_back(pending);
      inFlight_.clear();
      cancelled_.clear();
    }
    for (const json& pending : late)
      replyError(pending, error_code::kRequestCancelled, "the server is shutting down");
    {
      // Features already running on a snapshot are quick: let them answer.
      std::unique_lock<std::mutex> lock(inFlightMutex_);
      inFlightDone_.wait(lock, [this] { return running_ == 0; });
    }
    state_ = State::ShutDown;
    shutdownReceived_ = true;
    reply(id, nullptr);
    return;
  }
  static const std::set<std::string> documentRequests = {
      "textDocument/hover", "textDocument/definition", "textDocument/references", "textDocument/documentHighlight", "textDocument/prepareRename",
      "textDocument/rename", "textDocument/documentSymbol", "textDocument/completion", "textDocument/codeAction",
      "textDocument/signatureHelp", "textDocument/semanticTokens/full", "textDocument/semanticTokens/full/delta",
      "textDocument/inlayHint", "textDocument/formatting", "textDocument/rangeFormatting"};
  if (method == "workspace/symbol") {
    std::vector<std::pair<std::string, std::string>> documents;
    for (const std::string& open : scheduler_->openUris())
      if (auto text = scheduler_->text(open)) documents.emplace_back(open, std::move(text->first));
    return reply(id, workspaceSymbols(documents, stringMember(params, "query").value_or("")));
  }
  bool extra = isExtraDocumentRequest(method);
  if (!documentRequests.count(method) && !extra) {
    replyError(id, error_code::kMethodNotFound, "unsupported method '" + method + "'");
    return;
  }
  std::optional<std::string> uri = extra ? extraRequestUri(method, params) : documentUri(params);
  if (!uri) {
    replyError(id, error_code::kInvalidParams, "'params.textDocument.uri' is missing");
    return;
  }
  {
    std::lock_guard<std::mutex> lock(inFlightMutex_);
    inFlight_[id.dump()] = id;
  }
  scheduler_->schedule(*uri, [this, id, method, params](const std::shared_ptr<const Snapshot>& snapshot) {
    if (!startRequest(id)) return;  // answered at shutdown
    runFeature(id, method, params, snapshot);
    finishRequest(id);
  });
}

void Server::runFeature(const json& id, const std::string& method, const json& params,
                        const std::shared_ptr<const Snapshot>& snapshot) {
  if (isCancelled(id)) {
    replyError(id, error_code::kRequestCancelled, "the request was cancelled");
    return;
  }
  if (!snapshot) {
    replyError(id, error_code::kInvalidParams, "the document is not open");
    return;
  }
  try {
    auto position = [&]() -> std::optional<Position> {
      const json* p = member(params, "position");
      return p ? positionFromJson(*p) : std::nullopt;
    };
    auto needPosition = [&]() {
      std::optional<Position> p = position();
      if (!p) replyError(id, error_code::kInvalidParams, "'params.position' is missing or not a position");
      return p;
    };
    const Snapshot& s = *snapshot;
    if (std::optional<FeatureResult> result = dispatchExtra(method, params, s)) {
      if (result->error) return replyError(id, result->error->first, result->error->second);
      return reply(id, std::move(result->result));
    }
    if (method == "textDocument/documentSymbol") return reply(id, documentSymbols(s));
    if (method == "textDocument/semanticTokens/full") return reply(id, semanticTokensFor(s, nullptr));
    if (method == "textDocument/semanticTokens/full/delta") {
      std::optional<std::string> previous = stringMember(params, "previousResultId");
      return reply(id, semanticTokensFor(s, previous ? &*previous : nullptr));
    }
    if (method == "textDocument/formatting") return reply(id, formatting(s));
    if (method == "textDocument/codeAction" || method == "textDocument/inlayHint" ||
        method == "textDocument/rangeFormatting") {
      const json* r = member(params, "range");
      std::optional<Range> range = r ? rangeFromJson(*r) : std::nullopt;
      if (!range) return replyError(id, error_code::kInvalidParams, "'params.range' is missing or not a range");
      if (method == "textDocument/rangeFormatting") return reply(id, rangeFormatting(s, *range));
      return reply(id, method == "textDocument/codeAction" ? codeActions(s, *range) : inlayHints(s, *range));
    }
    std::optional<Position> p = needPosition();
    if (!p) return;
    if (method == "textDocument/hover") return reply(id, hover(s, *p));
    if (method == "textDocument/definition") return reply(id, definition(s, *p));
    if (method == "textDocument/documentHighlight") return reply(id, documentHighlights(s, *p));
    if (method == "textDocument/completion") return reply(id, completion(s, *p, snippetSupport_));
    if (method == "textDocument/signatureHelp") return reply(id, signatureHelp(s, *p));
    if (method == "textDocument/prepareRename") return reply(id, prepareRename(s, *p));
    if (method == "textDocument/references") {
      const json* context = member(params, "context");
      const json* include = context ? member(*context, "includeDeclaration") : nullptr;
      return reply(id, references(s, *p, include && include->is_boolean() && include->get<bool>()));
    }
    if (method == "textDocument/rename") {
      std::optional<std::string> newName = stringMember(params, "newName");
      if (!newName) return replyError(id, error_code::kInvalidParams, "'params.newName' is missing");
      FeatureResult result = rename(s, *p, *newName);
      if (result.error) return replyError(id, result.error->first, result.error->second);
      return reply(id, std::move(result.result));
    }
    replyError(id, error_code::kMethodNotFound, "unsupported method '" + method + "'");
  } catch (const std::exception& error) {
    replyError(id, error_code::kInternalError, std::string("internal error: ") + error.what());
  }
}

json Server::semanticTokensFor(const Snapshot& snapshot, const std::string* previousResultId) {
  json full = semanticTokens(snapshot);
  std::vector<uint32_t> data = full["data"].get<std::vector<uint32_t>>();
  std::lock_guard<std::mutex> lock(tokensMutex_);
  TokensResult& last = lastTokens_[snapshot.uri];
  std::string resultId = std::to_string(nextResultId_++);
  json result;
  if (previousResultId && !last.resultId.empty() && *previousResultId == last.resultId)
    result = json{{"resultId", resultId}, {"edits", semanticTokensEdits(last.data, data)}};
  else
    result = json{{"resultId", resultId}, {"data", data}};
  last = TokensResult{resultId, std::move(data)};
  return result;
}

bool Server::isCancelled(const json& id) {
  std::lock_guard<std::mutex> lock(inFlightMutex_);
  return cancelled_.count(id.dump()) != 0;
}

bool Server::startRequest(const json& id) {
  std::lock_guard<std::mutex> lock(inFlightMutex_);
  if (inFlight_.erase(id.dump()) == 0) return false;
  ++running_;
  return true;
}

void Server::finishRequest(const json& id) {
  std::lock_guard<std::mutex> lock(inFlightMutex_);
  cancelled_.erase(id.dump());
  --running_;
  inFlightDone_.notify_all();
}
void Server::handleNotification(const std::string& method, const json& params) {
  if (method == "exit") {
    exited_ = true;
    return;
  }
  if (state_ != State::Running) return;  // dropped before initialize and after shutdown
  if (method == "textDocument/didOpen") didOpen(params);
  else if (method == "textDocument/didChange") didChange(params);
  else if (method == "textDocument/didClose") didClose(params);
  else if (method == "workspace/didChangeConfiguration") didChangeConfiguration(params);
  else if (method == "$/cancelRequest") {
    const json* id = member(params, "id");
    if (!id || !isValidId(*id)) return;
    std::lock_guard<std::mutex> lock(inFlightMutex_);
    if (inFlight_.count(id->dump())) cancelled_.insert(id->dump());
  }
  // `initialized`, `$/setTrace` and unknown notifications need nothing.
}

void Server::didOpen(const json& params) {
  const json* document = member(params, "textDocument");
  std::optional<std::string> uri = document ? stringMember(*document, "uri") : std::nullopt;
  std::optional<std::string> text = document ? stringMember(*document, "text") : std::nullopt;
  if (!uri || !text) {
    log_("didOpen without textDocument.uri and textDocument.text: ignored");
    return;
  }
  std::optional<int64_t> version = intMember(*document, "version");
  scheduler_->update(*uri, version.value_or(0), std::move(*text));
}

void Server::didChange(const json& params) {
  std::optional<std::string> uri = documentUri(params);
  const json* changes = member(params, "contentChanges");
  if (!uri || !changes || !changes->is_array()) {
    log_("didChange without textDocument.uri and contentChanges: ignored");
    return;
  }
  std::optional<std::pair<std::string, int64_t>> current = scheduler_->text(*uri);
  if (!current) {
    log_("didChange for a document that is not open: " + *uri);
    return;
  }
  std::vector<ContentChange> parsed;
  for (const json& change : *changes) {
    std::optional<ContentChange> c = contentChangeFromJson(change);
    if (!c) {
      log_("didChange with a malformed content change: the whole notification is ignored");
      return;
    }
    parsed.push_back(std::move(*c));
  }
  const json* document = member(params, "textDocument");
  std::optional<int64_t> version = document ? intMember(*document, "version") : std::nullopt;
  std::vector<AppliedChange> applied = applyContentChanges(current->first, parsed);
  // Typing inside comments changes no token: say how the tokens moved, so that
  // the screen step need not lex the whole text again (10-20 ms on 3,000 lines).
  std::optional<std::vector<TokenShift>> shifts;
  if (std::all_of(applied.begin(), applied.end(), [](const AppliedChange& c) { return c.insideComment; })) {
    shifts.emplace();
    for (const AppliedChange& c : applied)
      shifts->push_back(TokenShift{c.end, static_cast<int64_t>(c.length) - static_cast<int64_t>(c.end - c.begin)});
  }
  // Without a version, count on from the last one (saturating: versions come from the client).
  int64_t next = current->second < std::numeric_limits<int64_t>::max() ? current->second + 1 : current->second;
  scheduler_->update(*uri, version.value_or(next), std::move(current->first), std::move(shifts));
}

void Server::didClose(const json& params) {
  std::optional<std::string> uri = documentUri(params);
  if (!uri || !scheduler_->isOpen(*uri)) return;
  scheduler_->close(*uri);
  {
    std::lock_guard<std::mutex> lock(tokensMutex_);
    lastTokens_.erase(*uri);
  }
  // Clear what the editor shows for the closed document.
  send_(json{{"jsonrpc", "2.0"}, {"method", "textDocument/publishDiagnostics"},
             {"params", {{"uri", *uri}, {"diagnostics", json::array()}}}});
}

void Server::didChangeConfiguration(const json& params) {
  const json* settings = member(params, "settings");
  if (!settings) return;
  const json* argus = member(*settings, "argus");
  const json& section = argus ? *argus : *settings;
  ConfiguredOptions options;
  bool changed = false;
  // `target` is the editor setting's name (argus.target), `arch` argusc's flag's.
  // Empty or null: the file's `# arch:` line decides, as for argusc without --arch.
  for (const char* key : {"target", "arch"}) {
    const json* value = member(section, key);
    if (!value) continue;
    changed = true;
    if (value->is_null() || (value->is_string() && value->get<std::string>().empty())) continue;
    std::optional<std::string> arch = value->is_string() ? std::optional(value->get<std::string>()) : std::nullopt;
    if (arch && isSupportedArch(*arch)) options.arch = *arch;
    else log_("unsupported target architecture " + value->dump() + " in the settings: ignored");
  }
  if (const json* defines = member(section, "defines"); defines && defines->is_object()) {
    for (const auto& [name, value] : defines->items()) {
      std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      options.defines.emplace_back(name, text);
    }
    changed = true;
  }
  // argus.inlayHints.registers: false stops ptxas's measurement after checks.
  if (const json* hints = member(section, "inlayHints"))
    if (const json* registers = member(*hints, "registers"); registers && registers->is_boolean())
      scheduler_->setMeasureResources(registers->get<bool>());
  if (changed) scheduler_->setCompileOptions(std::move(options));
}

}  // namespace argus::lsp
