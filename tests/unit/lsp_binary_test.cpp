// The `argus-lsp` executable through real pipes: exit codes and hostile input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "lsp/transport.h"

namespace argus::lsp {
namespace {

struct RunResult {
  int exitCode = -1;
  std::string out;
};

// Feeds `input` on stdin (from a file, so the server sees the end of the stream).
RunResult runServer(const std::string& input, const std::string& name) {
  std::string dir = std::string(ARGUS_BINARY_DIR) + "/tests";
  std::string in = dir + "/lsp_binary_" + name + ".in", out = dir + "/lsp_binary_" + name + ".out";
  std::ofstream(in, std::ios::binary) << input;
  std::string command = "timeout 60 " + std::string(ARGUS_BINARY_DIR) + "/argus-lsp < " + in + " > " + out + " 2>/dev/null";
  int status = std::system(command.c_str());
  RunResult result;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream output(out, std::ios::binary);
  std::stringstream buffer;
  buffer << output.rdbuf();
  result.out = buffer.str();
  std::remove(in.c_str());
  std::remove(out.c_str());
  return result;
}

std::string request(int id, const char* method) {
  return frameMessage(nlohmann::json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", nlohmann::json::object()}});
}
std::string notification(const char* method) {
  return frameMessage(nlohmann::json{{"jsonrpc", "2.0"}, {"method", method}});
}

TEST(LspBinary, ShutdownThenExitIsZero) {
  RunResult r = runServer(request(1, "initialize") + request(2, "shutdown") + notification("exit"), "clean");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.out.find("\"id\":2,\"jsonrpc\":\"2.0\",\"result\":null"), std::string::npos) << r.out;
}

TEST(LspBinary, ExitWithoutShutdownIsOne) {
  EXPECT_EQ(runServer(request(1, "initialize") + notification("exit"), "noshutdown").exitCode, 1);
}

TEST(LspBinary, EndOfStreamWithoutExitIsOne) {
  EXPECT_EQ(runServer(request(1, "initialize"), "eof").exitCode, 1);
}

TEST(LspBinary, GarbageThenACleanSession) {
  std::string garbage;
  for (int i = 0; i < 100000; ++i) garbage += static_cast<char>((i * 2654435761u) >> 13);
  garbage += "Content-Length: 5\r\n\r\n{{{{{";
  RunResult r = runServer(garbage + "\r\n\r\n" + request(1, "initialize") + request(2, "shutdown") + notification("exit"),
                          "garbage");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.out.find("\"id\":1,"), std::string::npos);
  EXPECT_NE(r.out.find("-32700"), std::string::npos) << "the malformed JSON body gets a parse error";
}

}  // namespace
}  // namespace argus::lsp
