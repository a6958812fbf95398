// The server core: edits that touch only comments reuse the last check, real
// edits publish the front end's diagnostics first and the checker's when ready,
// checks are cancellable and reuse unchanged kernels, progress is reported,
// diagnostics are for the configured target, and hostile messages (deep JSON,
// invalid UTF-8) neither crash the server nor make its text diverge.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "driver/compilation.h"
#include "lsp/checking.h"
#include "lsp/document.h"
#include "lsp/remap.h"
#include "lsp/transport.h"
#include "lsp_test_client.h"
#include "support/render.h"

namespace argus::lsp {
namespace {

using testing::readSourceFile;
using testing::TestClient;
using Clock = std::chrono::steady_clock;

const char* kUri = "file:///work/core.ag";

json at(int line, int character) { return json{{"line", line}, {"character", character}}; }

json insertAt(int line, int character, const std::string& text) {
  return json::array({{{"range", {{"start", at(line, character)}, {"end", at(line, character)}}}, {"text", text}}});
}

void change(TestClient& client, int version, json changes) {
  client.notify("textDocument/didChange",
                {{"textDocument", {{"uri", kUri}, {"version", version}}}, {"contentChanges", std::move(changes)}});
}

// What argusc reports for `text` (it compiles to PTX: the checker, then code
// generation's target checks), as the LSP renders it, in a stable order.
json argusDiagnostics(const std::string& text, const std::optional<std::string>& arch = std::nullopt,
                      std::vector<std::pair<std::string, std::string>> defines = {}) {
  CompileOptions options;
  options.arch = arch ? *arch : (isSupportedArch(declaredArch(text)) ? declaredArch(text) : "sm_90");
  options.defines = std::move(defines);
  Compilation compilation(SourceFile(kUri, text), options);
  compilation.ptx();
  std::vector<std::string> dumped;
  for (const Diagnostic& d : compilation.diagnostics()) dumped.push_back(diagnosticToJson(d, compilation.source()).dump());
  std::sort(dumped.begin(), dumped.end());
  json out = json::array();
  for (const std::string& d : dumped) out.push_back(json::parse(d));
  return out;
}

json sorted(const json& diagnostics) {
  std::vector<std::string> dumped;
  for (const json& d : diagnostics) dumped.push_back(d.dump());
  std::sort(dumped.begin(), dumped.end());
  json out = json::array();
  for (const std::string& d : dumped) out.push_back(json::parse(d));
  return out;
}

bool hasCode(const json& diagnostics, const std::string& code) {
  for (const json& d : diagnostics)
    if (d.value("code", "") == code) return true;
  return false;
}

// Plays an editor that shows progress until the check of `version` ends;
// returns every publishDiagnostics of that version, in order (at least
// `expected`: the front end's and the checker's unless some were taken already).
std::vector<json> publishesUntilChecked(TestClient& client, int version, size_t expected = 2) {
  std::vector<json> publishes;
  for (;;) {
    std::optional<json> m = client.waitFor([](const json&) { return true; }, std::chrono::seconds(120));
    if (!m) {
      ADD_FAILURE() << "no end of the check of version " << version;
      return publishes;
    }
    std::string method = m->value("method", "");
    if (method == "window/workDoneProgress/create") {
      client.send(json{{"jsonrpc", "2.0"}, {"id", (*m)["id"]}, {"result", nullptr}});
    } else if (method == "textDocument/publishDiagnostics" && (*m)["params"].value("version", -1) == version) {
      publishes.push_back((*m)["params"]["diagnostics"]);
    } else if (method == "$/progress" && (*m)["params"]["value"]["kind"] == "end" && publishes.size() >= expected) {
      return publishes;
    }
  }
}

// --- the library side -------------------------------------------------------

TEST(LspCoreDriver, CancelledCompilationSkipsTheChecker) {
  std::string text = readSourceFile("examples/broken/missing_barrier.ag");
  CompileOptions options;
  int polls = 0;
  options.cancelled = [&polls] { return ++polls > 0; };
  Compilation compilation(SourceFile("race.ag", text), options);
  compilation.check();
  EXPECT_TRUE(compilation.cancelled());
  EXPECT_GT(polls, 0);
  for (const Diagnostic& d : compilation.diagnostics()) EXPECT_NE(std::string(d.code()), "AG2002");
  // Without the flag the race is found (the test above is not vacuous).
  Compilation uncancelled(SourceFile("race.ag", text), CompileOptions{});
  uncancelled.check();
  EXPECT_FALSE(uncancelled.cancelled());
  bool race = false;
  for (const Diagnostic& d : uncancelled.diagnostics()) race = race || std::string(d.code()) == "AG2002";
  EXPECT_TRUE(race);
}

TEST(LspCoreCheck, CancelledCheckStopsAtTheNextBoundary) {
  auto snapshot = analyzeDocument(kUri, 1, 1, readSourceFile("examples/gemm_pipelined.ag"), ConfiguredOptions{});
  ASSERT_TRUE(needsCheck(*snapshot));
  CheckCache cache;
  // The checker's two lanes poll from two threads, each at its own boundaries:
  // once cancelled, each stops at its next one.
  std::atomic<int> polls{0};
  auto started = Clock::now();
  auto result = checkSnapshot(snapshot, cache, [&polls] { return ++polls > 3; });
  EXPECT_FALSE(result) << "a cancelled check has no result";
  EXPECT_LE(polls.load(), 7);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(30));
  waitForBackgroundCodegen();  // its code generation, before LLVM's statics go at exit
  // The same check uncancelled has one.
  CheckCache fresh;
  EXPECT_TRUE(checkSnapshot(snapshot, fresh, [] { return false; }));
}

// A cancelled check does not wait for the code generation it started beside the
// checker: that goes on on its own thread, holding the snapshot it reads, so the
// snapshot and the cache may go away at once.
TEST(LspCoreCheck, ACancelledCheckLeavesCodeGenerationToFinishOnItsOwn) {
  const std::string text = readSourceFile("examples/attention_wgmma_d64.ag");
  {
    auto snapshot = analyzeDocument(kUri, 1, 1, text, ConfiguredOptions{});
    ASSERT_TRUE(needsCheck(*snapshot));
    CheckCache cache;
    EXPECT_FALSE(checkSnapshot(snapshot, cache, [] { return true; }));
  }  // the snapshot and the cache are gone; the code generation may still run
  waitForBackgroundCodegen();
  auto again = analyzeDocument(kUri, 2, 2, text, ConfiguredOptions{});
  CheckCache cache;
  CheckStats stats;
  auto all = checkSnapshot(again, cache, [] { return false; }, {}, &stats);
  ASSERT_TRUE(all);
  EXPECT_TRUE(stats.codegenRan);
  EXPECT_FALSE(cache.codegenPtx.empty());
}

std::string twoKernels(const std::string& block) {
  std::string race = readSourceFile("examples/broken/missing_barrier.ag");
  std::string vadd = readSourceFile("examples/vadd.ag");
  size_t at = vadd.find("1024");
  vadd.replace(at, 4, block);
  return race + "\n\n" + vadd;
}

json rendered(const std::vector<Diagnostic>& diags, const SourceFile& file) {
  std::vector<std::string> dumped;
  for (const Diagnostic& d : diags) dumped.push_back(diagnosticToJson(d, file).dump());
  std::sort(dumped.begin(), dumped.end());
  return dumped;
}

TEST(LspCoreCheck, AnUnchangedKernelKeepsItsFindings) {
  CheckCache cache;
  CheckStats first;
  auto before = analyzeDocument(kUri, 1, 1, twoKernels("1024"), ConfiguredOptions{});
  ASSERT_TRUE(checkSnapshot(before, cache, {}, {}, &first));
  EXPECT_EQ(first.kernelsChecked, 2u);
  // Edit the second kernel only: the first (with its race) is reused.
  auto after = analyzeDocument(kUri, 2, 2, twoKernels("512"), ConfiguredOptions{});
  CheckStats second;
  auto reused = checkSnapshot(after, cache, {}, {}, &second);
  ASSERT_TRUE(reused);
  EXPECT_EQ(second.kernelsReused, 1u);
  EXPECT_EQ(second.kernelsChecked, 1u);
  CheckCache empty;
  auto fresh = checkSnapshot(after, empty, {});
  ASSERT_TRUE(fresh);
  EXPECT_EQ(rendered(*reused, after->file()), rendered(*fresh, after->file()));
  EXPECT_NE(rendered(*reused, after->file()).dump().find("AG2002"), std::string::npos) << "the race is kept";
}

// Generated cases: random edits inside the comments of every example (inserts,
// deletions, replacements, several per change); wherever staysInsideComment
// says yes, the shifted tokens must be exactly what the lexer gives.
TEST(LspCoreRemap, ShiftedTokensAreTheLexersForCommentEdits) {
  std::mt19937 rng(7);
  int checked = 0;
  std::vector<std::pair<std::string, std::string>> sources;
  for (const char* name : {"examples/gemm_tc.ag", "examples/attention.ag", "examples/softmax.ag",
                           "examples/moe_gemm.ag", "tests/lsp/calls.ag"})
    sources.emplace_back(name, readSourceFile(name));
  // Strings that hide a '#': triple-quoted ones over lines, escaped quotes.
  sources.emplace_back("strings", "x = \"\"\"a # b\n# c '\n\"\"\"  # d\ny = '#\\' # e'  # f\nz = '''\n# g\n'''\n");
  for (const auto& [name, source] : sources) {
    std::string text = source;
    DiagnosticSink sink;
    std::vector<TokenInfo> tokens = tokenize(SourceFile("a.ag", text), sink);
    for (int round = 0; round < 60; ++round) {
      std::vector<TokenShift> shifts;
      std::string edited = text;
      for (int k = 0; k < 3; ++k) {
        uint32_t begin = std::uniform_int_distribution<uint32_t>(0, static_cast<uint32_t>(edited.size()))(rng);
        uint32_t end = std::min<uint32_t>(static_cast<uint32_t>(edited.size()),
                                          begin + std::uniform_int_distribution<uint32_t>(0, 3)(rng));
        std::string inserted = std::string("ab #'\"x").substr(0, std::uniform_int_distribution<size_t>(0, 7)(rng));
        if (!staysInsideComment(edited, begin, end, inserted)) continue;
        edited.replace(begin, end - begin, inserted);
        shifts.push_back(TokenShift{end, static_cast<int64_t>(inserted.size()) - static_cast<int64_t>(end - begin)});
      }
      if (shifts.empty()) continue;
      DiagnosticSink again;
      std::vector<TokenInfo> lexed = tokenize(SourceFile("a.ag", edited), again);
      std::vector<TokenInfo> shifted = shiftedTokens(tokens, shifts);
      ASSERT_EQ(shifted.size(), lexed.size()) << name << "\n" << edited;
      for (size_t i = 0; i < lexed.size(); ++i) {
        ASSERT_EQ(shifted[i].kind, lexed[i].kind) << name << " token " << i;
        ASSERT_EQ(shifted[i].text, lexed[i].text) << name << " token " << i;
        ASSERT_EQ(shifted[i].range.begin, lexed[i].range.begin) << name << " token " << i << "\n" << edited;
        ASSERT_EQ(shifted[i].range.end, lexed[i].range.end) << name << " token " << i;
      }
      ++checked;
      text = edited;  // the next round edits the edited text
      tokens = std::move(lexed);
    }
  }
  EXPECT_GT(checked, 50) << "too few random edits landed inside comments to mean anything";
}

// Through the server: a run of comment-only edits (the screen shifts tokens
// instead of lexing) publishes, for every version, what argusc says for that text.
TEST(LspCore, CommentOnlyEditRunsPublishArguscsDiagnostics) {
  TestClient client;
  client.initializeWithProgress();
  std::string text = readSourceFile("examples/broken/missing_barrier.ag");
  client.open(kUri, text);
  publishesUntilChecked(client, 1);
  client.drain(std::chrono::milliseconds(200));
  std::mt19937 rng(11);
  int version = 1;
  for (int round = 0; round < 12; ++round) {
    // A random spot inside the first line's comment (it starts with '#').
    size_t lineEnd = text.find('\n');
    uint32_t at = std::uniform_int_distribution<uint32_t>(1, static_cast<uint32_t>(lineEnd))(rng);
    ASSERT_TRUE(staysInsideComment(text, at, at, "x"));
    text.insert(at, "x");
    change(client, ++version, insertAt(0, at, "x"));
  }
  auto published = client.diagnostics(kUri, version, std::chrono::seconds(30));
  ASSERT_TRUE(published);
  EXPECT_EQ(sorted((*published)["params"]["diagnostics"]), argusDiagnostics(text));
  // A real edit after the run still re-checks: the chain of shifts does not outlive it.
  text.insert(text.find("@kernel"), "q = 1\n");
  change(client, ++version, insertAt(static_cast<int>(std::count(text.begin(), text.begin() + text.find("q = 1"), '\n')), 0, "q = 1\n"));
  json expected = argusDiagnostics(text);
  auto after = client.diagnosticsWhere(kUri, version, [&](const json& d) { return sorted(d) == expected; },
                                       std::chrono::seconds(60));
  EXPECT_TRUE(after) << "never published argusc's diagnostics for the text after the real edit";
}

TEST(LspCoreRemap, CommentEditsMoveRangesWithTheirTokens) {
  SourceFile before("a.ag", "x = 1  # one\ny = x\n");
  SourceFile after("a.ag", "# new line\nx = 1  # one, longer\ny = x\n");
  DiagnosticSink sink;
  auto oldTokens = tokenize(before, sink), newTokens = tokenize(after, sink);
  ASSERT_TRUE(sameTokens(oldTokens, newTokens));
  TokenAlignment alignment(before, oldTokens, after, newTokens);
  uint32_t yAt = static_cast<uint32_t>(before.text().find("y = x"));
  EXPECT_EQ(alignment.map(yAt), static_cast<uint32_t>(after.text().find("y = x")));
  Diagnostic d;
  d.range = {yAt, yAt + 1};
  EXPECT_FALSE(alignment.remap(d, /*exact=*/true)) << "the line moved: not exact";
  EXPECT_TRUE(alignment.remap(d, /*exact=*/false));
  EXPECT_EQ(after.text().substr(d.range.begin, 1), "y");
}

// --- the server -------------------------------------------------------------

TEST(LspCore, CommentEditRepublishesAtOnceWithoutACheck) {
  TestClient client;
  client.initializeWithProgress();
  std::string text = readSourceFile("examples/broken/missing_barrier.ag");
  client.open(kUri, text);
  std::vector<json> opened = publishesUntilChecked(client, 1);
  ASSERT_EQ(opened.size(), 2u) << "the front end's diagnostics, then the checker's";
  ASSERT_TRUE(hasCode(opened.back(), "AG2002"));
  client.drain(std::chrono::milliseconds(200));
  // Type inside the first comment (no token changes, no line moves).
  change(client, 2, insertAt(0, 6, "typed "));
  auto published = client.diagnostics(kUri, 2, std::chrono::seconds(10));
  ASSERT_TRUE(published);
  std::string edited = text;
  edited.insert(6, "typed ");
  EXPECT_EQ(sorted((*published)["params"]["diagnostics"]), argusDiagnostics(edited))
      << "the same findings, their offsets moved with the text";
  EXPECT_EQ((*published)["params"]["diagnostics"].size(), opened.back().size());
  // Nothing is re-checked: no progress starts, nothing else is published.
  for (const json& m : client.drain(std::chrono::milliseconds(500))) {
    EXPECT_NE(m.value("method", ""), "window/workDoneProgress/create") << m.dump();
    EXPECT_NE(m.value("method", ""), "textDocument/publishDiagnostics") << m.dump();
  }
  // Features see the new text.
  json hover = client.request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", at(6, 5)}});
  EXPECT_TRUE(hover.contains("result"));
}

TEST(LspCore, LineAddedInACommentMovesFindingsThenRechecks) {
  TestClient client;
  client.initializeWithProgress();
  std::string text = readSourceFile("examples/broken/missing_barrier.ag");
  client.open(kUri, text);
  std::vector<json> opened = publishesUntilChecked(client, 1);
  ASSERT_TRUE(hasCode(opened.back(), "AG2002"));
  int raceLine = -1;
  for (const json& d : opened.back())
    if (d["code"] == "AG2002") raceLine = d["range"]["start"]["line"];
  change(client, 2, insertAt(3, 0, "# a new line of comment\n"));
  std::vector<json> moved = publishesUntilChecked(client, 2);
  ASSERT_GE(moved.size(), 2u);
  bool shifted = false;
  for (const json& d : moved.front())
    if (d["code"] == "AG2002") shifted = d["range"]["start"]["line"] == raceLine + 1;
  EXPECT_TRUE(shifted) << "the carried-over race moved down a line: " << moved.front().dump();
  std::string edited = text;
  edited.insert(edited.find("@kernel"), "# a new line of comment\n");
  EXPECT_EQ(sorted(moved.back()), argusDiagnostics(edited)) << "the notes' line numbers are right after the check";
}

TEST(LspCore, RealEditPublishesTheFrontEndFirstThenTheChecker) {
  TestClient client;
  client.initializeWithProgress();
  std::string text = readSourceFile("examples/broken/missing_barrier.ag");
  client.open(kUri, text);
  publishesUntilChecked(client, 1);
  client.drain(std::chrono::milliseconds(200));
  // BK: const = 16 -> 32 (line 5): a real edit, still valid, still racy.
  size_t lineStart = text.find("         BM: const");
  size_t column = text.find("16", lineStart) - lineStart;
  change(client, 2,
         json::array({{{"range", {{"start", at(5, static_cast<int>(column))}, {"end", at(5, static_cast<int>(column) + 2)}}},
                       {"text", "32"}}}));
  // The first publish of version 2 comes before the check starts and still
  // shows the race found on version 1 (it maps onto the new text).
  std::optional<json> first = client.waitFor(
      [](const json& m) {
        return m.value("method", "") == "window/workDoneProgress/create" ||
               (m.value("method", "") == "textDocument/publishDiagnostics" && m["params"].value("version", -1) == 2);
      },
      std::chrono::seconds(30));
  ASSERT_TRUE(first);
  ASSERT_EQ(first->value("method", ""), "textDocument/publishDiagnostics") << "the front end publishes before checking";
  EXPECT_TRUE(hasCode((*first)["params"]["diagnostics"], "AG2002"));
  std::vector<json> rest = publishesUntilChecked(client, 2, 1);
  ASSERT_FALSE(rest.empty());
  std::string edited = text;
  edited.replace(lineStart + column, 2, "32");
  EXPECT_EQ(sorted(rest.back()), argusDiagnostics(edited));
}

// A client that pulls diagnostics gets the checker's findings too: after the
// check, the server asks it to pull again, and the report is argusc's.
TEST(LspCore, PulledDiagnosticsIncludeTheCheckersAfterTheRefresh) {
  TestClient client;
  client.request("initialize", json{{"capabilities", {{"workspace", {{"diagnostics", {{"refreshSupport", true}}}}}}},
                                    {"initializationOptions", {{"pullDiagnostics", true}}}});
  std::string text = readSourceFile("examples/broken/missing_barrier.ag");
  client.open(kUri, text);
  json params = {{"textDocument", {{"uri", kUri}}}};
  json early = client.request("textDocument/diagnostic", params);
  auto refresh = client.waitFor([](const json& m) { return m.value("method", "") == "workspace/diagnostic/refresh"; },
                                std::chrono::seconds(120));
  ASSERT_TRUE(refresh) << "no workspace/diagnostic/refresh after the check";
  client.send(json{{"jsonrpc", "2.0"}, {"id", (*refresh)["id"]}, {"result", nullptr}});
  json pulled = client.request("textDocument/diagnostic", params);
  ASSERT_EQ(pulled["result"].value("kind", ""), "full");
  EXPECT_TRUE(hasCode(pulled["result"]["items"], "AG2002")) << pulled.dump();
  EXPECT_EQ(sorted(pulled["result"]["items"]), argusDiagnostics(text));
  // The report of the checked text is not the front end's, even for the same version.
  if (!hasCode(early["result"]["items"], "AG2002")) {
    EXPECT_NE(early["result"]["resultId"], pulled["result"]["resultId"]);
  }
  json again = client.request("textDocument/diagnostic",
                              json{{"textDocument", {{"uri", kUri}}}, {"previousResultId", pulled["result"]["resultId"]}});
  EXPECT_EQ(again["result"].value("kind", ""), "unchanged");
}

TEST(LspCore, ChecksReportProgress) {
  TestClient client;
  client.initializeWithProgress();
  client.open(kUri, readSourceFile("examples/broken/missing_barrier.ag"));
  auto create = client.waitFor([](const json& m) { return m.value("method", "") == "window/workDoneProgress/create"; },
                               std::chrono::seconds(30));
  ASSERT_TRUE(create);
  json token = (*create)["params"]["token"];
  client.send(json{{"jsonrpc", "2.0"}, {"id", (*create)["id"]}, {"result", nullptr}});
  auto progress = [&](const char* kind) {
    return client.waitFor(
        [&](const json& m) {
          return m.value("method", "") == "$/progress" && m["params"]["token"] == token &&
                 m["params"]["value"]["kind"] == kind;
        },
        std::chrono::seconds(60));
  };
  EXPECT_TRUE(progress("begin"));
  EXPECT_TRUE(progress("end"));
}

TEST(LspCore, NoProgressForAClientWithoutTheCapability) {
  TestClient client;
  client.initialize();
  client.open(kUri, readSourceFile("examples/broken/missing_barrier.ag"));
  ASSERT_TRUE(client.diagnosticsWhere(kUri, 1, [](const json& d) { return hasCode(d, "AG2002"); }));
  for (const json& m : client.drain(std::chrono::milliseconds(300)))
    EXPECT_NE(m.value("method", ""), "window/workDoneProgress/create");
}

// --- the target ---------------------------------------------------------------

TEST(LspCoreTarget, DiagnosticsAreForTheConfiguredTarget) {
  std::string text = readSourceFile("examples/gemm_wgmma.ag");
  for (const std::string arch : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(arch);
    TestClient client;
    client.initializeWithProgress();
    client.notify("workspace/didChangeConfiguration", {{"settings", {{"argus", {{"target", arch}}}}}});
    client.open(kUri, text);
    std::vector<json> publishes = publishesUntilChecked(client, 1);
    ASSERT_FALSE(publishes.empty());
    json expected = argusDiagnostics(text, arch);
    // argusc rejects it for both (shared memory for sm_80, sm_90a-only instructions for sm_90).
    EXPECT_TRUE(hasCode(expected, arch == "sm_80" ? "AG5001" : "AG5020")) << expected.dump();
    EXPECT_EQ(sorted(publishes.back()), expected);
  }
}

TEST(LspCoreTarget, WithoutATargetTheFilesArchLineDecides) {
  std::string text = readSourceFile("examples/gemm_wgmma.ag");
  ASSERT_EQ(declaredArch(text), "sm_90a");
  TestClient client;
  client.initializeWithProgress();
  // An empty target means "as argusc without --arch".
  client.notify("workspace/didChangeConfiguration", {{"settings", {{"argus", {{"target", ""}}}}}});
  client.open(kUri, text);
  std::vector<json> publishes = publishesUntilChecked(client, 1);
  ASSERT_FALSE(publishes.empty());
  EXPECT_EQ(sorted(publishes.back()), argusDiagnostics(text));
  EXPECT_TRUE(publishes.back().empty()) << publishes.back().dump();
  // Switching the target re-analyses the open document for it.
  client.notify("workspace/didChangeConfiguration", {{"settings", {{"argus", {{"target", "sm_80"}}}}}});
  auto published = client.diagnosticsWhere(kUri, 1, [](const json& d) { return hasCode(d, "AG5001"); },
                                           std::chrono::seconds(300));
  ASSERT_TRUE(published);
}

TEST(LspCoreTarget, DiagnosticsAreForTheConfiguredDefines) {
  std::string text = readSourceFile("examples/softmax.ag");
  // As the editors send them (a JSON object of strings, numbers or bools) and
  // as argusc's -D NAME=VALUE spells them.
  struct Case {
    json settings;
    std::vector<std::pair<std::string, std::string>> defines;
    const char* expectedCode;  // one of what argusc reports, or null for nothing
  };
  std::vector<Case> cases = {
      {{{"BN", "1000"}}, {{"BN", "1000"}}, "AG4003"},     // not a power of two (the checker's IR)
      {{{"BN", 1000}}, {{"BN", "1000"}}, "AG4003"},       // a JSON number
      {{{"BN", "abc"}}, {{"BN", "abc"}}, "AG0005"},       // not a value
      {{{"NOPE", true}}, {{"NOPE", "true"}}, "AG0006"},   // names no const parameter
      {{{"ROWS", 0}}, {{"ROWS", "0"}}, "AG3036"},         // division by zero in the grid
      {{{"BN", "2048"}, {"ROWS", "2"}}, {{"BN", "2048"}, {"ROWS", "2"}}, nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.settings.dump());
    TestClient client;
    client.initializeWithProgress();
    client.notify("workspace/didChangeConfiguration", {{"settings", {{"argus", {{"defines", c.settings}}}}}});
    client.open(kUri, text);
    // Errors of the front end end the analysis there (no check, no progress), as in argusc.
    std::optional<json> first = client.diagnostics(kUri, 1);
    ASSERT_TRUE(first);
    json published = (*first)["params"]["diagnostics"];
    bool frontEndError = false;
    for (const json& d : published) frontEndError = frontEndError || d.value("severity", 0) == 1;
    if (!frontEndError) {
      std::vector<json> later = publishesUntilChecked(client, 1, 1);
      ASSERT_FALSE(later.empty());
      published = later.back();
    }
    json expected = argusDiagnostics(text, std::nullopt, c.defines);
    if (c.expectedCode) EXPECT_TRUE(hasCode(expected, c.expectedCode)) << expected.dump();
    else EXPECT_TRUE(expected.empty()) << expected.dump();
    EXPECT_EQ(sorted(published), expected);
  }
}

// --- register counts (ptxas) ------------------------------------------------------

bool isRegisterHint(const json& hint) {
  const std::string label = hint.value("label", "");
  return label.find(" registers") != std::string::npos;
}

TEST(LspCoreResources, KernelRegistersArriveAsInlayHintsAfterTheCheck) {
  if (access("/usr/local/cuda/bin/ptxas", X_OK) != 0) GTEST_SKIP() << "no ptxas";
  TestClient client;
  client.request("initialize", json{{"capabilities", {{"workspace", {{"inlayHint", {{"refreshSupport", true}}}}}}}});
  std::string text = readSourceFile("examples/softmax.ag");
  client.open(kUri, text);
  auto refresh = client.waitFor([](const json& m) { return m.value("method", "") == "workspace/inlayHint/refresh"; },
                                std::chrono::seconds(60));
  ASSERT_TRUE(refresh) << "the client is asked to re-read its hints once ptxas measured the kernels";
  ASSERT_TRUE(refresh->contains("id"));
  client.send(json{{"jsonrpc", "2.0"}, {"id", (*refresh)["id"]}, {"result", nullptr}});
  json range = {{"start", at(0, 0)}, {"end", at(20, 0)}};
  auto registerHints = [&] {
    json reply = client.request("textDocument/inlayHint", {{"textDocument", {{"uri", kUri}}}, {"range", range}});
    std::vector<json> found;
    for (const json& hint : reply["result"])
      if (isRegisterHint(hint)) found.push_back(hint);
    return found;
  };
  std::vector<json> hints = registerHints();
  ASSERT_EQ(hints.size(), 1u);
  // After the header's colon: `            ROWS: const = 4, BN: const = 1024):`
  EXPECT_EQ(hints[0]["position"], at(5, 47)) << hints[0].dump();
  EXPECT_NE(hints[0].value("tooltip", "").find("ptxas (sm_90)"), std::string::npos) << hints[0].dump();
  EXPECT_NE(hints[0].value("tooltip", "").find("128 threads per block"), std::string::npos) << hints[0].dump();

  // A comment edit keeps the tokens, and so the registers (no new check).
  change(client, 2, insertAt(0, 2, "typed "));
  ASSERT_TRUE(client.diagnostics(kUri, 2, std::chrono::seconds(10)));
  hints = registerHints();
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0]["position"], at(5, 47));

  // A real edit: the hint waits for the new check's measurement.
  change(client, 3, insertAt(7, 4, "q = 1\n    "));
  ASSERT_TRUE(client.waitFor([](const json& m) { return m.value("method", "") == "workspace/inlayHint/refresh"; },
                             std::chrono::seconds(60)));
  hints = registerHints();
  ASSERT_EQ(hints.size(), 1u);
}

TEST(LspCoreResources, NoMeasurementWhenTheSettingIsOff) {
  TestClient client;
  client.request("initialize", json{{"capabilities", {{"workspace", {{"inlayHint", {{"refreshSupport", true}}}}},
                                                      {"window", {{"workDoneProgress", true}}}}},
                                    {"initializationOptions", {{"argus", {{"inlayHints", {{"registers", false}}}}}}}});
  client.open(kUri, readSourceFile("examples/softmax.ag"));
  publishesUntilChecked(client, 1);
  for (const json& m : client.drain(std::chrono::milliseconds(1500)))
    EXPECT_NE(m.value("method", ""), "workspace/inlayHint/refresh") << m.dump();
  json reply = client.request("textDocument/inlayHint",
                              {{"textDocument", {{"uri", kUri}}}, {"range", {{"start", at(0, 0)}, {"end", at(20, 0)}}}});
  for (const json& hint : reply["result"]) EXPECT_FALSE(isRegisterHint(hint)) << hint.dump();
}

// --- hostile messages -----------------------------------------------------------

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(LspCoreRobustness, DeeplyNestedJsonIsAnsweredNotFollowed) {
  TestClient client;
  client.initialize();
  client.sendRaw(R"({"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"deep":)" + nested(150000) + "}}");
  auto reply = client.waitFor([](const json& m) { return m.contains("id") && m["id"] == 7; }, std::chrono::seconds(30));
  ASSERT_TRUE(reply);
  EXPECT_EQ((*reply)["error"]["code"], error_code::kInvalidRequest);
  client.sendRaw(nested(150000));
  auto anonymous = client.waitFor([](const json& m) { return m.contains("error") && m["id"].is_null(); },
                                  std::chrono::seconds(30));
  ASSERT_TRUE(anonymous);
  // A cancellation whose id is nested deep.
  client.sendRaw(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":)" + nested(150000) + "}}");
  client.sendRaw(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":[[[[1]]]]}})");
  client.open(kUri, "x = 1\n");
  json hover = client.request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", at(0, 0)}});
  EXPECT_TRUE(hover.contains("result")) << hover.dump();
}

TEST(LspCoreRobustness, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(sanitizeJsonText("\"a\xFF" "b\""), "\"a\xEF\xBF\xBD" "b\"");
  EXPECT_EQ(sanitizeJsonText("\"\xE2\x82\""), "\"\xEF\xBF\xBD\"");                              // truncated: one
  EXPECT_EQ(sanitizeJsonText("\"\xC0\xAF\""), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");                  // overlong: two
  EXPECT_EQ(sanitizeJsonText("\"\xED\xA0\x80\""), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate: three
  EXPECT_EQ(sanitizeJsonText("\"\xF0\x9F\x98\x80\""), "\"\xF0\x9F\x98\x80\"");                  // valid stays
  EXPECT_EQ(sanitizeJsonText(R"("\ud83d\ude00 \ud800 \udc00 \\ud800")"), R"("\ud83d\ude00 \uFFFD \uFFFD \\ud800")");
}

// The client's view: each fragment as sent (raw bytes or JSON escapes) and
// what an editor decoding it (JavaScript's TextDecoder, Python's "replace") holds.
struct Fragment {
  std::string wire, text;
};

const std::vector<Fragment>& fragments() {
  static const std::vector<Fragment> list = {
      {"a", "a"},
      {"x = 1", "x = 1"},
      {"\\n", "\n"},
      {"\xC3\xA9", "\xC3\xA9"},                   // é
      {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},   // an emoji: two UTF-16 units
      {"\xFF", "\xEF\xBF\xBD"},
      {"\xE2\x82", "\xEF\xBF\xBD"},
      {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"\\ud800", "\xEF\xBF\xBD"},
      {"\\ud83d\\ude00", "\xF0\x9F\x98\x80"},
  };
  return list;
}

// UTF-16 length of a UTF-8 string (valid UTF-8 only).
uint32_t utf16Length(const std::string& text) {
  uint32_t units = 0;
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    units += length == 4 ? 2 : 1;
    i += length;
  }
  return units;
}

// The byte offset of a UTF-16 position, never inside a character.
size_t offsetOfUnits(const std::string& text, uint32_t line, uint32_t character) {
  size_t i = 0;
  for (uint32_t l = 0; l < line; ++l) i = text.find('\n', i) + 1;
  uint32_t units = 0;
  while (i < text.size() && text[i] != '\n' && units < character) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    units += length == 4 ? 2 : 1;
    i += length;
  }
  return i;
}

TEST(LspCoreRobustness, ServerTextEqualsTheEditorsAfterAnyEdits) {
  TestClient client;
  client.initialize();
  std::string model = "def f():\n    pass\n";
  client.open(kUri, model);
  std::mt19937 random(21);
  for (int version = 2; version < 400; ++version) {
    // A random position (line, then a character on it; the end of a line too).
    size_t lines = static_cast<size_t>(std::count(model.begin(), model.end(), '\n')) + 1;
    uint32_t line = static_cast<uint32_t>(random() % lines);
    size_t lineBegin = offsetOfUnits(model, line, 0);
    size_t lineEnd = model.find('\n', lineBegin);
    if (lineEnd == std::string::npos) lineEnd = model.size();
    uint32_t width = utf16Length(model.substr(lineBegin, lineEnd - lineBegin));
    uint32_t startChar = static_cast<uint32_t>(random() % (width + 1));
    size_t start = offsetOfUnits(model, line, startChar);
    uint32_t endChar = std::min(width, startChar + static_cast<uint32_t>(random() % 4));
    size_t end = offsetOfUnits(model, line, endChar);
    std::string wire, text;
    for (int k = static_cast<int>(random() % 3); k >= 0; --k) {
      const Fragment& f = fragments()[random() % fragments().size()];
      wire += f.wire;
      text += f.text;
    }
    std::string body = R"({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":")" +
                       std::string(kUri) + R"(","version":)" + std::to_string(version) +
                       R"(},"contentChanges":[{"range":{"start":{"line":)" + std::to_string(line) +
                       R"(,"character":)" + std::to_string(startChar) + R"(},"end":{"line":)" + std::to_string(line) +
                       R"(,"character":)" + std::to_string(endChar) + R"(}},"text":")" + wire + R"("}]}})";
    client.sendRaw(body);
    model.replace(start, end - start, text);
    std::optional<std::string> server = client.server().documentText(kUri);
    ASSERT_TRUE(server);
    ASSERT_EQ(*server, model) << "diverged at version " << version << " after " << body;
  }
}

TEST(LspCoreRobustness, ShutdownAnswersRequestsStillWaitingForAnalysis) {
  ServerOptions options;
  options.scheduler.debounce = std::chrono::milliseconds(0);
  options.scheduler.workers = 1;
  options.shutdownGrace = std::chrono::milliseconds(0);
  TestClient client(options);
  client.initialize();
  // Enough kernels that the front end takes a while.
  std::string big;
  for (int k = 0; k < 400; ++k) {
    std::string v = readSourceFile("examples/vadd.ag");
    size_t name = v.find("def vadd");
    v.replace(name, 8, "def vadd" + std::to_string(k));
    big += v + "\n";
  }
  client.open(kUri, big);
  for (int id = 1; id <= 3; ++id) {
    json params = {{"textDocument", {{"uri", kUri}}}, {"position", at(4, 4)}};
    client.send(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "textDocument/hover"}, {"params", params}});
  }
  json shutdown = client.request("shutdown", nullptr, std::chrono::seconds(120));
  EXPECT_TRUE(shutdown.contains("result")) << shutdown.dump();
  for (int id = 1; id <= 3; ++id) {
    auto answer = client.waitFor([id](const json& m) { return m.contains("id") && m["id"] == id; },
                                 std::chrono::seconds(120));
    ASSERT_TRUE(answer) << "request " << id << " was never answered";
    // Exactly once.
    EXPECT_FALSE(client.waitFor([id](const json& m) { return m.contains("id") && m["id"] == id; },
                                std::chrono::milliseconds(100)));
  }
}

}  // namespace
}  // namespace argus::lsp
