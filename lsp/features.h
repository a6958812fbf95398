// The language features, each a pure function of one analysed snapshot and
// the request's parameters, returning the LSP result as JSON.
#pragma once

#include <optional>
#include <string>

#include "lsp/analysis.h"
#include "lsp/protocol.h"

namespace argus::lsp {

// A result or a JSON-RPC error (code, message).
struct FeatureResult {
  json result;
  std::optional<std::pair<int, std::string>> error;
  static FeatureResult ok(json value) { return {std::move(value), std::nullopt}; }
  static FeatureResult fail(int code, std::string message) { return {nullptr, std::make_pair(code, std::move(message))}; }
};

json hover(const Snapshot& snapshot, Position position);
json definition(const Snapshot& snapshot, Position position);
json references(const Snapshot& snapshot, Position position, bool includeDeclaration);
// Occurrences of the symbol under the cursor (definition: Write, others: Read).
json documentHighlights(const Snapshot& snapshot, Position position);
json prepareRename(const Snapshot& snapshot, Position position);
FeatureResult rename(const Snapshot& snapshot, Position position, const std::string& newName);
json documentSymbols(const Snapshot& snapshot);
// With `snippets`, builtins insert a call with their required parameters as
// tab stops (insertTextFormat 2).
json completion(const Snapshot& snapshot, Position position, bool snippets = false);
// Whether initialize's params say the client takes completion snippets.
bool clientSupportsSnippets(const json& initializeParams);
json codeActions(const Snapshot& snapshot, Range range);
json signatureHelp(const Snapshot& snapshot, Position position);
json inlayHints(const Snapshot& snapshot, Range range);
json semanticTokensLegend();
json semanticTokens(const Snapshot& snapshot);  // {"data": [...]}
// The edits (one replacement of the differing middle) that turn `previous`
// into `current`, both flat token arrays.
json semanticTokensEdits(const std::vector<uint32_t>& previous, const std::vector<uint32_t>& current);

// The `publishDiagnostics` params for a snapshot.
json publishDiagnosticsParams(const Snapshot& snapshot);

// Markdown for a type: dtype, shape, memory space, layout and, for a register
// tile, which thread holds the first elements (with `numWarps` warps).
std::string describeType(const ir::Type& type, int64_t numWarps, bool warpsKnown);

}  // namespace argus::lsp
