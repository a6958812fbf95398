// Fuzz target for the language server: one input is a sequence of JSON-RPC
// messages fed to the server's message handler in-process, the way argus-lsp's
// main loop does. Two input forms:
//   - framed, starting with "Content-Length": the bytes go through the
//     transport's reader (headers, lengths, bodies) and Server::run;
//   - otherwise one message body per line, each given to Server::handleBody.
// Every input ends with a `shutdown` request, which waits (bounded) for the
// requests still in flight, so their features run against the analysis too.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "lsp/server.h"
#include "lsp/transport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  std::ostringstream sink;
  argus::lsp::MessageWriter writer(sink);
  argus::lsp::ServerOptions options;
  options.scheduler.debounce = std::chrono::milliseconds(0);
  options.scheduler.workers = 1;
  argus::lsp::Server server([&writer](const nlohmann::json& m) { writer.write(m); }, [](const std::string&) {}, options);
  if (input.rfind("Content-Length", 0) == 0) {
    std::istringstream in(input);
    argus::lsp::MessageReader reader(in);
    server.run(reader);
  } else {
    size_t start = 0;
    while (start <= input.size() && !server.exitRequested()) {
      size_t end = input.find('\n', start);
      if (end == std::string::npos) end = input.size();
      if (end > start) server.handleBody(input.substr(start, end - start));
      start = end + 1;
    }
  }
  if (!server.exitRequested()) server.handleBody(R"({"jsonrpc":"2.0","id":"fuzz-end","method":"shutdown"})");
  return 0;
}
