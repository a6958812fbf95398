// How the experience memory presents Cases to people and tools: outcome
// buckets, the JSON form of a Case and the Markdown journal.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <system_error>
#include <filesystem>

#include "agent/memory.h"
#include "agent/memory_internal.h"

namespace argus::agent {

std::string outcomeBucket(std::optional<double> speedRatio, bool valid) {
  if (!valid) return "invalid";
  if (!speedRatio) return "baseline";  // the starting program has nothing to be faster than
  const double ratio = *speedRatio;
  if (std::isnan(ratio)) return "invalid";  // a broken measurement says nothing about speed
  if (ratio >= 1.05) return "effective";
  if (ratio >= 1.0) return "partial";
  if (ratio >= 0.85) return "ineffective";
  return "negative";
}

namespace {

nlohmann::json optionalJson(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

// Journal fields sit on one line; a newline in a name must not break the list.
std::string oneLine(const std::string& text) {
  std::string out = text;
  for (char& ch : out)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return out;
}

std::string joinCodes(const std::vector<std::string>& codes) {
  if (codes.empty()) return "none";
  std::string out;
  for (const std::string& code : codes) out += (out.empty() ? "" : ", ") + oneLine(code);
  return out;
}

std::string verdict(const Case& c) {
  std::string bucket = c.bucket.empty() ? outcomeBucket(c.speedRatio, c.compiled && c.correct) : c.bucket;
  if (!c.compiled) return bucket + " (did not compile)";
  if (!c.correct) return bucket + " (compiled, not correct)";
  return bucket + " (compiled, correct)";
}

std::string speedLine(const Case& c) {
  std::string line;
  if (c.speedRatio) line += memory_detail::formatNumber(c.speedRatio) + "x over the predecessor";
  if (c.speedup) line += (line.empty() ? "" : ", ") + memory_detail::formatNumber(c.speedup) + "x over the baseline";
  if (c.timeMs) {
    line += (line.empty() ? "" : "; ") + memory_detail::formatNumber(c.timeMs, 4) + " ms";
    line += " (" + (c.timeSource.empty() ? std::string("unknown source") : oneLine(c.timeSource)) +
            ", confidence " + memory_detail::formatNumber(c.confidence, 2) + ")";
  }
  return line.empty() ? "not measured" : line;
}

}  // namespace

nlohmann::json caseToJson(const Case& c) {
  nlohmann::json j = nlohmann::json::object();
  j["id"] = c.id;
  j["predecessor"] = c.predecessor ? nlohmann::json(*c.predecessor) : nlohmann::json(nullptr);
  j["runId"] = c.runId;
  j["task"] = c.task;
  j["taskFeatures"] = c.taskFeatures;
  j["stateHash"] = c.stateHash;
  j["action"] = c.action;
  j["actionArgs"] = c.actionArgs;
  j["diagnosticCodes"] = c.diagnosticCodes;
  j["diagnostics"] = c.diagnostics;
  j["compiled"] = c.compiled;
  j["correct"] = c.correct;
  j["timeMs"] = optionalJson(c.timeMs);
  j["timeSource"] = c.timeSource;
  j["speedRatio"] = optionalJson(c.speedRatio);
  j["speedup"] = optionalJson(c.speedup);
  j["bucket"] = c.bucket;
  j["confidence"] = c.confidence;
  j["reward"] = c.reward;
  j["source"] = c.source;
  j["createdAt"] = c.createdAt;
  j["verdict"] = c.verdict;
  j["verdictDetail"] = c.verdictDetail;
  j["evidence"] = c.evidence;
  j["invalidated"] = c.invalidated;
  return j;
}

namespace memory_detail {

std::string journalPathFor(const std::string& databasePath) { return databasePath + ".journal.md"; }

std::string dumpJson(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string formatNumber(std::optional<double> value, int precision) {
  if (!value) return "-";
  if (!std::isfinite(*value)) return std::isnan(*value) ? "nan" : (*value > 0 ? "inf" : "-inf");
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", precision, *value);
  return buffer;
}

bool isKnownBucket(const std::string& bucket) {
  return bucket == "effective" || bucket == "partial" || bucket == "ineffective" || bucket == "negative" ||
         bucket == "invalid" || bucket == "baseline";
}

std::string formatMarkdownEntry(const Case& c, bool withSource) {
  std::string entry = "## Case " + std::to_string(c.id) + ": " + oneLine(c.task) + ", " + oneLine(c.action) + "\n\n";
  entry += "- time: " + oneLine(c.createdAt) + (c.runId.empty() ? "" : " (run " + oneLine(c.runId) + ")") + "\n";
  entry += "- action: " + oneLine(c.action);
  if (c.actionArgs.is_object() && !c.actionArgs.empty()) entry += " " + oneLine(dumpJson(c.actionArgs));
  entry += "\n";
  entry += "- predecessor: " +
           (c.predecessor ? "case " + std::to_string(*c.predecessor) : std::string("none (a starting point)")) + "\n";
  entry += "- verdict: " + verdict(c) + "\n";
  if (!c.verdictDetail.empty() && c.verdict != "ok") entry += "- reason: " + oneLine(c.verdictDetail) + "\n";
  if (c.evidence.is_object() && c.evidence.contains("shapes") && c.evidence["shapes"].is_array()) {
    entry += "- validated: " + std::to_string(c.evidence["shapes"].size()) + " shape(s)";
    if (c.evidence.contains("seed")) entry += ", seed " + oneLine(dumpJson(c.evidence["seed"]));
    entry += "\n";
  }
  if (!c.invalidated.empty()) entry += "- found wrong later: " + oneLine(c.invalidated) + "\n";
  entry += "- speed: " + speedLine(c) + "\n";
  entry += "- reward: " + formatNumber(c.reward) + "\n";
  entry += "- diagnostics: " + joinCodes(c.diagnosticCodes) + "\n";
  if (!c.stateHash.empty()) entry += "- state: " + oneLine(c.stateHash) + "\n";
  if (withSource) {
    if (c.taskFeatures.is_object() && !c.taskFeatures.empty())
      entry += "- task features: " + oneLine(dumpJson(c.taskFeatures)) + "\n";
    // A fence longer than any backtick run inside keeps the program verbatim.
    size_t longestRun = 0, run = 0;
    for (char ch : c.source) {
      run = ch == '`' ? run + 1 : 0;
      longestRun = std::max(longestRun, run);
    }
    std::string fence(std::max<size_t>(3, longestRun + 1), '`');
    entry += "\n" + fence + "python\n" + c.source + (c.source.empty() || c.source.back() == '\n' ? "" : "\n") +
             fence + "\n";
  }
  return entry + "\n";
}

bool appendJournalEntry(const std::string& journalPath, const Case& c) {
  std::error_code ec;
  const bool isNew = !std::filesystem::exists(journalPath, ec) || std::filesystem::file_size(journalPath, ec) == 0;
  std::string text;
  if (isNew)
    text = "# Argus agent experience journal\n\nOne entry per attempt, appended as the agent records it; "
           "the database beside this file holds every field (`argus-agent memory show ID`).\n\n";
  text += formatMarkdownEntry(c, /*withSource=*/false);
  // One write in append mode, so that entries of two agents sharing the file stay whole.
  std::ofstream out(journalPath, std::ios::app | std::ios::binary);
  if (!out) return false;
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(out);
}

}  // namespace memory_detail
}  // namespace argus::agent
