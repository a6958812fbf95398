#include "tools/cli_common.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "support/render.h"

namespace argus::cli {

int parseCommonOption(const std::vector<std::string>& args, size_t i, CommonOptions& options,
                      std::string& error) {
  const std::string& a = args[i];
  auto define = [&](const std::string& text) {
    size_t eq = text.find('=');
    if (text.empty() || eq == 0) {
      error = "-D needs NAME=VALUE";
      return -1;
    }
    if (eq == std::string::npos) {
      options.compile.defines.emplace_back(text, "1");
    } else {
      options.compile.defines.emplace_back(text.substr(0, eq), text.substr(eq + 1));
    }
    return 0;
  };
  if (a == "-D") {
    if (i + 1 >= args.size()) { error = "-D needs NAME=VALUE"; return -1; }
    return define(args[i + 1]) < 0 ? -1 : 2;
  }
  if (a.rfind("-D", 0) == 0 && a.size() > 2) return define(a.substr(2)) < 0 ? -1 : 1;
  if (a.rfind("--arch=", 0) == 0) {
    options.archGiven = true;
    options.compile.arch = a.substr(7);
    if (!isSupportedArch(options.compile.arch)) {
      error = "unsupported --arch '" + options.compile.arch + "' (expected sm_80, sm_90 or sm_90a)";
      return -1;
    }
    return 1;
  }
  if (a.rfind("--diagnostics-format=", 0) == 0) {
    options.diagnosticsFormat = a.substr(21);
    if (options.diagnosticsFormat != "text" && options.diagnosticsFormat != "json" &&
        options.diagnosticsFormat != "sarif") {
      error = "unknown --diagnostics-format '" + options.diagnosticsFormat + "' (expected text, json or sarif)";
      return -1;
    }
    return 1;
  }
  if (a.rfind("--color=", 0) == 0) {
    options.color = a.substr(8);
    if (options.color != "auto" && options.color != "always" && options.color != "never") {
      error = "unknown --color '" + options.color + "' (expected auto, always or never)";
      return -1;
    }
    return 1;
  }
  if (a == "-Werror") { options.compile.warningsAsErrors = true; return 1; }
  if (a.rfind("--ptxas=", 0) == 0) { options.compile.ptxasPath = a.substr(8); return 1; }
  return 0;
}

void applySourceArch(CommonOptions& options, const SourceFile& file) {
  if (options.archGiven) return;
  const std::string arch = declaredArch(file.text());
  if (isSupportedArch(arch)) options.compile.arch = arch;
}

void printDiagnostics(const std::vector<Diagnostic>& diags, const SourceFile& file,
                      const CommonOptions& options) {
  if (options.diagnosticsFormat == "json") {
    std::cerr << renderJson(diags, file) << "\n";
  } else if (options.diagnosticsFormat == "sarif") {
    std::cerr << renderSarif(diags, file, ARGUS_VERSION) << "\n";
  } else if (!diags.empty()) {
    TextRenderOptions text;
    const char* term = std::getenv("TERM");
    text.color = options.color == "always" ||
                 (options.color == "auto" && isatty(STDERR_FILENO) && !std::getenv("NO_COLOR") &&
                  !(term && std::string(term) == "dumb"));
    std::cerr << renderText(diags, file, text);
  }
}

}  // namespace argus::cli
