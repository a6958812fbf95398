// `argusc opt [options] FILE.ag|FILE.ir`: the compiler's policy passes, one at a time.
// Exit status: 0 success, 1 the input has errors, 2 bad usage.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "checker/checker.h"
#include "ir/parse.h"
#include "ir/passes.h"
#include "tools/cli_common.h"

namespace argus::cli {
namespace {

constexpr const char* kOptUsage = R"(usage: argusc opt [options] FILE.ag|FILE.ir

Runs the compiler's policy passes (the IR-to-IR steps between type checking and
the checker) and prints the Tile IR. A .ag file is type-checked first; a .ir
file (or any file that starts with 'kernel @') is IR text as 'argusc --emit=ir'
or this command prints it.

options:
  --pass=NAME            run only the passes named, in the order given (repeat it;
                         default: every pass, in the compiler's order)
  --print-after=NAME     print the IR after pass NAME, each print headed by
                         '// after NAME' (repeat it; 'all': after every pass);
                         without it, the IR after the last pass is printed
  --check                run the checker on the IR after the passes and print its
                         diagnostics (on a .ir file they point into the IR text)
  --list-passes          print the passes in the compiler's order and exit
  -o FILE                write the IR to FILE (default: standard output)
  --arch=ARCH, -D NAME=VALUE, --diagnostics-format=FMT, --color=WHEN, -Werror
                         as for argusc
  -h, --help             print this help and exit
)";

int usage(const std::string& message) {
  std::cerr << "argusc opt: error: " << message << "\n"
            << "argusc opt: run 'argusc opt --help' for usage\n";
  return 2;
}

std::string passNames() {
  std::string names;
  for (const ir::Pass& pass : ir::policyPasses()) names += (names.empty() ? "" : ", ") + std::string(pass.name);
  return names;
}

// IR text, whatever the file is called: its first line that is neither blank nor a `//`
// comment starts with `kernel @` (Argus source cannot).
bool looksLikeIrText(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line.compare(first, 2, "//") == 0) continue;
    return line.compare(first, 8, "kernel @") == 0;
  }
  return false;
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int optCommand(const std::vector<std::string>& args) {
  CommonOptions common;
  std::vector<std::string> passes, printAfter, inputs;
  bool passesGiven = false, check = false;
  std::string output = "-";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string error;
    int consumed = parseCommonOption(args, i, common, error);
    if (consumed < 0) return usage(error);
    if (consumed > 0) {
      i += static_cast<size_t>(consumed - 1);
      continue;
    }
    if (a == "-h" || a == "--help") {
      std::cout << kOptUsage;
      return 0;
    }
    if (a == "--check") {
      check = true;
      continue;
    }
    if (a == "--list-passes") {
      for (const ir::Pass& pass : ir::policyPasses()) std::cout << pass.name << "\n    " << pass.summary << "\n";
      return 0;
    }
    if (a.rfind("--pass=", 0) == 0 || a.rfind("--print-after=", 0) == 0) {
      const bool isPass = a.rfind("--pass=", 0) == 0;
      std::string name = a.substr(a.find('=') + 1);
      if (!(name == "all" && !isPass) && !ir::findPass(name))
        return usage("unknown pass '" + name + "' (the passes: " + passNames() + ")");
      (isPass ? passes : printAfter).push_back(name);
      passesGiven = passesGiven || isPass;
      continue;
    }
    if (a == "-o") {
      if (i + 1 >= args.size()) return usage("-o needs a file name");
      output = args[++i];
      continue;
    }
    if (!a.empty() && a[0] == '-') return usage("unknown option '" + a + "'");
    inputs.push_back(a);
  }
  if (inputs.size() != 1) return usage(inputs.empty() ? "no input file" : "one input file at a time");
  const std::string& input = inputs[0];
  if (!passesGiven)
    for (const ir::Pass& pass : ir::policyPasses()) passes.push_back(pass.name);

  auto printsAfter = [&](const std::string& pass) {
    for (const std::string& p : printAfter)
      if (p == "all" || p == pass) return true;
    return false;
  };
  std::string text;
  bool failed = false;
  std::ostringstream buffer;
  if (std::ifstream in(input, std::ios::binary); in) buffer << in.rdbuf();
  if (endsWith(input, ".ir") || looksLikeIrText(buffer.str())) {
    if (buffer.str().empty() && !std::ifstream(input)) {
      std::cerr << "argusc opt: error: cannot read '" << input << "'\n";
      return 1;
    }
    ir::IrParseResult parsed = ir::parseIr(buffer.str());
    if (!parsed.module) {
      std::cerr << input << ": error: " << parsed.error << "\n";
      return 1;
    }
    std::vector<const ir::Pass*> chosen;
    for (const std::string& name : passes) chosen.push_back(ir::findPass(name));
    DiagnosticSink diags;
    ir::PassContext context{common.compile.arch, nullptr, &diags};
    ir::runPasses(*parsed.module, chosen, context, [&](const ir::Pass& pass, const ir::Module& module) {
      if (printsAfter(pass.name)) text += "// after " + std::string(pass.name) + "\n" + ir::print(module);
    });
    if (printAfter.empty()) text = ir::print(*parsed.module);
    SourceFile irFile(input, buffer.str());
    if (check && !diags.hasErrors()) checker::check(*parsed.module, diags, &irFile, checker::Options{});
    if (common.compile.warningsAsErrors) diags.promoteWarnings();
    failed = diags.hasErrors();
    printDiagnostics(diags.diagnostics(), irFile, common);
  } else {
    DiagnosticSink loadDiags;
    std::optional<SourceFile> file = loadSourceFile(input, loadDiags);
    if (!file) {
      printDiagnostics(loadDiags.diagnostics(), SourceFile(input, ""), common);
      return 1;
    }
    applySourceArch(common, *file);
    common.compile.passes = passes;
    const SourceFile* source = nullptr;  // set once the compilation owns the file
    common.compile.afterPass = [&](const std::string& pass, const ir::Module& module) {
      if (printsAfter(pass)) text += "// after " + pass + "\n" + ir::print(module, source);
    };
    Compilation compilation(std::move(*file), common.compile);
    source = &compilation.source();
    const ir::Module& module = compilation.ir();
    if (printAfter.empty()) text = ir::print(module, source);
    if (check) compilation.check();
    failed = compilation.hasErrors();
    printDiagnostics(compilation.diagnostics(), compilation.source(), common);
  }
  if (failed) return 1;
  if (output == "-") {
    std::cout << text;
    return std::cout ? 0 : 1;
  }
  std::ofstream out(output);
  out << text;
  if (!out) {
    std::cerr << "argusc opt: error: cannot write '" << output << "'\n";
    return 1;
  }
  return 0;
}

}  // namespace argus::cli
