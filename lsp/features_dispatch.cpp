// Routes the requests of features_extra.h: their capabilities, the document
// each is about, and their parameters. The server calls only these three
// functions, so that adding a feature here leaves the server core alone.
#include <set>

#include "lsp/features_extra.h"

namespace argus::lsp {

namespace {

const std::set<std::string>& extraDocumentRequests() {
  static const std::set<std::string> methods = {
      "textDocument/declaration",       "textDocument/typeDefinition", "textDocument/foldingRange",
      "textDocument/selectionRange",    "textDocument/diagnostic",     "textDocument/prepareCallHierarchy",
      "callHierarchy/incomingCalls",    "callHierarchy/outgoingCalls"};
  return methods;
}

}  // namespace

json extraCapabilities(const json& initializeParams) {
  json capabilities = {
      {"declarationProvider", true},
      {"typeDefinitionProvider", true},
      {"foldingRangeProvider", true},
      {"selectionRangeProvider", true},
      {"callHierarchyProvider", true},
      {"workspaceSymbolProvider", true},
      // Fix-its (features_edit.cpp) and the refactorings (features_refactor.cpp).
      {"codeActionProvider", {{"codeActionKinds", {"quickfix", "refactor.extract", "refactor.inline"}}}},
  };
  // Pull diagnostics are answered for any client, but advertised only to one
  // that asks for them (initializationOptions.pullDiagnostics): the server also
  // publishes, and a client that did both would show every diagnostic twice.
  const json* options = member(initializeParams, "initializationOptions");
  const json* pull = options ? member(*options, "pullDiagnostics") : nullptr;
  if (pull && pull->is_boolean() && pull->get<bool>())
    capabilities["diagnosticProvider"] = {{"identifier", "argus"}, {"interFileDependencies", false}, {"workspaceDiagnostics", false}};
  return capabilities;
}

bool isExtraDocumentRequest(const std::string& method) { return extraDocumentRequests().count(method) != 0; }

std::optional<std::string> extraRequestUri(const std::string& method, const json& params) {
  if (method == "callHierarchy/incomingCalls" || method == "callHierarchy/outgoingCalls") {
    const json* item = member(params, "item");
    return item ? stringMember(*item, "uri") : std::nullopt;
  }
  return documentUri(params);
}

std::optional<FeatureResult> dispatchExtra(const std::string& method, const json& params, const Snapshot& snapshot) {
  if (!isExtraDocumentRequest(method)) return std::nullopt;
  if (method == "textDocument/foldingRange") return FeatureResult::ok(foldingRanges(snapshot));
  if (method == "textDocument/diagnostic")
    return FeatureResult::ok(documentDiagnostics(snapshot, stringMember(params, "previousResultId")));
  if (method == "callHierarchy/incomingCalls" || method == "callHierarchy/outgoingCalls") {
    const json* item = member(params, "item");
    if (!item || !item->is_object()) return FeatureResult::fail(error_code::kInvalidParams, "'params.item' is missing");
    return FeatureResult::ok(method == "callHierarchy/incomingCalls" ? incomingCalls(snapshot, *item)
                                                                     : outgoingCalls(snapshot, *item));
  }
  if (method == "textDocument/selectionRange") {
    const json* list = member(params, "positions");
    if (!list || !list->is_array())
      return FeatureResult::fail(error_code::kInvalidParams, "'params.positions' is missing or not an array");
    std::vector<Position> positions;
    for (const json& p : *list) {
      std::optional<Position> position = positionFromJson(p);
      if (!position) return FeatureResult::fail(error_code::kInvalidParams, "'params.positions' holds a non-position");
      positions.push_back(*position);
    }
    return FeatureResult::ok(selectionRanges(snapshot, positions));
  }
  const json* p = member(params, "position");
  std::optional<Position> position = p ? positionFromJson(*p) : std::nullopt;
  if (!position) return FeatureResult::fail(error_code::kInvalidParams, "'params.position' is missing or not a position");
  if (method == "textDocument/declaration") return FeatureResult::ok(declaration(snapshot, *position));
  if (method == "textDocument/typeDefinition") return FeatureResult::ok(typeDefinition(snapshot, *position));
  return FeatureResult::ok(prepareCallHierarchy(snapshot, *position));
}

}  // namespace argus::lsp
