// SARIF 2.1.0 for CI systems (GitHub code scanning and friends): one run, one
// rule per diagnostic kind used, one result per diagnostic.
#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "support/render.h"

namespace argus {
namespace {

using nlohmann::json;

const char* sarifLevel(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

// "FileInvalidUtf8" -> "File invalid utf8": the kind name read as a phrase.
std::string phraseFromName(const char* name) {
  std::string out;
  for (const char* p = name; p && *p; ++p) {
    char c = *p;
    if (std::isupper(static_cast<unsigned char>(c)) && !out.empty()) {
      out += ' ';
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    out += c;
  }
  return out;
}

class SarifWriter {
 public:
  explicit SarifWriter(const SourceFile& file) : file_(file), uri_(fileUri(file.name())) {}

  json run(const std::vector<Diagnostic>& diags, const std::string& toolVersion) {
    json results = json::array();
    for (const Diagnostic& d : diags) results.push_back(result(d));
    json driver = {{"name", "argusc"},
                   {"version", toolVersion},
                   {"informationUri", "https://argus.dev"},
                   {"rules", rules_}};
    json artifact = {{"location", {{"uri", uri_}}},
                     {"length", file_.text().size()},
                     {"sourceLanguage", "argus"},
                     {"encoding", "UTF-8"}};
    return json{{"tool", {{"driver", driver}}},
                {"columnKind", "utf16CodeUnits"},
                {"invocations", json::array({{{"executionSuccessful", true}}})},
                {"artifacts", json::array({artifact})},
                {"results", results}};
  }

 private:
  // 1-based lines and UTF-16 columns; endColumn is one past the last character.
  json region(SourceRange range) const {
    uint32_t end = std::max(range.begin, range.end);
    json r = {{"startLine", file_.lineCol(range.begin).line},
              {"startColumn", file_.utf16Column(range.begin) + 1},
              {"endLine", file_.lineCol(end).line},
              {"endColumn", file_.utf16Column(end) + 1}};
    return r;
  }

  json physicalLocation(SourceRange range) const {
    json r = region(range);
    std::string_view text = file_.slice(range);
    if (!text.empty()) r["snippet"] = {{"text", std::string(text)}};
    uint32_t firstLine = r["startLine"], lastLine = r["endLine"];
    SourceRange lines{file_.offsetOf(firstLine, 1), file_.offsetOf(lastLine, UINT32_MAX)};
    json context = {{"startLine", firstLine}, {"endLine", lastLine}};
    context["snippet"] = {{"text", std::string(file_.slice(lines))}};
    return json{{"artifactLocation", artifactLocation()}, {"region", r}, {"contextRegion", context}};
  }

  // A diagnostic about the whole file (cannot open it, -D...) has no region.
  json primaryLocation(const Diagnostic& d) const {
    if (isFileLevel(d, file_)) return json{{"artifactLocation", artifactLocation()}};
    return physicalLocation(d.range);
  }

  json artifactLocation() const { return json{{"uri", uri_}, {"index", 0}}; }

  size_t ruleIndex(DiagId id) {
    auto found = ruleIndexOf_.find(id);
    if (found != ruleIndexOf_.end()) return found->second;
    const DiagKindInfo& info = diagInfo(id);
    rules_.push_back({{"id", info.code},
                      {"name", info.name},
                      {"shortDescription", {{"text", phraseFromName(info.name)}}},
                      {"fullDescription", {{"text", plainFormat(id)}}},
                      {"messageStrings", {{"default", {{"text", plainFormat(id)}}}}},
                      {"helpUri", docsUrlFor(info.code)},
                      {"defaultConfiguration", {{"level", sarifLevel(info.severity)}}}});
    ruleIndexOf_[id] = rules_.size() - 1;
    return rules_.size() - 1;
  }

  // The text, and the arguments of the rule's message string when they fit it
  // (a consumer can then render or translate the message itself).
  static json message(const Diagnostic& d) {
    json m = {{"text", d.message}};
    if (!d.arguments.empty() && !diagArgumentProblem(d.id, d.arguments)) {
      m["id"] = "default";
      m["arguments"] = d.arguments;
    }
    return m;
  }

  json result(const Diagnostic& d) {
    json r = {{"ruleId", d.code()},
              {"ruleIndex", ruleIndex(d.id)},
              {"level", sarifLevel(d.severity)},
              {"message", message(d)},
              {"locations", json::array({{{"physicalLocation", primaryLocation(d)}}})}};

    json related = json::array();
    for (const Label& label : d.labels)
      related.push_back({{"id", related.size()},
                         {"physicalLocation", physicalLocation(label.range)},
                         {"message", {{"text", label.message}}}});
    if (!related.empty()) r["relatedLocations"] = related;

    json fixes = json::array();
    for (const FixIt& fix : d.fixits) {
      json replacement = {{"deletedRegion", region(fix.range)},
                          {"insertedContent", {{"text", fix.replacement}}}};
      json change = {{"artifactLocation", artifactLocation()},
                     {"replacements", json::array({replacement})}};
      fixes.push_back({{"description", {{"text", fix.message.empty() ? "apply the fix-it" : fix.message}}},
                       {"artifactChanges", json::array({change})}});
    }
    if (!fixes.empty()) r["fixes"] = fixes;

    json data = diagnosticToJson(d, file_)["data"];
    if (d.counterexample && !d.counterexample->trace.empty()) {
      json steps = json::array();
      for (const Label& step : d.counterexample->trace)
        steps.push_back({{"location", {{"physicalLocation", physicalLocation(step.range)},
                                       {"message", {{"text", step.message}}}}},
                         {"executionOrder", steps.size() + 1}});
      steps.push_back({{"location", {{"physicalLocation", primaryLocation(d)},
                                     {"message", {{"text", d.message}}}}},
                       {"executionOrder", steps.size() + 1}});
      json flow = {{"threadFlows", json::array({{{"locations", steps}}})}};
      if (d.counterexample->thread)
        flow["message"] = {{"text", "thread " + std::to_string(*d.counterexample->thread)}};
      r["codeFlows"] = json::array({flow});
    }
    json properties = json::object();
    if (!d.notes.empty()) properties["notes"] = d.notes;
    if (!data["counterexample"].is_null()) properties["counterexample"] = data["counterexample"];
    if (!properties.empty()) r["properties"] = properties;
    return r;
  }

  const SourceFile& file_;
  std::string uri_;
  json rules_ = json::array();
  std::map<DiagId, size_t> ruleIndexOf_;
};

}  // namespace

std::string renderSarif(const std::vector<Diagnostic>& diags, const SourceFile& file,
                        const std::string& toolVersion) {
  SarifWriter writer(file);
  json log = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", json::array({writer.run(diags, toolVersion)})}};
  return log.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace argus
