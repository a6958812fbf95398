// JSON rendering: each diagnostic is an LSP 3.17 `Diagnostic` (0-based lines,
// UTF-16 characters) whose `data` carries the whole structure, so that the agent
// and the language server never parse prose.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/render.h"

#ifndef ARGUS_DOCS_BASE_URL
#define ARGUS_DOCS_BASE_URL "https://argus.dev/docs/diagnostics/"
#endif

namespace argus {

using nlohmann::json;

std::string docsUrlFor(const char* code) {
  return std::string(ARGUS_DOCS_BASE_URL) + (code ? code : "") + ".md";
}

std::string fileUri(const std::string& name) {
  // `<stdin>`, `<string>` and names that are already URIs are not file paths.
  if (name.empty() || name.front() == '<' || name.find("://") != std::string::npos) return name;
  std::error_code error;
  std::filesystem::path path = std::filesystem::absolute(name, error);
  if (error) path = name;
  std::string text = path.lexically_normal().generic_string();
  std::string uri = "file://";
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 15];
    }
  }
  return uri;
}

json lspRange(SourceRange range, const SourceFile& file) {
  auto position = [&file](uint32_t offset) {
    LineCol lc = file.lineCol(offset);
    return json{{"line", lc.line - 1}, {"character", file.utf16Column(offset)}};
  };
  uint32_t end = std::max(range.begin, range.end);
  return json{{"start", position(range.begin)}, {"end", position(end)}};
}

namespace {

int lspSeverity(Severity s) {
  switch (s) {
    case Severity::Error: return 1;
    case Severity::Warning: return 2;
    case Severity::Note: return 3;
  }
  return 1;
}

json counterexampleToJson(const Counterexample& cx, const SourceFile& file) {
  auto optional = [](const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); };
  json iteration = json::object();
  for (const auto& [name, value] : cx.iteration) iteration[name] = value;
  json facts = json::object();
  for (const auto& [name, value] : cx.facts) facts[name] = value;
  json trace = json::array();
  for (const Label& step : cx.trace) {
    LineCol lc = file.lineCol(step.range.begin);
    trace.push_back({{"message", step.message},
                     {"range", lspRange(step.range, file)},
                     {"line", lc.line},
                     {"column", lc.column}});
  }
  return json{{"thread", optional(cx.thread)}, {"warp", optional(cx.warp)},
              {"lane", optional(cx.lane)},     {"value", optional(cx.value)},
              {"block", optional(cx.block)},   {"iteration", iteration},
              {"facts", facts},                {"trace", trace}};
}

std::string dumpJson(const json& value) {
  // Invalid UTF-8 in a message must not throw: replace it with U+FFFD.
  return value.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace

json diagnosticToJson(const Diagnostic& diag, const SourceFile& file) {
  const std::string uri = fileUri(file.name());
  json related = json::array();
  auto relate = [&](const Label& label) {
    related.push_back({{"location", {{"uri", uri}, {"range", lspRange(label.range, file)}}},
                       {"message", label.message}});
  };
  for (const Label& label : diag.labels) relate(label);
  if (diag.counterexample)
    for (const Label& step : diag.counterexample->trace) relate(step);

  json fixits = json::array();
  for (const FixIt& fix : diag.fixits)
    fixits.push_back({{"range", lspRange(fix.range, file)},
                      {"newText", fix.replacement},
                      {"message", fix.message}});

  LineCol begin = file.lineCol(diag.range.begin);
  LineCol end = file.lineCol(std::max(diag.range.begin, diag.range.end));
  const char* code = diag.code();
  json arguments = json::array();
  const std::vector<DiagArgKind>& kinds = diagArgumentKinds(diag.id);
  for (size_t i = 0; i < diag.arguments.size(); ++i)
    arguments.push_back({{"kind", diagArgKindName(i < kinds.size() ? kinds[i] : DiagArgKind::Prose)},
                         {"text", diag.arguments[i]}});
  json data = {
      {"name", diagInfo(diag.id).name},
      {"arguments", arguments},
      {"file", file.name()},
      {"line", begin.line},
      {"column", begin.column},
      {"endLine", end.line},
      {"endColumn", end.column},
      {"offsets", {{"begin", diag.range.begin}, {"end", std::max(diag.range.begin, diag.range.end)}}},
      {"notes", diag.notes},
      {"fixits", fixits},
      {"counterexample", diag.counterexample ? counterexampleToJson(*diag.counterexample, file)
                                             : json(nullptr)},
  };
  return json{{"range", lspRange(diag.range, file)},
              {"severity", lspSeverity(diag.severity)},
              {"code", code},
              {"codeDescription", {{"href", docsUrlFor(code)}}},
              {"source", "argus"},
              {"message", diag.message},
              {"relatedInformation", related},
              {"data", data}};
}

std::string renderJson(const std::vector<Diagnostic>& diags, const SourceFile& file) {
  json list = json::array();
  for (const Diagnostic& d : diags) list.push_back(diagnosticToJson(d, file));
  return dumpJson(json{{"file", file.name()}, {"diagnostics", list}});
}

}  // namespace argus
