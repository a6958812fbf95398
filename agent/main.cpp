// argus-agent: optimizes an Argus kernel for a task (plan -> rewrite -> check
// -> compile -> validate -> measure -> remember) and reports what it found.
// Exit status: 0 a valid incumbent was found, 1 the run found nothing valid
// (or could not finish), 2 bad usage or unreadable inputs.
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/llm.h"
#include "agent/loop.h"
#include "agent/memory.h"
#include "agent/report.h"
#include "agent/task.h"

#ifndef ARGUS_VERSION
#define ARGUS_VERSION "0.1.0"
#endif

namespace {

using namespace argus::agent;

constexpr const char* kUsage = R"(usage: argus-agent run TASK.json [options]
       argus-agent memory list|show|export ...   (the experience memory; argus-agent memory --help)

Optimizes the task's kernel: every candidate is checked, compiled, validated
against the original on random inputs and timed (on the GPU, or by the cost
model without one); only valid candidates can become the best.

run options:
  --budget N          candidates to evaluate, the baseline included (default: the task's budget)
  --memory DB         experience memory (SQLite file) to learn from and add to (default:
                      $ARGUS_AGENT_MEMORY, else ./argus-agent-memory.db; ':memory:' keeps none)
  --out DIR           report directory (default: ./agent-report): report.md, report.json,
                      speed.png, best.ag
  --seed S            planner and input seed (default: 1)
  --llm CONFIG.json   use an LLM for some rewrites (default: ARGUS_LLM_* environment, if set)
  --no-llm            ignore the ARGUS_LLM_* environment
  --no-gpu            validate on the CPU interpreter and rank with the cost model only
  --knowledge DIR     knowledge base directory (default: the one shipped with Argus)
  --quiet             print only the final summary
  -h, --help          print this help and exit
  --version           print the version and exit
)";

int usageError(const std::string& message) {
  std::cerr << "argus-agent: error: " << message << "\n"
            << "argus-agent: run 'argus-agent --help' for usage\n";
  return 2;
}

std::optional<long long> parseInteger(const std::string& text, long long low, long long high) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < low || value > high) return std::nullopt;
  return value;
}

struct RunArgs {
  std::string taskPath, memoryPath, outDir = "agent-report", llmPath, knowledgeDir;
  int budget = 0;
  uint64_t seed = 1;
  bool noGpu = false, noLlm = false, quiet = false;
};

// Parses the `run` arguments; returns an exit status when it should stop.
std::optional<int> parseRunArgs(const std::vector<std::string>& args, RunArgs& run) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--budget") {
      auto text = value();
      if (!text) return usageError("--budget needs a number of candidates");
      auto n = parseInteger(*text, 1, 100000);
      if (!n) return usageError("--budget expects a whole number from 1 to 100000, got '" + *text + "'");
      run.budget = static_cast<int>(*n);
    } else if (a == "--seed") {
      auto text = value();
      if (!text) return usageError("--seed needs a number");
      auto n = parseInteger(*text, 0, (1LL << 62));
      if (!n) return usageError("--seed expects a non-negative whole number, got '" + *text + "'");
      run.seed = static_cast<uint64_t>(*n);
    } else if (a == "--memory" || a == "--out" || a == "--llm" || a == "--knowledge") {
      auto text = value();
      if (!text || text->empty()) return usageError(a + " needs a path");
      (a == "--memory" ? run.memoryPath : a == "--out" ? run.outDir : a == "--llm" ? run.llmPath : run.knowledgeDir) = *text;
    } else if (a == "--no-gpu") {
      run.noGpu = true;
    } else if (a == "--no-llm") {
      run.noLlm = true;
    } else if (a == "--quiet" || a == "-q") {
      run.quiet = true;
    } else if (!a.empty() && a[0] == '-') {
      return usageError("unknown option '" + a + "' for 'run'");
    } else if (run.taskPath.empty()) {
      run.taskPath = a;
    } else {
      return usageError("one task file at a time (got '" + run.taskPath + "' and '" + a + "')");
    }
  }
  if (run.taskPath.empty()) return usageError("'run' needs a task file: argus-agent run TASK.json");
  if (!run.llmPath.empty() && run.noLlm) return usageError("--llm and --no-llm contradict each other");
  return std::nullopt;
}

int runCommand(const std::vector<std::string>& args) {
  RunArgs run;
  if (auto status = parseRunArgs(args, run)) return *status;

  std::string error;
  auto task = loadTask(run.taskPath, error);
  if (!task) {
    std::cerr << "argus-agent: error: " << run.taskPath << ": " << error << "\n";
    return 2;
  }
  if (run.memoryPath.empty()) {
    const char* fromEnvironment = std::getenv("ARGUS_AGENT_MEMORY");
    run.memoryPath = fromEnvironment && *fromEnvironment ? fromEnvironment : "argus-agent-memory.db";
  }
  auto memory = ExperienceMemory::open(run.memoryPath, error);
  if (!memory) {
    std::cerr << "argus-agent: error: cannot open the memory " << run.memoryPath << ": " << error << "\n";
    return 2;
  }
  std::optional<LlmConfig> llmConfig;
  if (!run.llmPath.empty()) {
    llmConfig = llmConfigFromFile(run.llmPath, error);
    if (!llmConfig) {
      std::cerr << "argus-agent: error: " << run.llmPath << ": " << error << "\n";
      return 2;
    }
  } else if (!run.noLlm) {
    llmConfig = llmConfigFromEnvironment();
  }
  std::unique_ptr<LlmProvider> llm;
  if (llmConfig) llm = makeOpenAiCompatibleProvider(*llmConfig);

  LoopOptions options;
  options.budget = run.budget;
  options.seed = run.seed;
  options.useGpu = !run.noGpu;
  options.knowledgeDir = run.knowledgeDir;
  options.memory = memory.get();
  options.llm = llm.get();
  if (!run.quiet) options.progress = [](const std::string& line) { std::cout << line << std::endl; };
  // The report so far after every candidate: a run that is stopped still leaves one.
  options.afterCandidate = [&run](const LoopResult& partial) {
    std::string ignored;
    writeReport(partial, run.outDir, ignored);
  };
  if (!run.quiet) {
    std::cout << "argus-agent: task " << task->name << " (" << task->kernelPath << "), budget "
              << (run.budget > 0 ? run.budget : task->candidateBudget) << " candidates"
              << (llm ? ", LLM " + llm->name() : std::string(", offline")) << "\n";
  }

  LoopResult result = runAgentLoop(*task, options);
  if (!result.ok) {
    std::cerr << "argus-agent: error: " << result.error << "\n";
    return result.candidates.empty() ? 2 : 1;
  }
  if (!writeReport(result, run.outDir, error)) {
    std::cerr << "argus-agent: error: " << error << "\n";
    return 1;
  }
  if (!result.incumbent) {
    std::cout << "argus-agent: no valid candidate among " << result.candidates.size() << "; report in " << run.outDir
              << "/report.md\n";
    return 1;
  }
  const auto& best = result.candidates[*result.incumbent];
  std::cout << "argus-agent: best #" << best.index << " (" << best.candidate.action << ")";
  if (best.speedup) std::cout << ", " << *best.speedup << "x over the baseline";
  if (best.evaluation.timeMs) std::cout << ", " << *best.evaluation.timeMs << " ms (" << best.evaluation.timeSource << ")";
  std::cout << " after " << result.candidates.size() << " candidates; report in " << run.outDir << "/report.md\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usageError("no command (expected 'run' or 'memory')");
  const std::string command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "-h" || command == "--help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "argus-agent " << ARGUS_VERSION << "\n";
    return 0;
  }
  if (command == "run") return runCommand(rest);
  if (command == "memory") {
    std::string out, err;
    int status = runMemoryCommand(rest, out, err);
    std::cout << out;
    std::cerr << err;
    return status;
  }
  return usageError("unknown command '" + command + "' (expected 'run' or 'memory')");
}
