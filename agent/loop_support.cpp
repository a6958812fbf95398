// The loop's small outward-facing pieces: result accessors, the task
// features stored with every case, and the progress line.
#include <cstdio>
#include <regex>

#include "agent/loop.h"

namespace argus::agent {

namespace {

std::string formatNumber(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

}  // namespace

std::optional<double> LoopResult::baselineMs() const {
  if (candidates.empty() || candidates[0].evaluation.verdict != Verdict::Ok) return std::nullopt;
  return candidates[0].evaluation.timeMs;
}
std::optional<double> LoopResult::bestMs() const {
  if (!incumbent) return std::nullopt;
  return candidates[*incumbent].evaluation.timeMs;
}
std::optional<double> LoopResult::bestSpeedup() const {
  if (!incumbent) return std::nullopt;
  return candidates[*incumbent].speedup;
}
std::optional<double> LoopResult::bestTflops() const {
  if (!incumbent) return std::nullopt;
  return candidates[*incumbent].evaluation.tflops;
}

nlohmann::json taskFeaturesFor(const Task& task, const KernelFeatures& baseline) {
  nlohmann::json features = nlohmann::json::object();
  std::string op = baseline.hasDot || !baseline.kernelName.empty() ? baseline.kernelName : "kernel";
  for (const auto& tag : baseline.tags()) {
    if (tag == "dot" || tag == "gemm") op = "gemm";
  }
  std::smatch match;
  static const std::regex tensorDtype(R"(Tensor\[\s*(\w+))");
  std::string dtype = std::regex_search(task.kernelSource, match, tensorDtype) ? match[1].str() : "unknown";
  features["op"] = op;
  features["dtype"] = dtype;
  features["family"] = op + "/" + dtype;
  features["kernel"] = baseline.kernelName;
  features["sizes"] = nlohmann::json(task.measure);
  features["tags"] = baseline.tags();
  return features;
}

std::string progressLine(const CandidateRecord& record, const std::optional<CandidateRecord>& incumbent) {
  std::string line = "#" + std::to_string(record.index) + " " + record.candidate.action;
  if (!record.candidate.actionArgs.is_null() && !record.candidate.actionArgs.empty())
    line += " " + record.candidate.actionArgs.dump();
  if (record.parent) line += " <- #" + std::to_string(*record.parent);
  if (record.origin == "replay" || record.origin == "llm") line += " (" + record.origin + ")";
  const Evaluation& e = record.evaluation;
  line += ": " + std::string(verdictName(e.verdict));
  if (e.verdict == Verdict::Ok && e.timeMs) {
    line += ", " + formatNumber(*e.timeMs, 4) + " ms (" + e.timeSource + ")";
    if (record.speedup) line += ", " + formatNumber(*record.speedup, 2) + "x";
  } else {
    std::string codes;
    for (const auto& code : e.diagnosticCodes) {
      if (codes.find(code) == std::string::npos) codes += (codes.empty() ? "" : ",") + code;
    }
    if (!codes.empty()) line += " [" + codes + "]";
    if (!e.detail.empty()) line += " " + e.detail;
  }
  if (incumbent) {
    line += " | incumbent #" + std::to_string(incumbent->index);
    if (incumbent->speedup) line += " " + formatNumber(*incumbent->speedup, 2) + "x";
  } else {
    line += " | no valid candidate yet";
  }
  return line;
}

}  // namespace argus::agent
