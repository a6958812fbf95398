#include "agent/report.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace argus::agent {

namespace {

using nlohmann::json;

json optionalNumber(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

std::string fixed(const std::optional<double>& value, int digits, const std::string& suffix = "") {
  if (!value) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, *value);
  return buffer + suffix;
}

// A table cell: pipes and newlines would break the Markdown table.
std::string cell(std::string text) {
  for (char& c : text) {
    if (c == '|' || c == '\n' || c == '\r') c = ' ';
  }
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  return text;
}

std::optional<double> peerFraction(const LoopResult& result) {
  auto tflops = result.bestTflops();
  if (!tflops || !result.task.peerTflops || *result.task.peerTflops <= 0) return std::nullopt;
  return *tflops / *result.task.peerTflops;
}

int validCount(const LoopResult& result) {
  int valid = 0;
  for (const auto& record : result.candidates) valid += record.evaluation.verdict == Verdict::Ok;
  return valid;
}

bool writeText(const std::filesystem::path& path, const std::string& text, std::string& error) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    error = "cannot write " + path.string();
    return false;
  }
  return true;
}

}  // namespace

json reportJson(const LoopResult& result) {
  json report;
  const Task& task = result.task;
  report["task"] = {{"name", task.name},
                    {"kernel", task.kernelPath},
                    {"measure", json(task.measure)},
                    {"validate", json(task.validate)},
                    {"flops", task.flopsExpr},
                    {"budget", task.candidateBudget},
                    {"peer", task.peerName.empty() ? json(nullptr)
                                                   : json{{"name", task.peerName}, {"tflops", optionalNumber(task.peerTflops)}}}};
  report["run_id"] = result.runId;
  report["ok"] = result.ok;
  if (!result.error.empty()) report["error"] = result.error;
  report["time_source"] = result.timeSource;
  report["gpu"] = result.usedGpu ? json(result.gpuName) : json(nullptr);
  report["summary"] = {{"candidates", result.candidates.size()},
                       {"valid", validCount(result)},
                       {"invalid", static_cast<int>(result.candidates.size()) - validCount(result)},
                       {"baseline_ms", optionalNumber(result.baselineMs())},
                       {"best_ms", optionalNumber(result.bestMs())},
                       {"best_speedup", optionalNumber(result.bestSpeedup())},
                       {"best_tflops", optionalNumber(result.bestTflops())},
                       {"peer_fraction", optionalNumber(peerFraction(result))},
                       {"incumbent", result.incumbent ? json(*result.incumbent) : json(nullptr)},
                       {"evaluations_to_best", result.evaluationsToBest ? json(*result.evaluationsToBest) : json(nullptr)},
                       {"replayed", result.replayed},
                       {"llm_steps", result.llmSteps},
                       {"llm_failures", result.llmFailures}};
  json candidates = json::array();
  for (const auto& record : result.candidates) {
    const Evaluation& e = record.evaluation;
    candidates.push_back({{"index", record.index},
                          {"parent", record.parent ? json(*record.parent) : json(nullptr)},
                          {"origin", record.origin},
                          {"action", record.candidate.action},
                          {"args", record.candidate.actionArgs},
                          {"description", record.candidate.description},
                          {"verdict", verdictName(e.verdict)},
                          {"detail", e.detail},
                          {"diagnostic_codes", e.diagnosticCodes},
                          {"errors", e.errorCount},
                          {"warnings", e.warningCount},
                          {"time_ms", optionalNumber(e.timeMs)},
                          {"time_source", e.timeSource},
                          {"model_time_ms", optionalNumber(e.modelTimeMs)},
                          {"tflops", optionalNumber(e.tflops)},
                          {"speed_ratio", optionalNumber(record.speedRatio)},
                          {"speedup", optionalNumber(record.speedup)},
                          {"reward", record.reward},
                          {"became_incumbent", record.becameIncumbent},
                          {"incumbent_speedup", optionalNumber(record.incumbentSpeedup)},
                          {"case_id", record.caseId},
                          {"state_hash", record.stateHash}});
  }
  report["candidates"] = std::move(candidates);
  report["notes"] = result.notes;
  return report;
}

// The best program as written to best.ag: a header that says where it comes
// from, because the rewrites keep the starting kernel's comments ("no shared
// memory, no tensor cores"), which the code below them may no longer match.
std::string bestProgramText(const LoopResult& result) {
  if (!result.incumbent) return "";
  const CandidateRecord& best = result.candidates[*result.incumbent];
  std::vector<std::string> steps;
  for (std::optional<int> at = best.index; at && *at > 0 && *at < static_cast<int>(result.candidates.size());
       at = result.candidates[static_cast<size_t>(*at)].parent)
    steps.insert(steps.begin(), result.candidates[static_cast<size_t>(*at)].candidate.action);
  std::string lineage;
  for (const std::string& step : steps) lineage += (lineage.empty() ? "" : ", ") + step;
  std::string header = "# argus-agent, task " + result.task.name + ", candidate #" + std::to_string(best.index) + ": " +
                       std::filesystem::path(result.task.kernelPath).filename().string() + (lineage.empty() ? "" : " rewritten by " + lineage) +
                       ".\n# The comments below are the starting kernel's and may not describe this code.\n";
  return header + best.candidate.source;
}

std::string reportMarkdown(const LoopResult& result) {
  std::ostringstream md;
  const Task& task = result.task;
  md << "# Argus agent report: " << task.name << "\n\n";
  if (!result.error.empty()) md << "**The run failed:** " << result.error << "\n\n";
  md << "| | |\n|---|---|\n";
  md << "| kernel | `" << cell(task.kernelPath) << "` |\n";
  md << "| run | " << result.runId << " |\n";
  md << "| timing | " << (result.timeSource == "gpu" ? "measured on " + cell(result.gpuName) : "cost model (no GPU)")
     << " |\n";
  md << "| candidates | " << result.candidates.size() << " (" << validCount(result) << " valid) |\n";
  md << "| baseline | " << fixed(result.baselineMs(), 4, " ms") << " |\n";
  md << "| best | " << fixed(result.bestMs(), 4, " ms");
  if (result.incumbent) md << " (#" << *result.incumbent << ")";
  md << " |\n";
  md << "| speedup | " << fixed(result.bestSpeedup(), 2, "x") << " |\n";
  if (result.bestTflops()) md << "| TFLOP/s | " << fixed(result.bestTflops(), 1) << " |\n";
  if (auto fraction = peerFraction(result))
    md << "| of " << cell(task.peerName) << " | " << fixed(*fraction * 100, 1, " %") << " |\n";
  if (result.evaluationsToBest) md << "| evaluations to best | " << *result.evaluationsToBest << " |\n";
  if (result.replayed) md << "| replayed from memory | " << result.replayed << " |\n";
  if (result.llmSteps) md << "| LLM steps | " << result.llmSteps << " (" << result.llmFailures << " without a kernel) |\n";
  md << "\n![speed over candidates](speed.png)\n\n## Candidates\n\n";
  md << "| # | from | action | verdict | time (ms) | speedup | reward | incumbent |\n";
  md << "|---|---|---|---|---|---|---|---|\n";
  for (const auto& record : result.candidates) {
    const Evaluation& e = record.evaluation;
    std::string action = record.candidate.action;
    if (!record.candidate.actionArgs.is_null() && !record.candidate.actionArgs.empty())
      action += " " + record.candidate.actionArgs.dump();
    if (record.origin == "replay" || record.origin == "llm") action += " (" + record.origin + ")";
    std::string verdict = verdictName(e.verdict);
    if (e.verdict != Verdict::Ok) {
      for (const auto& code : e.diagnosticCodes) verdict += " " + code;
      if (!e.detail.empty()) verdict += ": " + e.detail;
    }
    md << "| " << record.index << " | " << (record.parent ? "#" + std::to_string(*record.parent) : "-") << " | `"
       << cell(action) << "` | " << cell(verdict) << " | " << fixed(e.timeMs, 4) << " | " << fixed(record.speedup, 2, "x")
       << " | " << fixed(record.reward, 2) << " | " << (record.becameIncumbent ? "**new**" : "") << " |\n";
  }
  if (!result.notes.empty()) {
    md << "\n## Notes\n\n";
    for (const auto& line : result.notes) md << "- " << line << "\n";
  }
  if (result.incumbent) {
    const auto& best = result.candidates[*result.incumbent];
    const std::string text = bestProgramText(result);
    md << "\n## Best program (#" << best.index << ", `best.ag`)\n\n```python\n" << text;
    if (!text.ends_with('\n')) md << "\n";
    md << "```\n";
  }
  return md.str();
}

bool writeReport(const LoopResult& result, const std::string& dir, std::string& error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    error = "cannot create the report directory " + dir + ": " + ec.message();
    return false;
  }
  std::filesystem::path base(dir);
  if (!writeText(base / "report.md", reportMarkdown(result), error)) return false;
  if (!writeText(base / "report.json", reportJson(result).dump(2) + "\n", error)) return false;
  if (!writeSpeedPlot(result, (base / "speed.png").string(), error)) return false;
  if (result.incumbent && !writeText(base / "best.ag", bestProgramText(result), error))
    return false;
  return true;
}

}  // namespace argus::agent
