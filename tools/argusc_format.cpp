// `argusc format [-i | --check] FILE...`: the canonical formatter.
// Exit status: 0 ok (with --check: every file is already formatted), 1 a file
// does not parse, cannot be read or written, or (--check) would change; 2 bad usage.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/format.h"
#include "tools/cli_common.h"

namespace argus::cli {
namespace {

constexpr const char* kFormatUsage = R"(usage: argusc format [-i | --check] FILE.ag...

Formats Argus files in the canonical style (4-space indentation, one space
around binary operators, comments and line breaks inside brackets kept).
Prints the formatted text to standard output ('-' reads standard input).
A file with syntax errors is not formatted: its diagnostics are printed.

options:
  -i              rewrite the files in place (only those that change)
  --check         print nothing but the names of the files that would change;
                  exit 1 if there is any
  -h, --help      print this help and exit
)";

int usage(const std::string& message) {
  std::cerr << "argusc format: error: " << message << "\n"
            << "argusc format: run 'argusc format --help' for usage\n";
  return 2;
}

bool readInput(const std::string& path, std::string& text) {
  std::ostringstream buffer;
  if (path == "-") {
    buffer << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    buffer << in.rdbuf();
  }
  text = buffer.str();
  return true;
}

}  // namespace

int formatCommand(const std::vector<std::string>& args) {
  bool inPlace = false, check = false;
  std::vector<std::string> inputs;
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::cout << kFormatUsage;
      return 0;
    }
    if (a == "-i") inPlace = true;
    else if (a == "--check") check = true;
    else if (a.size() > 1 && a[0] == '-') return usage("unknown option '" + a + "'");
    else inputs.push_back(a);
  }
  if (inputs.empty()) return usage("no input files");
  if (inPlace && check) return usage("-i and --check cannot be combined");
  int status = 0;
  for (const std::string& path : inputs) {
    if (inPlace && path == "-") return usage("-i cannot rewrite standard input");
    std::string text;
    if (!readInput(path, text)) {
      std::cerr << "argusc format: error: cannot read '" << path << "'\n";
      status = 1;
      continue;
    }
    SourceFile file(path == "-" ? "<stdin>" : path, std::move(text));
    std::optional<std::string> formatted = formatSource(file);
    if (!formatted) {
      printDiagnostics(formatBlockers(file), file, CommonOptions{});
      std::cerr << "argusc format: error: '" << file.name() << "' has syntax errors: not formatted\n";
      status = 1;
      continue;
    }
    bool changes = *formatted != file.text();
    if (check) {
      if (changes) {
        std::cout << path << "\n";
        status = 1;
      }
    } else if (inPlace) {
      if (!changes) continue;
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << *formatted;
      if (!out) {
        std::cerr << "argusc format: error: cannot write '" << path << "'\n";
        status = 1;
      }
    } else {
      std::cout << *formatted;
    }
  }
  return status;
}

}  // namespace argus::cli
