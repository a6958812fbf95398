// The server in process: lifecycle, documents, diagnostics and features.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "lsp_test_client.h"
#include "support/render.h"

namespace argus::lsp {
namespace {

using testing::readSourceFile;
using testing::TestClient;

// tests/lsp/softmax.ag is a frozen copy of the softmax example: the expectations
// below name its lines and columns, so the example may change without them.
const char* kUri = "file:///work/softmax.ag";

json at(int line, int character) { return json{{"line", line}, {"character", character}}; }
json doc(const std::string& uri = kUri) { return json{{"uri", uri}}; }

TEST(LspLifecycle, RequestsBeforeInitializeAreRejected) {
  TestClient client;
  json reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(0, 0)}});
  EXPECT_EQ(reply["error"]["code"], error_code::kServerNotInitialized);
  reply = client.request("shutdown", nullptr);
  EXPECT_EQ(reply["error"]["code"], error_code::kServerNotInitialized);
}

TEST(LspLifecycle, ShutdownThenExitIsZero) {
  TestClient client;
  client.initialize();
  EXPECT_TRUE(client.request("shutdown", nullptr).contains("result"));
  json after = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(0, 0)}});
  EXPECT_EQ(after["error"]["code"], error_code::kInvalidRequest);
  client.notify("exit", nullptr);
  EXPECT_TRUE(client.server().exitRequested());
  EXPECT_EQ(client.server().exitCode(), 0);
}

TEST(LspLifecycle, ExitWithoutShutdownIsOne) {
  TestClient client;
  client.initialize();
  client.notify("exit", nullptr);
  EXPECT_TRUE(client.server().exitRequested());
  EXPECT_EQ(client.server().exitCode(), 1);
}

TEST(LspLifecycle, UnknownRequestAndNotification) {
  TestClient client;
  client.initialize();
  EXPECT_EQ(client.request("textDocument/frobnicate", json::object())["error"]["code"], error_code::kMethodNotFound);
  client.notify("$/unknownThing", json::object());
  client.notify("custom/notification", json::object());
  EXPECT_TRUE(client.drain(std::chrono::milliseconds(50)).empty());
}

TEST(LspLifecycle, SecondInitializeIsAnError) {
  TestClient client;
  client.initialize();
  EXPECT_EQ(client.request("initialize", json::object())["error"]["code"], error_code::kInvalidRequest);
}

TEST(LspLifecycle, MalformedJsonGetsParseError) {
  TestClient client;
  client.sendRaw("{not json");
  auto reply = client.waitFor([](const json& m) { return m.contains("error"); }, std::chrono::seconds(5));
  ASSERT_TRUE(reply);
  EXPECT_EQ((*reply)["error"]["code"], error_code::kParseError);
  EXPECT_TRUE((*reply)["id"].is_null());
  client.sendRaw("[1, 2]");
  reply = client.waitFor([](const json& m) { return m.contains("error"); }, std::chrono::seconds(5));
  ASSERT_TRUE(reply);
  EXPECT_EQ((*reply)["error"]["code"], error_code::kInvalidRequest);
}

TEST(LspLifecycle, InitializeAdvertisesIncrementalSync) {
  TestClient client;
  json reply = client.request("initialize", json::object());
  EXPECT_EQ(reply["result"]["capabilities"]["textDocumentSync"]["change"], 2);
  EXPECT_EQ(reply["result"]["serverInfo"]["name"], "argus-lsp");
}

TEST(LspDiagnostics, PublishedJsonMatchesTheCompilerRenderer) {
  TestClient client;
  client.initialize();
  std::string text = readSourceFile("examples/broken/typo.ag");
  client.open(kUri, text);
  auto published = client.diagnostics(kUri, 1);
  ASSERT_TRUE(published);
  Compilation compilation(SourceFile(kUri, text), CompileOptions{});
  compilation.ir();
  json expected = json::array();
  for (const Diagnostic& d : compilation.diagnostics()) expected.push_back(diagnosticToJson(d, compilation.source()));
  EXPECT_EQ((*published)["params"]["diagnostics"], expected);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ((*published)["params"]["diagnostics"][0]["codeDescription"]["href"],
            docsUrlFor((*published)["params"]["diagnostics"][0]["code"].get<std::string>().c_str()));
}

TEST(LspDiagnostics, CheckerFindingsArePublishedWithTheirTrace) {
  TestClient client;
  client.initialize();
  std::string text = readSourceFile("examples/broken/missing_barrier.ag");
  client.open(kUri, text);
  // The front end's publish comes first (nothing to report), then the checker's.
  auto published = client.diagnosticsWhere(kUri, 1, [](const json& d) { return !d.empty(); });
  ASSERT_TRUE(published);
  Compilation compilation(SourceFile(kUri, text), CompileOptions{});
  compilation.ptx();  // what argusc reports: the checker's findings stop code generation
  json expected = json::array();
  for (const Diagnostic& d : compilation.diagnostics()) expected.push_back(diagnosticToJson(d, compilation.source()));
  EXPECT_EQ((*published)["params"]["diagnostics"], expected);
  ASSERT_FALSE(expected.empty());
  const json& race = (*published)["params"]["diagnostics"][0];
  EXPECT_EQ(race["code"], "AG2002");
  EXPECT_FALSE(race["relatedInformation"].empty()) << "the other access rides along as related information";
  EXPECT_FALSE(race["data"]["counterexample"].is_null());
}

TEST(LspDiagnostics, EditsAreDebouncedAndStaleVersionsDropped) {
  TestClient client(std::chrono::milliseconds(150));
  client.initialize();
  client.open(kUri, readSourceFile("tests/lsp/softmax.ag"));
  // Ten quick edits inside the debounce window: only the last is published.
  // (Real edits: each adds a token. Edits inside comments are re-published at
  // once by design, see LspCore.CommentEditRepublishesAtOnceWithoutACheck.)
  for (int v = 2; v <= 11; ++v)
    client.notify("textDocument/didChange",
                  {{"textDocument", {{"uri", kUri}, {"version", v}}},
                   {"contentChanges", json::array({{{"range", {{"start", at(0, 0)}, {"end", at(0, 0)}}}, {"text", "x"}}})}});
  auto published = client.diagnostics(kUri, 11);
  ASSERT_TRUE(published);
  // No intermediate version is published (version 1 could be, on a machine
  // so loaded that the edits came more than the debounce delay after opening).
  std::vector<json> rest = client.drain(std::chrono::milliseconds(400));
  for (const json& m : rest) {
    if (m.value("method", "") == "textDocument/publishDiagnostics") {
      EXPECT_EQ(m["params"]["version"], 1) << m.dump();
    }
  }
}

TEST(LspDiagnostics, CloseClearsDiagnostics) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("examples/broken/typo.ag"));
  ASSERT_TRUE(client.diagnostics(kUri, 1));
  client.notify("textDocument/didClose", {{"textDocument", doc()}});
  auto cleared = client.diagnostics(kUri);
  ASSERT_TRUE(cleared);
  EXPECT_TRUE((*cleared)["params"]["diagnostics"].empty());
  json reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(0, 0)}});
  EXPECT_EQ(reply["error"]["code"], error_code::kInvalidParams);
}

TEST(LspDiagnostics, IncrementalEditFixesTheTypo) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("examples/broken/typo.ag"));
  ASSERT_TRUE(client.diagnostics(kUri, 1));
  // Line 6 (0-based) is `    b = laod(...)`; make it `load`, and 1000 -> 1024 on line 3.
  client.notify("textDocument/didChange",
                {{"textDocument", {{"uri", kUri}, {"version", 2}}},
                 {"contentChanges", json::array({{{"range", {{"start", at(6, 8)}, {"end", at(6, 12)}}}, {"text", "load"}},
                                                 {{"range", {{"start", at(3, 24)}, {"end", at(3, 28)}}}, {"text", "1024"}}})}});
  auto published = client.diagnostics(kUri, 2);
  ASSERT_TRUE(published);
  EXPECT_TRUE((*published)["params"]["diagnostics"].empty()) << (*published).dump(2);
}

TEST(LspFeatures, CodeActionFromFixIt) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("examples/broken/typo.ag"));
  json reply = client.request("textDocument/codeAction",
                              {{"textDocument", doc()},
                               {"range", {{"start", at(6, 9)}, {"end", at(6, 9)}}},
                               {"context", {{"diagnostics", json::array()}}}});
  ASSERT_TRUE(reply["result"].is_array()) << reply.dump();
  ASSERT_EQ(reply["result"].size(), 1u) << reply.dump(2);
  const json& action = reply["result"][0];
  EXPECT_EQ(action["kind"], "quickfix");
  EXPECT_EQ(action["isPreferred"], true);
  EXPECT_EQ(action["edit"]["changes"][kUri][0]["newText"], "load");
  EXPECT_EQ(action["diagnostics"][0]["code"], "AG3001");
}

TEST(LspFeatures, HoverShowsTypeLayoutAndOwnership) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("tests/lsp/softmax.ag"));
  // `m = max(t, axis=1)` on line 9.
  json reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(9, 4)}});
  std::string value = reply["result"]["contents"]["value"];
  EXPECT_NE(value.find("**m**: local"), std::string::npos) << value;
  EXPECT_NE(value.find("| shape | (4, 1) |"), std::string::npos) << value;
  EXPECT_NE(value.find("reduced=[1]"), std::string::npos) << value;
  EXPECT_NE(value.find("| **1** | t32 v0 |"), std::string::npos) << value;
  EXPECT_NE(value.find("replicated in 32 threads"), std::string::npos) << value;
  // `e = exp(t - m)`: a 4x1024 tile over 128 threads, 32 values each.
  reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(10, 4)}});
  value = reply["result"]["contents"]["value"];
  EXPECT_NE(value.find("| per thread | 32 values |"), std::string::npos) << value;
  EXPECT_NE(value.find("| **1** | t32 v0 | t33 v0 |"), std::string::npos) << value;
  EXPECT_NE(value.find("top-left 4x8 of 4x1024"), std::string::npos) << value;
  // The kernel parameter `x`: a global tensor.
  reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(4, 12)}});
  value = reply["result"]["contents"]["value"];
  EXPECT_NE(value.find("| memory | global |"), std::string::npos) << value;
  // A builtin shows its signature.
  reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(11, 9)}});
  value = reply["result"]["contents"]["value"];
  EXPECT_NE(value.find("sum(x, axis=None)"), std::string::npos) << value;
  // The method `.tile` on line 8: its documentation, then the type there.
  reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(8, 16)}});
  value = reply["result"]["contents"]["value"];
  EXPECT_NE(value.find("**tile**: method"), std::string::npos) << value;
  EXPECT_NE(value.find("tile(shape) -> tiling"), std::string::npos) << value;
  // Whitespace far away: nothing.
  reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(0, 0)}});
  EXPECT_TRUE(reply["result"].is_null()) << reply.dump();
}

TEST(LspFeatures, DefinitionReferencesRename) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("tests/lsp/softmax.ag"));
  // `t` used on line 10 in `exp(t - m)`, defined on line 8.
  json def = client.request("textDocument/definition", {{"textDocument", doc()}, {"position", at(10, 12)}});
  EXPECT_EQ(def["result"]["range"]["start"], at(8, 4)) << def.dump();
  json refs = client.request("textDocument/references", {{"textDocument", doc()}, {"position", at(8, 4)},
                                                         {"context", {{"includeDeclaration", true}}}});
  EXPECT_EQ(refs["result"].size(), 3u) << refs.dump();
  json highlights = client.request("textDocument/documentHighlight", {{"textDocument", doc()}, {"position", at(10, 12)}});
  ASSERT_EQ(highlights["result"].size(), 3u) << highlights.dump();
  EXPECT_EQ(highlights["result"][0]["kind"], 3);
  EXPECT_EQ(highlights["result"][1]["kind"], 2);
  json prepare = client.request("textDocument/prepareRename", {{"textDocument", doc()}, {"position", at(10, 12)}});
  EXPECT_EQ(prepare["result"]["placeholder"], "t");
  json edit = client.request("textDocument/rename", {{"textDocument", doc()}, {"position", at(10, 12)}, {"newName", "tile"}});
  ASSERT_TRUE(edit.contains("result")) << edit.dump();
  EXPECT_EQ(edit["result"]["changes"][kUri].size(), 3u);
  // Builtins and reserved names cannot be renamed.
  json builtin = client.request("textDocument/prepareRename", {{"textDocument", doc()}, {"position", at(11, 9)}});
  EXPECT_TRUE(builtin["result"].is_null());
  json reject = client.request("textDocument/rename", {{"textDocument", doc()}, {"position", at(11, 9)}, {"newName", "x"}});
  EXPECT_EQ(reject["error"]["code"], error_code::kInvalidParams);
  json keyword = client.request("textDocument/rename", {{"textDocument", doc()}, {"position", at(8, 4)}, {"newName", "for"}});
  EXPECT_EQ(keyword["error"]["code"], error_code::kInvalidParams);
  json bad = client.request("textDocument/rename", {{"textDocument", doc()}, {"position", at(8, 4)}, {"newName", "1x"}});
  EXPECT_EQ(bad["error"]["code"], error_code::kInvalidParams);
}

TEST(LspFeatures, DocumentSymbolsCompletionSignature) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("tests/lsp/softmax.ag"));
  json symbols = client.request("textDocument/documentSymbol", {{"textDocument", doc()}});
  ASSERT_EQ(symbols["result"].size(), 1u);
  EXPECT_EQ(symbols["result"][0]["name"], "softmax");
  EXPECT_EQ(symbols["result"][0]["detail"], "@kernel");
  EXPECT_EQ(symbols["result"][0]["children"].size(), 4u);

  json completion = client.request("textDocument/completion", {{"textDocument", doc()}, {"position", at(12, 4)}});
  std::set<std::string> labels;
  for (const json& item : completion["result"]["items"]) labels.insert(item["label"]);
  for (const char* expected : {"t", "m", "e", "s", "x", "ROWS", "load", "for", "f32", "softmax"})
    EXPECT_TRUE(labels.count(expected)) << expected;
  // Locals sort before builtins, builtins before keywords.
  auto sortTextOf = [&](const std::string& label) {
    for (const json& item : completion["result"]["items"])
      if (item["label"] == label) return item["sortText"].get<std::string>();
    return std::string();
  };
  EXPECT_LT(sortTextOf("t"), sortTextOf("load"));
  EXPECT_LT(sortTextOf("load"), sortTextOf("for"));
  // After `.`: the methods.
  client.notify("textDocument/didChange",
                {{"textDocument", {{"uri", kUri}, {"version", 2}}},
                 {"contentChanges", json::array({{{"range", {{"start", at(13, 0)}, {"end", at(13, 0)}}}, {"text", "    x."}}})}});
  completion = client.request("textDocument/completion", {{"textDocument", doc()}, {"position", at(13, 6)}});
  labels.clear();
  for (const json& item : completion["result"]["items"]) labels.insert(item["label"]);
  EXPECT_EQ(labels, (std::set<std::string>{"tile", "shape", "dtype"}));
  // On a register tile, no `.tile`.
  client.notify("textDocument/didChange",
                {{"textDocument", {{"uri", kUri}, {"version", 3}}},
                 {"contentChanges", json::array({{{"range", {{"start", at(13, 4)}, {"end", at(13, 6)}}}, {"text", "e."}}})}});
  completion = client.request("textDocument/completion", {{"textDocument", doc()}, {"position", at(13, 6)}});
  labels.clear();
  for (const json& item : completion["result"]["items"]) labels.insert(item["label"]);
  EXPECT_EQ(labels, (std::set<std::string>{"shape", "dtype"}));

  json help = client.request("textDocument/signatureHelp", {{"textDocument", doc()}, {"position", at(9, 15)}});
  EXPECT_EQ(help["result"]["signatures"][0]["label"], "max(x, axis=None) -> tile | scalar") << help.dump();
  EXPECT_EQ(help["result"]["activeParameter"], 1);
}

TEST(LspFeatures, SignatureHelpForDeviceFunctions) {
  TestClient client;
  client.initialize();
  std::string text =
      "@device\n"
      "def scale(a, factor: f32):\n"
      "    return a * factor\n"
      "\n"
      "@kernel(grid=(1,), warps=1)\n"
      "def k(x: Tensor[f32, (32,)]):\n"
      "    t = load(x.tile((32,))[0])\n"
      "    x.tile((32,))[0] = scale(t, 2.0)\n";
  client.open(kUri, text);
  json help = client.request("textDocument/signatureHelp", {{"textDocument", doc()}, {"position", at(7, 32)}});
  EXPECT_EQ(help["result"]["signatures"][0]["label"], "scale(a, factor: f32)") << help.dump();
  EXPECT_EQ(help["result"]["activeParameter"], 1);
  json symbols = client.request("textDocument/documentSymbol", {{"textDocument", doc()}});
  ASSERT_EQ(symbols["result"].size(), 2u);
  EXPECT_EQ(symbols["result"][0]["detail"], "@device");
  // Inside the device function the number of warps is not known: the picture says so.
  json hover = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(2, 11)}});
  std::string value = hover["result"]["contents"]["value"];
  EXPECT_NE(value.find("(4 warps, assumed)"), std::string::npos) << value;
  // Go to the device function from its call.
  json def = client.request("textDocument/definition", {{"textDocument", doc()}, {"position", at(7, 25)}});
  EXPECT_EQ(def["result"]["range"]["start"], at(1, 4)) << def.dump();
}

TEST(LspFeatures, InlayHintsAndSemanticTokens) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("tests/lsp/softmax.ag"));
  json hints = client.request("textDocument/inlayHint", {{"textDocument", doc()}, {"range", {{"start", at(0, 0)}, {"end", at(20, 0)}}}});
  // One type hint per local, and the layout of each register tile at the end of its statement.
  std::vector<std::string> types, layouts;
  for (const json& h : hints["result"]) {
    std::string label = h["label"];
    if (label.rfind(": ", 0) == 0) types.push_back(label);
    if (label.rfind("layout ", 0) == 0) layouts.push_back(label);
  }
  ASSERT_EQ(types.size(), 5u) << hints.dump();
  EXPECT_EQ(types[1], ": f32 (4, 1024)");
  EXPECT_FALSE(layouts.empty()) << hints.dump();
  json tokens = client.request("textDocument/semanticTokens/full", {{"textDocument", doc()}});
  ASSERT_TRUE(tokens["result"]["data"].is_array());
  EXPECT_EQ(tokens["result"]["data"].size() % 5, 0u);
  EXPECT_GT(tokens["result"]["data"].size(), 100u);
}

TEST(LspFeatures, SemanticTokensDelta) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("tests/lsp/softmax.ag"));
  json full = client.request("textDocument/semanticTokens/full", {{"textDocument", doc()}});
  std::vector<uint32_t> before = full["result"]["data"].get<std::vector<uint32_t>>();
  std::string resultId = full["result"]["resultId"];
  // Rename `s` to `total` on its last line: only that token's length changes.
  client.notify("textDocument/didChange",
                {{"textDocument", {{"uri", kUri}, {"version", 2}}},
                 {"contentChanges", json::array({{{"range", {{"start", at(12, 35)}, {"end", at(12, 36)}}}, {"text", "q"}}})}});
  json delta = client.request("textDocument/semanticTokens/full/delta", {{"textDocument", doc()}, {"previousResultId", resultId}});
  ASSERT_TRUE(delta["result"].contains("edits")) << delta.dump();
  json again = client.request("textDocument/semanticTokens/full", {{"textDocument", doc()}});
  std::vector<uint32_t> after = again["result"]["data"].get<std::vector<uint32_t>>();
  // Applying the edits to the old tokens gives the new ones.
  for (const json& edit : delta["result"]["edits"]) {
    size_t start = edit["start"], count = edit["deleteCount"];
    std::vector<uint32_t> data = edit["data"].get<std::vector<uint32_t>>();
    before.erase(before.begin() + static_cast<long>(start), before.begin() + static_cast<long>(start + count));
    before.insert(before.begin() + static_cast<long>(start), data.begin(), data.end());
  }
  EXPECT_EQ(before, after);
  // An unknown previous id gets the full tokens.
  json unknown = client.request("textDocument/semanticTokens/full/delta", {{"textDocument", doc()}, {"previousResultId", "nope"}});
  EXPECT_TRUE(unknown["result"].contains("data"));
}

TEST(LspFeatures, CancelledRequestGetsRequestCancelled) {
  TestClient client(std::chrono::milliseconds(20));
  client.initialize();
  // Make the worker busy with a large document, then queue and cancel a request behind it.
  std::string big;
  std::string kernel = readSourceFile("tests/lsp/softmax.ag");
  for (int i = 0; i < 200; ++i) {
    std::string copy = kernel;
    copy.replace(copy.find("def softmax"), 11, "def softmax" + std::to_string(i));
    big += copy + "\n";
  }
  client.open("file:///big.ag", big);
  client.send(json{{"jsonrpc", "2.0"}, {"id", "cancel-me"}, {"method", "textDocument/hover"},
                   {"params", {{"textDocument", doc("file:///big.ag")}, {"position", at(9, 4)}}}});
  client.notify("$/cancelRequest", {{"id", "cancel-me"}});
  auto reply = client.waitFor([](const json& m) { return m.value("id", json()) == "cancel-me"; }, std::chrono::seconds(60));
  ASSERT_TRUE(reply);
  EXPECT_EQ((*reply)["error"]["code"], error_code::kRequestCancelled);
}

TEST(LspFeatures, PositionsOutOfRangeAreClamped) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("tests/lsp/softmax.ag"));
  json reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", at(100000, 100000)}});
  EXPECT_TRUE(reply.contains("result")) << reply.dump();
  reply = client.request("textDocument/hover", {{"textDocument", doc()}, {"position", "nowhere"}});
  EXPECT_EQ(reply["error"]["code"], error_code::kInvalidParams);
}

TEST(LspFeatures, ConfigurationDefinesReachTheCompiler) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("tests/lsp/softmax.ag"));
  ASSERT_TRUE(client.diagnostics(kUri, 1));
  client.notify("workspace/didChangeConfiguration", {{"settings", {{"argus", {{"defines", {{"BN", "1000"}}}}}}}});
  auto published = client.diagnostics(kUri, 1);
  ASSERT_TRUE(published);
  EXPECT_FALSE((*published)["params"]["diagnostics"].empty()) << "BN=1000 is not a power of two";
}

}  // namespace
}  // namespace argus::lsp
