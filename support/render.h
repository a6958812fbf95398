// The three renderings of diagnostics (DESIGN.md §6): human text, JSON (a superset
// of LSP 3.17's Diagnostic, what the agent and the LSP consume) and SARIF 2.1.0.
// All three render the same structure; none of them prints or throws.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "support/diagnostic.h"
#include "support/source.h"

namespace argus {

struct TextRenderOptions {
  bool color = false;  // ANSI colours; the CLI enables them only on a terminal
  unsigned tabStop = 8;  // tabs in source lines expand to this many columns
};

// clang-style text: `file:line:col: error[AG3001]: message`, the source line,
// carets under the range, labels, counterexample, notes, fix-its, then a summary
// line (`2 errors, 1 warning generated.`) when there are errors or warnings.
std::string renderText(const std::vector<Diagnostic>& diags, const SourceFile& file,
                       const TextRenderOptions& options = {});
// One diagnostic without the summary line.
std::string renderTextDiagnostic(const Diagnostic& diag, const SourceFile& file,
                                 const TextRenderOptions& options = {});

// One diagnostic as an LSP Diagnostic plus `data` carrying the whole structure.
nlohmann::json diagnosticToJson(const Diagnostic& diag, const SourceFile& file);
// {"file": name, "diagnostics": [...]}, pretty printed.
std::string renderJson(const std::vector<Diagnostic>& diags, const SourceFile& file);

// A SARIF 2.1.0 log with one run.
std::string renderSarif(const std::vector<Diagnostic>& diags, const SourceFile& file,
                        const std::string& toolVersion);

// True for a diagnostic about the file as a whole rather than a place in it: an
// empty range in an empty file, or in a driver kind (AG0xxx: cannot open, -D...).
// The text shows `file: error[...]` with no line, column or source line; SARIF
// gives no region.
bool isFileLevel(const Diagnostic& diag, const SourceFile& file);

// LSP range {start:{line,character}, end:{...}}: 0-based lines, UTF-16 characters.
nlohmann::json lspRange(SourceRange range, const SourceFile& file);
// `file://` + absolute, percent-encoded path when `name` is a path; names such as
// `<stdin>` or ones that already carry a scheme are returned unchanged.
std::string fileUri(const std::string& name);

// The documentation page of a diagnostic code; the base URL is the compile
// definition ARGUS_DOCS_BASE_URL (default https://argus.dev/docs/diagnostics/).
std::string docsUrlFor(const char* code);

}  // namespace argus
