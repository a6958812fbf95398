// Hostile traffic: thousands of mutated messages through the real transport,
// and a very large document. The server must answer a valid request after.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>

#include "lsp_test_client.h"

namespace argus::lsp {
namespace {

using testing::readSourceFile;
using testing::TestClient;

const char* kUri = "file:///work/softmax.ag";

json at(int line, int character) { return json{{"line", line}, {"character", character}}; }

std::vector<json> templates(const std::string& text) {
  json doc = {{"uri", kUri}};
  auto request = [](int id, const char* method, json params) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
  };
  auto notification = [](const char* method, json params) {
    return json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
  };
  json range = {{"start", at(9, 4)}, {"end", at(9, 8)}};
  return {
      request(1, "textDocument/hover", {{"textDocument", doc}, {"position", at(9, 4)}}),
      request(2, "textDocument/completion", {{"textDocument", doc}, {"position", at(10, 8)}}),
      request(3, "textDocument/definition", {{"textDocument", doc}, {"position", at(10, 12)}}),
      request(4, "textDocument/references", {{"textDocument", doc}, {"position", at(8, 4)}, {"context", {{"includeDeclaration", true}}}}),
      request(5, "textDocument/rename", {{"textDocument", doc}, {"position", at(8, 4)}, {"newName", "q"}}),
      request(6, "textDocument/prepareRename", {{"textDocument", doc}, {"position", at(8, 4)}}),
      request(7, "textDocument/documentSymbol", {{"textDocument", doc}}),
      request(8, "textDocument/codeAction", {{"textDocument", doc}, {"range", range}, {"context", {{"diagnostics", json::array()}}}}),
      request(9, "textDocument/signatureHelp", {{"textDocument", doc}, {"position", at(9, 12)}}),
      request(10, "textDocument/semanticTokens/full", {{"textDocument", doc}}),
      request(11, "textDocument/inlayHint", {{"textDocument", doc}, {"range", range}}),
      request(12, "workspace/symbol", {{"query", "x"}}),
      notification("textDocument/didChange", {{"textDocument", {{"uri", kUri}, {"version", 7}}},
                                              {"contentChanges", json::array({{{"range", range}, {"text", "zz = 1"}}})}}),
      notification("textDocument/didOpen", {{"textDocument", {{"uri", kUri}, {"languageId", "argus"}, {"version", 1}, {"text", text}}}}),
      notification("$/cancelRequest", {{"id", 1}}),
      notification("workspace/didChangeConfiguration", {{"settings", {{"argus", {{"arch", "sm_80"}}}}}}),
  };
}

json randomValue(std::mt19937& rng) {
  switch (rng() % 9) {
    case 0: return nullptr;
    case 1: return -1;
    case 2: return "x\xff\xfe";
    case 3: return json::array({1, "a", nullptr});
    case 4: return json::object();
    case 5: return 1e308;
    case 6: return std::numeric_limits<int64_t>::max();
    case 7: return true;
    default: return std::string(rng() % 3000, 'a');
  }
}

// Replaces or removes a random member somewhere in the tree.
void mutateStructure(json& value, std::mt19937& rng) {
  for (int depth = 0; depth < 6; ++depth) {
    if (!value.is_object() || value.empty()) break;
    auto it = value.begin();
    std::advance(it, static_cast<long>(rng() % value.size()));
    if (rng() % 3 == 0 || !it->is_object()) {
      if (rng() % 4 == 0) value.erase(it.key());
      else *it = randomValue(rng);
      return;
    }
    json& next = *it;
    mutateStructure(next, rng);
    return;
  }
}

std::string mutatedMessage(const json& base, std::mt19937& rng) {
  std::string body = base.dump();
  std::string header = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  switch (rng() % 8) {
    case 0: return header + body;
    case 1: {  // flip bytes of the body
      for (int i = 0, n = 1 + static_cast<int>(rng() % 5); i < n; ++i)
        body[rng() % body.size()] = static_cast<char>(rng() % 256);
      return header + body;
    }
    case 2: return header + body.substr(0, rng() % body.size());  // truncated body
    case 3: {  // a wrong length
      long delta = static_cast<long>(rng() % 100) - 50;
      long length = std::max<long>(0, static_cast<long>(body.size()) + delta);
      return "Content-Length: " + std::to_string(length) + "\r\n\r\n" + body;
    }
    case 4: {  // binary garbage
      std::string garbage(rng() % 300, '\0');
      for (char& c : garbage) c = static_cast<char>(rng() % 256);
      return garbage;
    }
    case 5: {  // broken headers
      static const char* headers[] = {"Content-Length: abc\r\n\r\n", "Content-Length: -3\r\n\r\n",
                                      "Content-Type: text\r\n\r\n", "Content-Length 12\r\n\r\n", "\r\n\r\n\r\n"};
      return headers[rng() % 5] + body;
    }
    default: {  // valid framing, hostile content
      json copy = base;
      mutateStructure(copy, rng);
      std::string text = copy.dump(-1, ' ', false, json::error_handler_t::replace);
      return "Content-Length: " + std::to_string(text.size()) + "\r\n\r\n" + text;
    }
  }
}

TEST(LspRobustness, TenThousandMutatedMessagesThenAValidHover) {
  TestClient client(std::chrono::milliseconds(5), 2);
  std::string text = readSourceFile("examples/softmax.ag");
  std::vector<json> bases = templates(text);
  std::mt19937 rng(20261129);
  std::string stream = frameMessage(json{{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"}, {"params", json::object()}});
  stream += frameMessage(bases[13]);  // didOpen
  constexpr int kMessages = 10000;
  for (int i = 0; i < kMessages; ++i) stream += mutatedMessage(bases[rng() % bases.size()], rng);
  // Enough blank lines to finish any body whose length was overstated.
  for (int i = 0; i < 8192; ++i) stream += "\r\n";
  const char* fresh = "file:///work/fresh.ag";
  stream += frameMessage(json{{"jsonrpc", "2.0"}, {"method", "textDocument/didOpen"},
                              {"params", {{"textDocument", {{"uri", fresh}, {"languageId", "argus"}, {"version", 1}, {"text", text}}}}}});
  stream += frameMessage(json{{"jsonrpc", "2.0"}, {"id", "final"}, {"method", "textDocument/hover"},
                              {"params", {{"textDocument", {{"uri", fresh}}}, {"position", at(9, 4)}}}});
  std::istringstream in(stream);
  MessageReader reader(in);
  // The server's own loop (Server::run), counting what the transport made of it.
  int messages = 0, malformed = 0;
  for (;;) {
    ReadResult r = reader.read();
    if (r.kind == ReadResult::Kind::EndOfStream) break;
    if (r.kind == ReadResult::Kind::Message) {
      ++messages;
      client.server().handleBody(r.body);
    } else {
      ++malformed;
      client.server().handleMalformed(r.problem);
    }
    ASSERT_FALSE(client.server().exitRequested()) << "a mutated message made the server exit";
  }
  EXPECT_GT(messages, kMessages / 2) << "too much traffic was lost to desynchronised framing";
  EXPECT_GT(malformed, kMessages / 20);
  std::printf("[ info     ] %d messages framed, %d malformed\n", messages, malformed);
  auto reply = client.waitFor([](const json& m) { return m.contains("id") && m["id"] == "final"; }, std::chrono::seconds(120));
  ASSERT_TRUE(reply) << "no answer to the final hover";
  ASSERT_TRUE((*reply).contains("result")) << reply->dump();
  std::string value = (*reply)["result"]["contents"]["value"];
  EXPECT_NE(value.find("**m**: local"), std::string::npos) << value;
  EXPECT_FALSE(client.logs().empty()) << "malformed traffic should have been logged";
}

TEST(LspRobustness, FiftyThousandLineDocument) {
  TestClient client(std::chrono::milliseconds(5));
  client.initialize();
  // 5,000 copies of a 10-line kernel.
  std::string big;
  for (int i = 0; i < 5000; ++i) {
    big += "@kernel(grid=(cdiv(N, 256),), warps=4)\n";
    big += "def k" + std::to_string(i) + "(x: Tensor[f32, (N,)], y: Tensor[f32, (N,)]):\n";
    big += "    i = program_id(0)\n";
    big += "    a = load(x.tile((256,))[i])\n";
    big += "    b = exp(a) * 2.0\n";
    big += "    c = b + a\n";
    big += "    # a comment\n";
    big += "    d = maximum(c, a)\n";
    big += "    y.tile((256,))[i] = d\n";
    big += "\n";
  }
  ASSERT_EQ(std::count(big.begin(), big.end(), '\n'), 50000);
  client.open("file:///big.ag", big);
  auto published = client.diagnostics("file:///big.ag", 1, std::chrono::seconds(300));
  ASSERT_TRUE(published);
  EXPECT_TRUE((*published)["params"]["diagnostics"].empty()) << (*published)["params"]["diagnostics"][0].dump();
  json reply = client.request("textDocument/hover",
                              {{"textDocument", {{"uri", "file:///big.ag"}}}, {"position", at(49995, 4)}});
  std::string value = reply["result"]["contents"]["value"];
  EXPECT_NE(value.find("**c**: local"), std::string::npos) << reply.dump();
}

}  // namespace
}  // namespace argus::lsp

namespace argus::lsp {
namespace {

// With two workers, a small document is served while a huge one is analysed,
// and concurrent analyses of several documents all complete.
TEST(LspRobustness, DocumentsAreAnalysedIndependently) {
  testing::TestClient client(std::chrono::milliseconds(1), 2);
  client.initialize();
  std::string big;
  for (int i = 0; i < 2000; ++i) {
    big += "@kernel(grid=(cdiv(N, 256),), warps=4)\n";
    big += "def k" + std::to_string(i) + "(x: Tensor[f32, (N,)], y: Tensor[f32, (N,)]):\n";
    big += "    a = load(x.tile((256,))[program_id(0)])\n";
    big += "    y.tile((256,))[program_id(0)] = exp(a) * 2.0\n";
  }
  client.open("file:///big.ag", big);
  std::string small = testing::readSourceFile("examples/softmax.ag");
  for (int d = 0; d < 4; ++d) client.open("file:///small" + std::to_string(d) + ".ag", small);
  for (int d = 0; d < 4; ++d) {
    json reply = client.request("textDocument/hover", {{"textDocument", {{"uri", "file:///small" + std::to_string(d) + ".ag"}}},
                                                       {"position", at(9, 4)}});
    ASSERT_TRUE(reply.contains("result")) << reply.dump();
    EXPECT_NE(reply["result"]["contents"]["value"].get<std::string>().find("**m**"), std::string::npos);
  }
  EXPECT_TRUE(client.diagnostics("file:///big.ag", 1, std::chrono::seconds(300)));
  for (int d = 0; d < 4; ++d) EXPECT_TRUE(client.diagnostics("file:///small" + std::to_string(d) + ".ag", 1));
}

// Every position-based feature at every position of every example, and of
// some odd documents, must answer (never crash, never an internal error).
TEST(LspRobustness, EveryFeatureAtEveryPosition) {
  // CRLF, a tab, UTF-8 of 2 and 4 bytes, a NUL byte, unclosed brackets, a trailing `.`.
  static const char kOdd[] = "@kernel(\r\ndef k(x: Tensor[f32, (N,)]):\r\n\tx = \"\xc3\xa9\xf0\x9f\x98\x80\" + \0 ( [ ,\n    y.";
  std::vector<std::pair<std::string, std::string>> documents = {
      {"file:///softmax.ag", testing::readSourceFile("examples/softmax.ag")},
      {"file:///gemm.ag", testing::readSourceFile("examples/gemm.ag")},
      {"file:///typo.ag", testing::readSourceFile("examples/broken/typo.ag")},
      {"file:///odd.ag", std::string(kOdd, sizeof kOdd - 1)},
      {"file:///empty.ag", ""},
  };
  testing::TestClient client(std::chrono::milliseconds(1));
  client.initialize();
  const char* methods[] = {"textDocument/hover", "textDocument/definition", "textDocument/references",
                           "textDocument/prepareRename", "textDocument/completion", "textDocument/signatureHelp",
                           "textDocument/documentHighlight"};
  for (const auto& [uri, text] : documents) {
    client.open(uri, text);
    SourceFile file(uri, text);
    for (uint32_t line = 0; line <= file.lineCount(); ++line) {
      uint32_t width = line < file.lineCount() ? static_cast<uint32_t>(file.lineText(line + 1).size()) + 2 : 2;
      for (uint32_t character = 0; character <= width; ++character)
        for (const char* method : methods) {
          json reply = client.request(method, {{"textDocument", {{"uri", uri}}},
                                               {"position", {{"line", line}, {"character", character}}},
                                               {"context", {{"includeDeclaration", true}}}});
          ASSERT_TRUE(reply.contains("result")) << uri << " " << method << " " << line << ":" << character << " "
                                                << reply.dump();
        }
    }
    for (const char* method : {"textDocument/documentSymbol", "textDocument/semanticTokens/full"})
      ASSERT_TRUE(client.request(method, {{"textDocument", {{"uri", uri}}}}).contains("result")) << uri << method;
    json hints = client.request("textDocument/inlayHint", {{"textDocument", {{"uri", uri}}},
                                                           {"range", {{"start", {{"line", 0}, {"character", 0}}},
                                                                      {"end", {{"line", 999}, {"character", 0}}}}}});
    ASSERT_TRUE(hints.contains("result")) << uri;
  }
}

}  // namespace
}  // namespace argus::lsp
