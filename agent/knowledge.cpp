// Loading, validating and querying the knowledge base (knowledge.h). The
// entries are JSON (agent/knowledge/*.json): a file holds {"entries": [...]}
// or a bare array of entries; the format is in docs/agent/knowledge.md.
#include "agent/knowledge.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "agent/rewrite.h"
#include "support/diagnostic.h"

namespace argus::agent {

namespace fs = std::filesystem;

namespace {

// The fields an entry may have: a misspelt key is an error, not silently ignored.
const std::set<std::string>& knownFields() {
  static const std::set<std::string> fields = {"name", "kind", "summary", "requires", "forbids", "diagnostics",
                                               "rewrite", "alternatives", "prompt", "invariants", "expected_effect",
                                               "prior", "constraints", "alternatives_from"};
  return fields;
}

bool readStringList(const nlohmann::json& entry, const char* field, std::vector<std::string>& out, std::string& error) {
  if (!entry.contains(field)) return true;
  const nlohmann::json& v = entry[field];
  if (!v.is_array()) {
    error = std::string("\"") + field + "\" must be an array of strings";
    return false;
  }
  for (const nlohmann::json& s : v) {
    if (!s.is_string() || s.get<std::string>().empty()) {
      error = std::string("\"") + field + "\" must hold non-empty strings, found " + s.dump();
      return false;
    }
    out.push_back(s.get<std::string>());
  }
  return true;
}

bool readString(const nlohmann::json& entry, const char* field, bool required, std::string& out, std::string& error) {
  if (!entry.contains(field)) {
    if (required) error = std::string("missing \"") + field + "\"";
    return !required;
  }
  if (!entry[field].is_string()) {
    error = std::string("\"") + field + "\" must be a string, found " + entry[field].dump();
    return false;
  }
  out = entry[field].get<std::string>();
  if (required && out.empty()) {
    error = std::string("\"") + field + "\" is empty";
    return false;
  }
  return true;
}

bool isDiagnosticCode(const std::string& code) {
  return code.size() == 6 && code.rfind("AG", 0) == 0 &&
         std::all_of(code.begin() + 2, code.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Fills `out` from one JSON entry; `error` says what is wrong (without the location).
bool parseEntry(const nlohmann::json& j, KnowledgeEntry& out, std::string& error) {
  if (!j.is_object()) {
    error = "an entry must be an object, found " + j.dump();
    return false;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!knownFields().count(it.key())) {
      error = "unknown field \"" + it.key() + "\"";
      return false;
    }
  if (!readString(j, "name", true, out.name, error) || !readString(j, "kind", true, out.kind, error) ||
      !readString(j, "summary", true, out.summary, error) || !readString(j, "rewrite", false, out.rewrite, error) ||
      !readString(j, "prompt", false, out.prompt, error) ||
      !readString(j, "expected_effect", true, out.expectedEffect, error))
    return false;
  if (out.kind != "optimization" && out.kind != "repair") {
    error = "\"kind\" must be \"optimization\" or \"repair\", not \"" + out.kind + "\"";
    return false;
  }
  if (!readStringList(j, "requires", out.requires_, error) || !readStringList(j, "forbids", out.forbids, error) ||
      !readStringList(j, "diagnostics", out.diagnostics, error) ||
      !readStringList(j, "invariants", out.invariants, error))
    return false;
  for (const std::string& code : out.diagnostics)
    if (!isDiagnosticCode(code)) {
      error = "\"diagnostics\" holds \"" + code + "\", which is not a diagnostic code like AG2031";
      return false;
    } else if (!diagIdFromCode(code)) {
      error = "\"diagnostics\" holds \"" + code + "\", which no diagnostic has (see support/diagnostic_kinds.def)";
      return false;
    }
  if (out.kind == "repair" && out.diagnostics.empty()) {
    error = "a repair entry needs the \"diagnostics\" codes it repairs";
    return false;
  }
  if (!out.rewrite.empty()) {
    const std::vector<std::string> ids = rewriteIds();
    if (std::find(ids.begin(), ids.end(), out.rewrite) == ids.end()) {
      std::string known;
      for (const std::string& id : ids) known += (known.empty() ? "" : ", ") + id;
      error = "\"rewrite\" is \"" + out.rewrite + "\", which is not a rewrite (known: " + known + ")";
      return false;
    }
  }
  if (out.rewrite.empty() && out.prompt.empty()) {
    error = "an entry needs a \"rewrite\" id, a \"prompt\" for an LLM, or both";
    return false;
  }
  if (j.contains("alternatives")) {
    if (!j["alternatives"].is_array()) {
      error = "\"alternatives\" must be an array of argument objects";
      return false;
    }
    for (const nlohmann::json& a : j["alternatives"]) {
      if (!a.is_object() && !a.is_string()) {
        error = "each of \"alternatives\" must be an object of rewrite arguments (or \"auto\"), found " + a.dump();
        return false;
      }
      out.alternatives.push_back(a);
    }
    if (!out.alternatives.empty() && out.rewrite.empty()) {
      error = "\"alternatives\" are arguments of a rewrite, but the entry has no \"rewrite\"";
      return false;
    }
  }
  if (j.contains("alternatives_from")) {
    if (j["alternatives_from"] != "consts") {
      error = "\"alternatives_from\" can only be \"consts\" (every const parameter doubled and halved), found " +
              j["alternatives_from"].dump();
      return false;
    }
    if (out.rewrite != "set_params") {
      error = "\"alternatives_from\": \"consts\" needs \"rewrite\": \"set_params\"";
      return false;
    }
    out.alternativesFrom = "consts";
  }
  if (j.contains("prior")) {
    if (!j["prior"].is_number() || j["prior"].get<double>() < 0 || j["prior"].get<double>() > 1) {
      error = "\"prior\" must be a number from 0 to 1, found " + j["prior"].dump();
      return false;
    }
    out.prior = j["prior"].get<double>();
  }
  if (j.contains("constraints")) {
    if (!j["constraints"].is_object()) {
      error = "\"constraints\" must be an object";
      return false;
    }
    out.constraints = j["constraints"];
  }
  return true;
}

}  // namespace

const KnowledgeEntry* KnowledgeBase::find(const std::string& name) const {
  for (const KnowledgeEntry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<const KnowledgeEntry*> KnowledgeBase::applicable(const KernelFeatures& features,
                                                             const std::vector<std::string>& diagnosticCodes) const {
  const std::vector<std::string> tags = features.tags();
  auto has = [&](const std::string& t) { return std::find(tags.begin(), tags.end(), t) != tags.end(); };
  std::vector<const KnowledgeEntry*> out;
  for (const KnowledgeEntry& e : entries) {
    if (!std::all_of(e.requires_.begin(), e.requires_.end(), has)) continue;
    if (std::any_of(e.forbids.begin(), e.forbids.end(), has)) continue;
    if (!e.diagnostics.empty()) {
      bool seen = std::any_of(e.diagnostics.begin(), e.diagnostics.end(), [&](const std::string& c) {
        return std::find(diagnosticCodes.begin(), diagnosticCodes.end(), c) != diagnosticCodes.end();
      });
      if (!seen) continue;
    }
    out.push_back(&e);
  }
  return out;
}

std::optional<KnowledgeBase> loadKnowledgeBase(const std::string& dir, std::string& error) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    error = "knowledge base directory '" + dir + "' does not exist or is not a directory";
    return std::nullopt;
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json" && it->is_regular_file(ec)) files.push_back(it->path());
  if (ec) {
    error = "cannot list knowledge base directory '" + dir + "': " + ec.message();
    return std::nullopt;
  }
  std::sort(files.begin(), files.end());
  KnowledgeBase kb;
  std::map<std::string, std::string> seenIn;  // entry name -> file
  for (const fs::path& file : files) {
    const std::string fileName = file.filename().string();
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
    if (doc.is_discarded()) {
      // Re-parse with exceptions only to get the position of the syntax error.
      std::string detail = "invalid JSON";
      try {
        nlohmann::json ignored = nlohmann::json::parse(text.str(), nullptr, true, true);
        (void)ignored;
      } catch (const nlohmann::json::parse_error& e) {
        detail = e.what();
      }
      error = fileName + ": " + detail;
      return std::nullopt;
    }
    const nlohmann::json* list = &doc;
    if (doc.is_object()) {
      if (!doc.contains("entries")) {
        error = fileName + ": expected {\"entries\": [...]} or an array of entries";
        return std::nullopt;
      }
      list = &doc["entries"];
    }
    if (!list->is_array()) {
      error = fileName + ": \"entries\" must be an array";
      return std::nullopt;
    }
    for (size_t i = 0; i < list->size(); ++i) {
      const nlohmann::json& j = (*list)[i];
      KnowledgeEntry entry;
      std::string why;
      std::string label = "entry " + std::to_string(i);
      if (j.is_object() && j.contains("name") && j["name"].is_string()) label += " '" + j["name"].get<std::string>() + "'";
      if (!parseEntry(j, entry, why)) {
        error = fileName + ": " + label + ": " + why;
        return std::nullopt;
      }
      if (auto it = seenIn.find(entry.name); it != seenIn.end()) {
        error = fileName + ": " + label + ": the name is already used by an entry in " + it->second;
        return std::nullopt;
      }
      seenIn[entry.name] = fileName;
      kb.entries.push_back(std::move(entry));
    }
  }
  return kb;
}

std::string defaultKnowledgeDir() {
  if (const char* env = std::getenv("ARGUS_KNOWLEDGE_DIR"); env && *env) return env;
#ifdef ARGUS_SOURCE_DIR
  return std::string(ARGUS_SOURCE_DIR) + "/agent/knowledge";
#else
  return "agent/knowledge";
#endif
}

}  // namespace argus::agent
