// Pull diagnostics (textDocument/diagnostic, LSP 3.17): the same diagnostics
// as publishDiagnostics, for the document's latest analysed text.
#include "lsp/features_extra.h"
#include "support/render.h"

namespace argus::lsp {

json documentDiagnostics(const Snapshot& snapshot, const std::optional<std::string>& previousResultId) {
  // The server's edit counter names the text analysed; diagnostics also depend
  // on the target and defines, which re-analyse (a new generation) when changed.
  std::string resultId = std::to_string(snapshot.generation) + ":" + std::to_string(snapshot.version);
  if (previousResultId && *previousResultId == resultId) return json{{"kind", "unchanged"}, {"resultId", resultId}};
  json items = json::array();
  for (const Diagnostic& diag : snapshot.diagnostics) items.push_back(diagnosticToJson(diag, snapshot.file()));
  return json{{"kind", "full"}, {"resultId", resultId}, {"items", items}};
}

}  // namespace argus::lsp
