// Pull diagnostics (textDocument/diagnostic, LSP 3.17): the same diagnostics
// as publishDiagnostics, for the document's latest analysed text: the front
// end's alone until its background check is done, then everything argusc says.
#include "lsp/features_extra.h"
#include "support/render.h"

namespace argus::lsp {

json documentDiagnostics(const Snapshot& snapshot, const std::optional<std::string>& previousResultId) {
  // The server's edit counter names the text analysed; diagnostics also depend
  // on the target and defines, which re-analyse (a new generation) when changed.
  // A report made before the check finished differs from the one after it
  // (the server asks the client to pull again then: workspace/diagnostic/refresh).
  std::string resultId = std::to_string(snapshot.generation) + ":" + std::to_string(snapshot.version) +
                         (snapshot.checked() ? "" : ":front-end");
  if (previousResultId && *previousResultId == resultId) return json{{"kind", "unchanged"}, {"resultId", resultId}};
  json items = json::array();
  for (const Diagnostic& diag : snapshot.currentDiagnostics()) items.push_back(diagnosticToJson(diag, snapshot.file()));
  return json{{"kind", "full"}, {"resultId", resultId}, {"items", items}};
}

}  // namespace argus::lsp
