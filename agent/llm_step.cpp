// The LLM path of the loop: a prompt rebuilt from the context tiers, one
// provider call, and the kernel cut out of the reply. The reply is never run
// on the host: the loop only parses, checks, compiles and validates it.
#include <algorithm>
#include <sstream>

#include "agent/loop.h"

namespace argus::agent {

namespace {

std::string sizesText(const Sizes& sizes) {
  std::string text;
  for (const auto& [name, value] : sizes) text += (text.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  return text;
}

std::string fenced(const std::string& source) { return "```python\n" + source + (source.ends_with('\n') ? "" : "\n") + "```\n"; }

std::string taskText(const Task& task) {
  std::ostringstream out;
  out << "Task: make the kernel below faster on " << task.arch << " without changing what it computes.\n";
  out << "The result must keep the kernel's name and parameter list (tensors, dtypes, shapes) exactly;\n";
  out << "it is checked by the Argus checker, compiled, and compared with the original on random inputs at:";
  for (const auto& shape : task.validate) out << " (" << sizesText(shape) << ")";
  out << ", and at shapes derived from your kernel's own tile sizes (at least two tiles per grid axis, STAGES + 1 "
         "loop trips, ragged edges, each size stretched toward its measured value), with fresh random inputs "
         "every time and outputs poisoned beforehand";
  out << "\nSpeed is measured at " << sizesText(task.measure) << ", where a GPU also compares the result with "
         "the original kernel's.\n";
  out << "Answer with the complete new kernel in one ```python code block.\n";
  return out.str();
}

std::string number(double value) {
  std::ostringstream out;
  out.precision(3);
  out << value;
  return out.str();
}

std::string codesText(const std::vector<std::string>& codes) {
  std::string text;
  for (const auto& code : codes) text += " " + code;
  return text;
}

std::string caseText(const Case& c) {
  std::ostringstream out;
  out << "case " << c.id << " (task " << c.task << "): " << c.action;
  if (c.actionArgs.is_object() && !c.actionArgs.empty()) out << " " << c.actionArgs.dump();
  out << " -> " << (c.bucket.empty() ? "unknown" : c.bucket);
  if (c.speedup) out << ", " << number(*c.speedup) << "x over the baseline";
  out << ", reward " << number(c.reward);
  if (!c.correct && !c.verdict.empty()) out << "; verdict " << c.verdict;
  if (!c.correct && !c.verdictDetail.empty()) out << ": " << c.verdictDetail;
  if (!c.invalidated.empty()) out << "; once judged correct, later found wrong: " << c.invalidated;
  if (!c.diagnosticCodes.empty()) out << "; diagnostics:" << codesText(c.diagnosticCodes);
  out << "\n";
  return out.str();
}

std::string attemptText(const AttemptSummary& a) {
  std::ostringstream out;
  out << "#" << a.index << " " << a.origin << " " << a.action;
  if (a.actionArgs.is_object() && !a.actionArgs.empty()) out << " " << a.actionArgs.dump();
  if (a.parent) out << " <- #" << *a.parent;
  out << ": " << a.verdict;
  if (a.timeMs) out << ", " << number(*a.timeMs) << " ms";
  if (a.speedup) out << ", " << number(*a.speedup) << "x over the baseline";
  out << ", reward " << number(a.reward);
  if (a.becameIncumbent) out << ", new best";
  if (!a.diagnosticCodes.empty()) out << "; diagnostics:" << codesText(a.diagnosticCodes);
  if (a.verdict != "ok" && !a.reason.empty()) out << "; why: " << a.reason;
  out << "\n";
  return out.str();
}

// Newest first, so that a truncated trajectory loses the oldest attempts.
std::string trajectoryText(const std::vector<AttemptSummary>& trajectory) {
  std::string text = "Your trajectory in this run (newest first; reward in [0, 1], 0.5 = no change in speed):\n";
  for (auto it = trajectory.rbegin(); it != trajectory.rend(); ++it) text += attemptText(*it);
  return text;
}

std::string lastFailureText(const LlmStepInput& input) {
  const AttemptSummary& a = *input.lastLlmFailure;
  std::string text = "Your own last attempt that failed (#" + std::to_string(a.index) + ", verdict " + a.verdict + "):\n";
  if (!a.reason.empty()) text += "Why: " + a.reason + "\n";
  if (input.lastLlmFailureDiagnostics.is_array() && !input.lastLlmFailureDiagnostics.empty())
    text += "Its diagnostics (JSON):\n" + input.lastLlmFailureDiagnostics.dump(1) + "\n";
  if (!input.lastLlmFailureSource.empty()) text += "Its code:\n" + fenced(input.lastLlmFailureSource);
  return text;
}

std::string entryText(const KnowledgeEntry& entry) {
  std::ostringstream out;
  out << "Technique " << entry.name << ": " << entry.summary << "\n";
  if (!entry.prompt.empty()) out << entry.prompt << "\n";
  if (!entry.invariants.empty()) {
    out << "Keep provable:";
    for (const auto& invariant : entry.invariants) out << " " << invariant << ";";
    out << "\n";
  }
  if (!entry.expectedEffect.empty()) out << "Expected effect: " << entry.expectedEffect << "\n";
  return out.str();
}

}  // namespace

std::string llmSystemPrompt() {
  return "You optimize GPU kernels written in Argus, a tile-based Python-like language compiled to PTX. "
         "You change only the kernel body and its `const` parameters, keep the signature, and answer with "
         "the whole kernel in one fenced code block. Diagnostics from the Argus checker name what a previous "
         "attempt got wrong; fix those first.";
}

std::vector<ContextItem> llmContextItems(const LlmStepInput& input) {
  std::vector<ContextItem> items;
  if (input.task) items.push_back({Tier::Hot, "task", taskText(*input.task), 3});
  items.push_back({Tier::Hot, "incumbent", "The current best kernel:\n" + fenced(input.incumbentSource), 2});
  if (input.latestDiagnostics.is_array() && !input.latestDiagnostics.empty()) {
    items.push_back({Tier::Hot, "diagnostics",
                     "Diagnostics of the latest attempt (JSON):\n" + input.latestDiagnostics.dump(1) + "\n", 1});
  }
  if (input.lastLlmFailure) items.push_back({Tier::Hot, "your last failure", lastFailureText(input), 0.5});
  if (!input.trajectory.empty()) items.push_back({Tier::Warm, "trajectory", trajectoryText(input.trajectory), 20});
  if (!input.latestSource.empty()) {
    items.push_back({Tier::Warm, "failed attempt", "The latest attempt, which failed:\n" + fenced(input.latestSource), 10});
  }
  double casePriority = 5;
  for (const auto& c : input.warmCases) {
    items.push_back({Tier::Warm, "case " + std::to_string(c.id), caseText(c), casePriority});
    casePriority = std::max(0.0, casePriority - 0.1);
  }
  double failurePriority = 4;
  if (!input.failureCases.empty()) {
    std::string text = "Failure modes seen on similar tasks (what was tried, and why it was rejected):\n";
    for (const auto& c : input.failureCases) text += caseText(c);
    items.push_back({Tier::Warm, "failure modes", text, failurePriority});
  }
  double entryPriority = 5;
  for (const KnowledgeEntry* entry : input.entries) {
    if (!entry) continue;
    items.push_back({Tier::Cold, "kb: " + entry->name, entryText(*entry), entryPriority});
    entryPriority = std::max(0.0, entryPriority - 0.1);
  }
  return items;
}

LlmStepResult runLlmStep(LlmProvider& provider, const LlmStepInput& input) {
  LlmStepResult result;
  const std::string system = llmSystemPrompt();
  TokenBudget budget = input.budget;
  budget.system = estimateTokens(system);
  result.prompt = buildPrompt(llmContextItems(input), budget);
  if (!result.prompt.ok) {
    result.error = "the prompt does not fit: " + result.prompt.error;
    return result;
  }
  result.reply = provider.complete({{"system", system}, {"user", result.prompt.text}});
  if (!result.reply.ok) {
    result.error = "the LLM call failed: " + result.reply.error;
    return result;
  }
  auto source = extractKernelSource(result.reply.content);
  if (!source) {
    result.error = "the LLM reply holds no kernel (no code block with @kernel)";
    return result;
  }
  Candidate candidate;
  candidate.source = *source;
  candidate.action = input.entries.empty() || !input.entries.front() ? "llm" : "llm:" + input.entries.front()->name;
  candidate.description = "LLM rewrite (" + provider.name() + ")";
  result.candidate = std::move(candidate);
  return result;
}

}  // namespace argus::agent
