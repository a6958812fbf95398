// The features beyond the first set (features.h): outline, call hierarchy,
// pull diagnostics, inlay hints about memory, refactorings. Each is a pure
// function of analysed snapshots and the request's parameters; `dispatchExtra`
// (features_dispatch.cpp) is the one place the server calls them from.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lsp/features.h"

namespace argus::lsp {

// features_outline.cpp
// Kernels and device functions of the given documents (uri, text) whose names
// contain the query's characters in order (case-insensitive).
json workspaceSymbols(const std::vector<std::pair<std::string, std::string>>& documents, const std::string& query);
json foldingRanges(const Snapshot& snapshot);
json selectionRanges(const Snapshot& snapshot, const std::vector<Position>& positions);

// features_calls.cpp
json declaration(const Snapshot& snapshot, Position position);
json typeDefinition(const Snapshot& snapshot, Position position);
json prepareCallHierarchy(const Snapshot& snapshot, Position position);
json incomingCalls(const Snapshot& snapshot, const json& item);
json outgoingCalls(const Snapshot& snapshot, const json& item);

// features_diagnostics.cpp: textDocument/diagnostic (a full report, or
// "unchanged" when `previousResultId` names this snapshot's).
json documentDiagnostics(const Snapshot& snapshot, const std::optional<std::string>& previousResultId);

// features_hints.cpp: the hints beyond local types, in `range`: a tile's layout,
// a shared buffer's bytes, the pipeline stage a buffer is filled at.
json memoryInlayHints(const Snapshot& snapshot, Range range);

// features_refactor.cpp: "extract device function" for a selected run of
// statements, "inline device function" at a call.
json refactorActions(const Snapshot& snapshot, Range range);

// features_dispatch.cpp: what the server advertises and routes to the above.
// Capabilities to merge into initialize's (given the client's initialize params).
json extraCapabilities(const json& initializeParams);
// True for the requests `dispatchExtra` answers on one document.
bool isExtraDocumentRequest(const std::string& method);
// The document a request is about (params.textDocument.uri or, for the call
// hierarchy, params.item.uri).
std::optional<std::string> extraRequestUri(const std::string& method, const json& params);
// Answers one of them; nullopt for a method it does not know.
std::optional<FeatureResult> dispatchExtra(const std::string& method, const json& params, const Snapshot& snapshot);

}  // namespace argus::lsp
