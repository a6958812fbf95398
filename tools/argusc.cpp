// argusc: the Argus compiler driver (clang conventions).
// Exit status: 0 success, 1 the program has errors, 2 bad usage.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "driver/compilation.h"
#include "driver/metadata.h"
#include "frontend/ast.h"
#include "frontend/lexer.h"
#include "ir/ir.h"
#include "support/render.h"
#include "tools/cli_common.h"

namespace argus::cli { int layoutCommand(const std::vector<std::string>& args); }  // argusc_layout.cpp
namespace argus::cli { int formatCommand(const std::vector<std::string>& args); }  // argusc_format.cpp
namespace argus::cli { int optCommand(const std::vector<std::string>& args); }     // argusc_opt.cpp

namespace {

constexpr const char* kUsage = R"(usage: argusc [options] FILE.ag
       argusc run [--cpu] [options] FILE.ag [--size NAME=VALUE]... [--arg NAME=VALUE]...
       argusc layout 'EXPRESSION'   (layout calculator; argusc layout --help)
       argusc format [-i | --check] FILE.ag...   (canonical formatter; argusc format --help)
       argusc opt [--pass=NAME]... [--print-after=NAME]... FILE.ag|FILE.ir   (the policy passes; argusc opt --help)

Compiles an Argus kernel file to PTX (default: FILE.ptx in the current directory).

options:
  -o FILE                     write the output to FILE ('-' for standard output)
  --emit=KIND                 tokens | ast | ir | llvm | ptx | cubin  (default: ptx)
  --arch=ARCH                 sm_80 | sm_90 | sm_90a  (default: the source's '# arch:' line, else sm_90)
  -D NAME=VALUE               override a kernel's const parameter (also -DNAME=VALUE)
  --diagnostics-format=FMT    text | json | sarif  (default: text)
  --color=WHEN                auto | always | never  (default: auto)
  -Werror                     treat warnings as errors
  -v                          say where the output went
  --version                   print the version and exit
  -h, --help                  print this help and exit

run options (on the GPU, checked against the CPU interpreter and timed; argusc run --help):
  --cpu                       run on the CPU interpreter only (no GPU needed)
  --kernel NAME               the kernel to run (default: the only or first kernel)
  --size NAME=VALUE           a runtime size (every size name of the kernel needs one)
  --arg NAME=VALUE            a scalar parameter's value (default: the declared one; else required)
  --input NAME=FILE.npy       a tensor's values from a NumPy file (default: random)
  --output-dir DIR            with --cpu: write the tensors the kernel writes as DIR/NAME.npy
  --seed N                    seed of the random inputs (default: 1)
)";

int usageError(const std::string& message) {
  std::cerr << "argusc: error: " << message << "\n"
            << "argusc: run 'argusc --help' for usage\n";
  return 2;
}

bool writeOutput(const std::string& path, const std::string& data, bool binary) {
  if (path == "-") {
    std::cout << data;
    return static_cast<bool>(std::cout);
  }
  std::ofstream out(path, binary ? std::ios::binary : std::ios::out);
  out << data;
  return static_cast<bool>(out);
}

std::string defaultOutput(const std::string& input, const std::string& extension) {
  std::string base = input.substr(input.find_last_of('/') + 1);
  if (size_t dot = base.rfind('.'); dot != std::string::npos && dot > 0) base.resize(dot);
  return base + "." + extension;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "run") return argus::cli::runCommand(
      std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "layout") return argus::cli::layoutCommand(
      std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "format") return argus::cli::formatCommand(
      std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "opt") return argus::cli::optCommand(
      std::vector<std::string>(args.begin() + 1, args.end()));

  argus::cli::CommonOptions common;
  std::string output, emit = "ptx";
  bool verbose = false;
  std::vector<std::string> inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string error;
    int consumed = argus::cli::parseCommonOption(args, i, common, error);
    if (consumed < 0) return usageError(error);
    if (consumed > 0) { i += static_cast<size_t>(consumed - 1); continue; }
    if (a == "-h" || a == "--help") { std::cout << kUsage; return 0; }
    if (a == "--version") {
      std::cout << "argusc version " << ARGUS_VERSION << " (LLVM 19 NVPTX; sm_80, sm_90, sm_90a)\n";
      return 0;
    }
    if (a == "-v") { verbose = true; continue; }
    if (a == "-o") {
      if (i + 1 >= args.size()) return usageError("-o needs a file name");
      output = args[++i];
      continue;
    }
    if (a.rfind("--emit=", 0) == 0) {
      emit = a.substr(7);
      static const std::vector<std::string> kinds = {"tokens", "ast", "ir", "llvm", "ptx", "cubin"};
      if (std::find(kinds.begin(), kinds.end(), emit) == kinds.end())
        return usageError("unknown --emit kind '" + emit + "' (expected tokens, ast, ir, llvm, ptx or cubin)");
      continue;
    }
    if (!a.empty() && a[0] == '-' && a != "-") return usageError("unknown option '" + a + "'");
    inputs.push_back(a);
  }
  if (inputs.empty()) return usageError("no input file");
  if (inputs.size() > 1) return usageError("one input file at a time (got " + std::to_string(inputs.size()) + ")");

  const std::string& input = inputs[0];
  argus::DiagnosticSink loadDiags;
  std::optional<argus::SourceFile> file = argus::loadSourceFile(input, loadDiags);
  if (!file) {
    argus::cli::printDiagnostics(loadDiags.diagnostics(), argus::SourceFile(input, ""), common);
    return 1;
  }
  argus::cli::applySourceArch(common, *file);
  argus::Compilation compilation(std::move(*file), common.compile);

  std::string text;
  bool binary = false;
  if (emit == "tokens") {
    for (const argus::TokenInfo& t : compilation.tokens()) {
      argus::LineCol lc = compilation.source().lineCol(t.range.begin);
      text += std::to_string(lc.line) + ":" + std::to_string(lc.column) + " " + t.kind;
      if (t.kind != t.text && !t.text.empty()) text += " '" + t.text + "'";
      text += "\n";
    }
  } else if (emit == "ast") {
    text = argus::ast::dumpAst(compilation.ast(), compilation.source());
  } else if (emit == "ir") {
    text = argus::ir::print(compilation.ir(), &compilation.source());
  } else if (emit == "llvm") {
    text = compilation.llvmIR();
  } else if (emit == "ptx") {
    text = compilation.ptx();
  } else {
    if (const auto& cubin = compilation.cubin()) text.assign(cubin->begin(), cubin->end());
    binary = true;
  }

  bool failed = compilation.hasErrors();
  argus::cli::printDiagnostics(compilation.diagnostics(), compilation.source(), common);
  if (failed) return 1;

  bool toFile = emit == "ptx" || emit == "cubin" || !output.empty();
  std::string path = output.empty() ? (toFile ? defaultOutput(input, emit) : "-") : output;
  if (binary && path == "-" && isatty(STDOUT_FILENO))
    return usageError("refusing to write a cubin to a terminal; use -o FILE");
  if (!writeOutput(path, text, binary)) {
    std::cerr << "argusc: error: cannot write '" << path << "'\n";
    return 1;
  }
  if (verbose && path != "-") std::cerr << "argusc: wrote " << path << "\n";
  // Launch metadata for host-side launchers (python/argus), beside the PTX/cubin.
  if ((emit == "ptx" || emit == "cubin") && path != "-") {
    std::string metaPath = argus::metadataPathFor(path);
    if (!writeOutput(metaPath, argus::kernelMetadataJson(compilation.ir(), compilation.options().arch), false)) {
      std::cerr << "argusc: error: cannot write '" << metaPath << "'\n";
      return 1;
    }
    if (verbose) std::cerr << "argusc: wrote " << metaPath << "\n";
  }
  return 0;
}
