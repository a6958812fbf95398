// Options and output shared by argusc's subcommands.
#pragma once

#include <string>
#include <vector>

#include "driver/compilation.h"

namespace argus::cli {

struct CommonOptions {
  CompileOptions compile;
  bool archGiven = false;                  // --arch on the command line
  std::string diagnosticsFormat = "text";  // text | json | sarif
  std::string color = "auto";              // auto | always | never
};

// Parses one option shared by every subcommand at args[i]. Returns how many
// arguments it used (0 when args[i] is not a common option, -1 on bad usage with
// `error` set).
int parseCommonOption(const std::vector<std::string>& args, size_t i, CommonOptions& options,
                      std::string& error);

// Unless --arch was given: the architecture the source names in a line
// `# arch: sm_90a` (the examples' convention for kernels with Hopper-only
// instructions), when it is one argusc supports.
void applySourceArch(CommonOptions& options, const SourceFile& file);

// Prints diagnostics to standard error in the chosen format (json and sarif
// always print a document, even an empty one).
void printDiagnostics(const std::vector<Diagnostic>& diags, const SourceFile& file,
                      const CommonOptions& options);

// `argusc run ...`
int runCommand(const std::vector<std::string>& args);

}  // namespace argus::cli
