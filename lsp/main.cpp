// argus-lsp: the Argus language server over stdio.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "lsp/server.h"

namespace {

void printHelp() {
  std::cout << "usage: argus-lsp [--debounce-ms=N] [--workers=N]\n"
               "The Argus language server: speaks LSP 3.17 over stdin/stdout; logs to stderr.\n";
}

}  // namespace

int main(int argc, char** argv) {
  argus::lsp::ServerOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      printHelp();
      return 0;
    }
    if (arg == "--version") {
      std::cout << "argus-lsp " << ARGUS_VERSION << "\n";
      return 0;
    }
    if (arg.rfind("--debounce-ms=", 0) == 0) {
      options.scheduler.debounce = std::chrono::milliseconds(std::atoi(arg.c_str() + 14));
    } else if (arg.rfind("--workers=", 0) == 0) {
      options.scheduler.workers = static_cast<unsigned>(std::max(1, std::atoi(arg.c_str() + 10)));
    } else if (arg == "--stdio") {
      // What VS Code's client passes; stdio is the only transport.
    } else {
      std::cerr << "argus-lsp: unknown option '" << arg << "' (try --help)\n";
      return 2;
    }
  }
  std::ios::sync_with_stdio(false);
  // std::cin is tied to std::cout: every read would flush cout from the main
  // thread without the writer's lock while a worker writes a reply, and a reply
  // could go out twice. The writer flushes under its lock itself.
  std::cin.tie(nullptr);
  std::cerr.tie(nullptr);
  argus::lsp::MessageWriter writer(std::cout);
  argus::lsp::MessageReader reader(std::cin);
  int code;
  {
    argus::lsp::Server server([&writer](const nlohmann::json& m) { writer.write(m); },
                              [](const std::string& line) { std::cerr << "argus-lsp: " << line << std::endl; },
                              options);
    code = server.run(reader);
    std::cout.flush();
    // Do not wait for an analysis still running on a worker.
    std::fflush(nullptr);
    std::_Exit(code);
  }
}
