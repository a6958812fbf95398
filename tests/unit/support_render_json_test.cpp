// The machine renderings: JSON (LSP Diagnostic superset) and SARIF 2.1.0.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/render.h"
#include "support_render_test_util.h"

namespace argus {
namespace {

using nlohmann::json;

SourceRange find(const SourceFile& file, std::string_view needle) {
  size_t at = file.text().find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return {static_cast<uint32_t>(at), static_cast<uint32_t>(at + needle.size())};
}

using testing::make;
using testing::withMessage;

// Line 2 holds 'é' (2 bytes, 1 UTF-16 unit) and an emoji (4 bytes, 2 UTF-16
// units) before the range, so bytes, code points and UTF-16 units all differ.
const char* kText = "a = 1\ns = \"é😀\" + 1x\n";

Diagnostic richDiagnostic(const SourceFile& file) {
  Diagnostic d = make(DiagId::BadNumber, find(file, "1x"), {"1x"});
  d.labels.push_back({find(file, "a"), "'a' defined here"});
  d.notes.push_back("a number cannot end in a letter");
  d.fixits.push_back({find(file, "1x"), "1", "drop the letter"});
  Counterexample cx;
  cx.thread = 37;
  cx.warp = 1;
  cx.lane = 5;
  cx.iteration = {{"kt", 1}, {"kk", 0}};
  cx.facts = {{"element", "(m=21, k=40)"}};
  cx.trace.push_back({find(file, "\"é"), "string starts here"});
  d.counterexample = cx;
  return d;
}

json position(unsigned line, unsigned character) {
  return json{{"line", line}, {"character", character}};
}

TEST(RenderJson, LspFieldsUseZeroBasedLinesAndUtf16Characters) {
  SourceFile file("/tmp/k.ag", kText);
  json j = diagnosticToJson(richDiagnostic(file), file);
  EXPECT_EQ(j["range"]["start"], position(1, 12));
  EXPECT_EQ(j["range"]["end"], position(1, 14));
  EXPECT_EQ(j["severity"], 1);
  EXPECT_EQ(j["code"], "AG1009");
  EXPECT_EQ(j["codeDescription"]["href"], docsUrlFor("AG1009"));
  EXPECT_EQ(j["source"], "argus");
  EXPECT_EQ(j["message"], "invalid numeric literal '1x'");

  ASSERT_EQ(j["relatedInformation"].size(), 2u);
  EXPECT_EQ(j["relatedInformation"][0]["location"]["uri"], "file:///tmp/k.ag");
  EXPECT_EQ(j["relatedInformation"][0]["location"]["range"]["start"], position(0, 0));
  EXPECT_EQ(j["relatedInformation"][0]["message"], "'a' defined here");
  EXPECT_EQ(j["relatedInformation"][1]["location"]["range"]["start"], position(1, 4));
  EXPECT_EQ(j["relatedInformation"][1]["location"]["range"]["end"], position(1, 6));
  EXPECT_EQ(j["relatedInformation"][1]["message"], "string starts here");
}

TEST(RenderJson, DataCarriesTheWholeStructure) {
  SourceFile file("/tmp/k.ag", kText);
  json data = diagnosticToJson(richDiagnostic(file), file)["data"];
  EXPECT_EQ(data["name"], "BadNumber");
  EXPECT_EQ(data["file"], "/tmp/k.ag");
  EXPECT_EQ(data["line"], 2);
  EXPECT_EQ(data["column"], 16);  // 1-based bytes
  EXPECT_EQ(data["endLine"], 2);
  EXPECT_EQ(data["endColumn"], 18);
  EXPECT_EQ(data["offsets"], (json{{"begin", 21}, {"end", 23}}));
  EXPECT_EQ(data["arguments"], (json::array({{{"kind", "prose"}, {"text", "1x"}}})));
  EXPECT_EQ(data["notes"], json::array({"a number cannot end in a letter"}));
  ASSERT_EQ(data["fixits"].size(), 1u);
  EXPECT_EQ(data["fixits"][0]["range"]["start"], position(1, 12));
  EXPECT_EQ(data["fixits"][0]["newText"], "1");
  EXPECT_EQ(data["fixits"][0]["message"], "drop the letter");

  json cx = data["counterexample"];
  EXPECT_EQ(cx["thread"], 37);
  EXPECT_EQ(cx["warp"], 1);
  EXPECT_EQ(cx["lane"], 5);
  EXPECT_TRUE(cx["value"].is_null());
  EXPECT_TRUE(cx["block"].is_null());
  EXPECT_EQ(cx["iteration"], (json{{"kt", 1}, {"kk", 0}}));
  EXPECT_EQ(cx["facts"], (json{{"element", "(m=21, k=40)"}}));
  ASSERT_EQ(cx["trace"].size(), 1u);
  EXPECT_EQ(cx["trace"][0]["message"], "string starts here");
  EXPECT_EQ(cx["trace"][0]["line"], 2);
  EXPECT_EQ(cx["trace"][0]["column"], 5);
  EXPECT_EQ(cx["trace"][0]["range"]["start"], position(1, 4));
}

TEST(RenderJson, PlainDiagnosticHasEmptyListsAndNullCounterexample) {
  SourceFile file("<stdin>", "x\n");
  Diagnostic d = make(DiagId::DefineUnused, {0, 0}, {"BM"});
  json j = diagnosticToJson(d, file);
  EXPECT_EQ(j["severity"], 2);
  EXPECT_EQ(j["relatedInformation"], json::array());
  EXPECT_EQ(j["data"]["notes"], json::array());
  EXPECT_EQ(j["data"]["fixits"], json::array());
  EXPECT_TRUE(j["data"]["counterexample"].is_null());
  // The registry says what each argument is: AG0006 is "-D {0:name} does not name...".
  EXPECT_EQ(j["data"]["arguments"], (json::array({{{"kind", "name"}, {"text", "BM"}}})));
  d.arguments.clear();  // a message built by other means has no arguments to give
  EXPECT_EQ(diagnosticToJson(d, file)["data"]["arguments"], json::array());
  d.severity = Severity::Note;
  EXPECT_EQ(diagnosticToJson(d, file)["severity"], 3);
}

TEST(RenderJson, DocumentIsPrettyAndSurvivesInvalidUtf8) {
  SourceFile file("k.ag", "x\n");
  Diagnostic d = withMessage(DiagId::SyntaxError, {0, 1}, std::string("bad \xff byte"));
  std::string text = renderJson({d, d}, file);
  EXPECT_NE(text.find("\n  \"diagnostics\": ["), std::string::npos) << text;
  json doc = json::parse(text);
  EXPECT_EQ(doc["file"], "k.ag");
  ASSERT_EQ(doc["diagnostics"].size(), 2u);
  EXPECT_EQ(doc["diagnostics"][0]["message"], "bad \xEF\xBF\xBD byte");
  EXPECT_EQ(json::parse(renderJson({}, file))["diagnostics"], json::array());
}

TEST(RenderJson, FileUri) {
  EXPECT_EQ(fileUri("<stdin>"), "<stdin>");
  EXPECT_EQ(fileUri("file:///a/b.ag"), "file:///a/b.ag");
  EXPECT_EQ(fileUri("/tmp/a b/c.ag"), "file:///tmp/a%20b/c.ag");
  EXPECT_EQ(fileUri("/tmp/x/../é.ag"), "file:///tmp/%C3%A9.ag");
  EXPECT_EQ(fileUri("k.ag").rfind("file:///", 0), 0u);
  EXPECT_EQ(fileUri("k.ag").substr(fileUri("k.ag").size() - 5), "/k.ag");
}

TEST(RenderJson, DocsUrlHasOneHome) {
  EXPECT_EQ(docsUrlFor("AG3001"), "https://argus.dev/docs/diagnostics/AG3001.md");
}

TEST(RenderSarif, Structure) {
  SourceFile file("/tmp/k.ag", kText);
  Diagnostic rich = richDiagnostic(file);
  Diagnostic again = make(DiagId::BadNumber, find(file, "1x"), {"1x"});
  Diagnostic warning = make(DiagId::DefineUnused, {0, 0}, {"BM"});
  json log = json::parse(renderSarif({rich, warning, again}, file, "0.1.0"));

  EXPECT_EQ(log["$schema"], "https://json.schemastore.org/sarif-2.1.0.json");
  EXPECT_EQ(log["version"], "2.1.0");
  ASSERT_EQ(log["runs"].size(), 1u);
  json run = log["runs"][0];
  json driver = run["tool"]["driver"];
  EXPECT_EQ(driver["name"], "argusc");
  EXPECT_EQ(driver["version"], "0.1.0");
  EXPECT_TRUE(driver["informationUri"].is_string());
  ASSERT_EQ(driver["rules"].size(), 2u);  // one per kind used, in order of first use
  EXPECT_EQ(driver["rules"][0]["id"], "AG1009");
  EXPECT_EQ(driver["rules"][0]["name"], "BadNumber");
  EXPECT_EQ(driver["rules"][0]["shortDescription"]["text"], "Bad number");
  EXPECT_EQ(driver["rules"][0]["helpUri"], docsUrlFor("AG1009"));
  EXPECT_EQ(driver["rules"][0]["defaultConfiguration"]["level"], "error");
  EXPECT_EQ(driver["rules"][1]["id"], "AG0006");
  EXPECT_EQ(driver["rules"][1]["defaultConfiguration"]["level"], "warning");
  EXPECT_EQ(run["artifacts"][0]["location"]["uri"], "file:///tmp/k.ag");
  EXPECT_EQ(run["columnKind"], "utf16CodeUnits");

  ASSERT_EQ(run["results"].size(), 3u);
  json r = run["results"][0];
  EXPECT_EQ(r["ruleId"], "AG1009");
  EXPECT_EQ(r["ruleIndex"], 0);
  EXPECT_EQ(r["level"], "error");
  EXPECT_EQ(r["message"]["text"], "invalid numeric literal '1x'");
  EXPECT_EQ(r["message"]["id"], "default");  // the rule's message string, with these arguments
  EXPECT_EQ(r["message"]["arguments"], json::array({"1x"}));
  EXPECT_EQ(driver["rules"][1]["messageStrings"]["default"]["text"],
            "-D {0} does not name a const parameter of any kernel");
  json location = r["locations"][0]["physicalLocation"];
  EXPECT_EQ(location["artifactLocation"]["uri"], "file:///tmp/k.ag");
  EXPECT_EQ(location["region"],
            (json{{"startLine", 2}, {"startColumn", 13}, {"endLine", 2}, {"endColumn", 15},
                  {"snippet", {{"text", "1x"}}}}));
  EXPECT_EQ(location["contextRegion"]["snippet"]["text"], "s = \"é😀\" + 1x");

  ASSERT_EQ(r["relatedLocations"].size(), 1u);
  EXPECT_EQ(r["relatedLocations"][0]["message"]["text"], "'a' defined here");
  EXPECT_EQ(r["relatedLocations"][0]["physicalLocation"]["region"]["startLine"], 1);

  ASSERT_EQ(r["fixes"].size(), 1u);
  EXPECT_EQ(r["fixes"][0]["description"]["text"], "drop the letter");
  json replacement = r["fixes"][0]["artifactChanges"][0]["replacements"][0];
  EXPECT_EQ(replacement["deletedRegion"]["startColumn"], 13);
  EXPECT_EQ(replacement["deletedRegion"]["endColumn"], 15);
  EXPECT_EQ(replacement["insertedContent"]["text"], "1");

  json steps = r["codeFlows"][0]["threadFlows"][0]["locations"];
  ASSERT_EQ(steps.size(), 2u);  // the trace, then the failure itself
  EXPECT_EQ(steps[0]["location"]["message"]["text"], "string starts here");
  EXPECT_EQ(steps[1]["location"]["physicalLocation"]["region"]["startColumn"], 13);
  EXPECT_EQ(r["properties"]["counterexample"]["thread"], 37);
  EXPECT_EQ(r["properties"]["notes"][0], "a number cannot end in a letter");

  EXPECT_EQ(run["results"][1]["ruleIndex"], 1);
  EXPECT_EQ(run["results"][1]["level"], "warning");
  EXPECT_FALSE(run["results"][1].contains("fixes"));
  // A -D warning is about the whole file: no region at all.
  EXPECT_EQ(run["results"][1]["locations"][0]["physicalLocation"],
            (json{{"artifactLocation", {{"uri", "file:///tmp/k.ag"}, {"index", 0}}}}));
  EXPECT_EQ(run["results"][2]["ruleIndex"], 0);
}

TEST(RenderSarif, InsertionPointHasNoSnippetAndEmptyRegion) {
  SourceFile file("/tmp/k.ag", "def f()\n");
  Diagnostic d = withMessage(DiagId::SyntaxError, {7, 7}, "expected ':'");
  d.fixits.push_back({{7, 7}, ":", "add the colon"});
  json r = json::parse(renderSarif({d}, file, "0.1.0"))["runs"][0]["results"][0];
  json location = r["locations"][0]["physicalLocation"];
  EXPECT_EQ(location["region"], (json{{"startLine", 1}, {"startColumn", 8}, {"endLine", 1}, {"endColumn", 8}}));
  EXPECT_EQ(location["contextRegion"]["snippet"]["text"], "def f()");
  json replacement = r["fixes"][0]["artifactChanges"][0]["replacements"][0];
  EXPECT_EQ(replacement["deletedRegion"]["startColumn"], replacement["deletedRegion"]["endColumn"]);
  EXPECT_EQ(replacement["insertedContent"]["text"], ":");
  EXPECT_FALSE(r.contains("codeFlows"));
  EXPECT_FALSE(r.contains("relatedLocations"));
  EXPECT_FALSE(r.contains("properties"));
}

TEST(RenderSarif, EmptyRunIsStillValid) {
  SourceFile file("<stdin>", "");
  json log = json::parse(renderSarif({}, file, "0.1.0"));
  EXPECT_EQ(log["runs"][0]["results"], json::array());
  EXPECT_EQ(log["runs"][0]["tool"]["driver"]["rules"], json::array());
}

}  // namespace
}  // namespace argus

namespace argus {
namespace {

// Reversed, out-of-file and mid-character ranges, malformed bytes and CRLF line
// ends: every rendering must still produce something sensible and parseable.
TEST(RenderAll, OddRangesAndBytesNeverBreakTheRenderers) {
  const std::string texts[] = {"", "\n", "x", "a\r\nb\r\n", std::string("\xff\xfe\x00z", 4),
                               "é世😀\n\t\tq", "\xe4\xb8"};
  const SourceRange ranges[] = {{0, 0}, {0, 1}, {1, 0}, {2, 3}, {3, 100}, {100, 3}, {50, 50}, {1, 2}};
  for (const std::string& text : texts) {
    SourceFile file("odd.ag", text);
    std::vector<Diagnostic> diags;
    for (SourceRange range : ranges) {
      Diagnostic d = withMessage(DiagId::SyntaxError, range, "odd");
      d.labels.push_back({range, "label"});
      d.fixits.push_back({range, "new\ntext", "fix"});
      Counterexample cx;
      cx.trace.push_back({range, "step"});
      d.counterexample = cx;
      diags.push_back(d);
    }
    EXPECT_FALSE(renderText(diags, file).empty());
    EXPECT_NO_THROW(json::parse(renderJson(diags, file)));
    EXPECT_NO_THROW(json::parse(renderSarif(diags, file, "0")));
  }
}

}  // namespace
}  // namespace argus
