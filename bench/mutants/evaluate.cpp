#include "bench/mutants/evaluate.h"

#include <cmath>
#include <ctime>
#include <random>
#include <regex>
#include <sstream>

#include "driver/compilation.h"
#include "driver/fixit_check.h"
#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "runtime/interp/random_run.h"
#include "support/source.h"

namespace argus::mutants {
namespace {

constexpr int64_t kDefaultSize = 64;

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// How many requirements of the module's kernels fail at `sizes`.
int failedRequirements(const ir::Module& module, const Sizes& sizes) {
  int failed = 0;
  for (const auto& fn : module.functions) {
    std::vector<int64_t> ordered;
    for (const std::string& name : fn->sizeNames) ordered.push_back(sizes.count(name) ? sizes.at(name) : kDefaultSize);
    for (const ir::Requirement& r : fn->requirements) {
      int64_t holds = 0;
      if (!r.condition.evaluate(ordered, holds) || !holds) ++failed;
    }
  }
  return failed;
}

// Random sizes moved up, one size at a time, to the nearest values that keep the
// kernels' requirements (TMA's K % 8 == 0), so that kernels which require
// alignment are still run at ragged sizes rather than only at their base sizes.
void keepRequirements(const ir::Module& module, Sizes& sizes) {
  for (int failing = failedRequirements(module, sizes); failing > 0;) {
    bool improved = false;
    for (auto& [name, value] : sizes) {
      for (int64_t d = 1; d < 64 && failing > 0; ++d) {
        Sizes moved = sizes;
        moved[name] = value + d;
        int now = failedRequirements(module, moved);
        if (now < failing) {
          value += d;
          failing = now;
          improved = true;
          break;
        }
      }
    }
    if (!improved) return;
  }
}

std::string sizesText(const Sizes& sizes) {
  std::string out;
  for (const auto& [name, value] : sizes) out += (out.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  return out;
}

// The file's '# run: --size NAME=VALUE ...' line, as argusc run --cpu reads it.
Sizes runLineSizes(const std::string& source) {
  Sizes out;
  std::smatch line;
  static const std::regex runLine(R"((^|\n)# run:([^\n]*))");
  if (!std::regex_search(source, line, runLine)) return out;
  std::string args = line[2];
  static const std::regex size(R"(--size\s+([A-Za-z_][A-Za-z0-9_]*)=([0-9]+))");
  for (auto it = std::sregex_iterator(args.begin(), args.end(), size); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = std::stoll((*it)[2]);
  return out;
}

// The file's '# run: ... -D NAME=VALUE' overrides (small persistent grids, say).
std::vector<std::pair<std::string, std::string>> runLineDefines(const std::string& source) {
  std::vector<std::pair<std::string, std::string>> out;
  std::smatch line;
  static const std::regex runLine(R"((^|\n)# run:([^\n]*))");
  if (!std::regex_search(source, line, runLine)) return out;
  std::string args = line[2];
  static const std::regex define(R"(-D\s*([A-Za-z_][A-Za-z0-9_]*)=([^\s]+))");
  for (auto it = std::sregex_iterator(args.begin(), args.end(), define); it != std::sregex_iterator(); ++it)
    out.emplace_back((*it)[1], (*it)[2]);
  return out;
}

CompileOptions optionsFor(const KernelUnderTest& kernel) {
  CompileOptions o;
  o.arch = kernel.arch;
  o.defines = kernel.defines;
  return o;
}

using RunResult = interp::RandomRun;

}  // namespace

struct Baseline {
  std::unique_ptr<Compilation> compilation;
  // runs[set][function]: the original at kernel.sizeSets[set], seed kSetSeed + set.
  std::vector<std::vector<RunResult>> runs;
};

namespace {

// Inputs at size set i are drawn with this seed, for the original and every mutant alike.
uint64_t setSeed(const EvalOptions& options, size_t set) { return options.seed * 1000 + set; }

std::optional<RunResult> runFunction(const ir::Function& fn, const Sizes& sizes, uint64_t seed,
                                     const EvalOptions& options) {
  interp::RandomRunOptions runOptions;
  runOptions.defaultSize = kDefaultSize;
  runOptions.maxElements = options.maxElements;
  runOptions.maxOpsPerBlock = options.maxOpsPerBlock;
  return interp::runOnRandomInputs(fn, sizes, seed, runOptions);
}

// Compares the mutant with the original at one size set; empty when they agree.
// `cached` holds the original's runs at these sizes, when known.
std::string distinguish(const ir::Module& original, const ir::Module& mutant, const Sizes& sizes, uint64_t seed,
                        const EvalOptions& options, const std::vector<RunResult>* cached = nullptr) {
  for (size_t f = 0; f < original.functions.size() && f < mutant.functions.size(); ++f) {
    std::optional<RunResult> fresh;
    const RunResult* base = nullptr;
    if (cached && f < cached->size()) {
      base = &(*cached)[f];
    } else {
      fresh = runFunction(*original.functions[f], sizes, seed, options);
      if (fresh) base = &*fresh;
    }
    if (!base || base->fault) continue;  // not a size the original runs at
    auto run = runFunction(*mutant.functions[f], sizes, seed, options);
    if (!run) continue;
    if (run->fault) return "at " + sizesText(sizes) + ": " + run->faultText;
    std::string diff = interp::firstDifference(*original.functions[f], *base, *run, "the original");
    if (!diff.empty()) return "at " + sizesText(sizes) + ": " + diff;
  }
  return "";
}

// The sizes a counterexample names in its 'launch' fact ("K = 17, program_id(0) = 1").
Sizes witnessSizes(const Diagnostic& d, const ir::Module& module, const Sizes& base) {
  Sizes out = base;
  for (const auto& fn : module.functions)
    for (const auto& [name, value] : counterexampleSizes(d, *fn)) out[name] = value;
  return out;
}

}  // namespace

KernelUnderTest prepare(const std::string& path, const std::string& source, const EvalOptions& options) {
  KernelUnderTest k;
  k.path = path;
  k.source = source;
  k.arch = declaredArch(source);
  if (k.arch.empty()) k.arch = "sm_90";
  k.defines = runLineDefines(source);
  auto baseline = std::make_shared<Baseline>();
  baseline->compilation = std::make_unique<Compilation>(SourceFile(path, source), optionsFor(k));
  Compilation& c = *baseline->compilation;
  c.check();
  for (const Diagnostic& d : c.diagnostics())
    if (d.severity == Severity::Error) k.baselineErrors.push_back(std::string(d.code()) + " " + d.message);
  if (!k.baselineErrors.empty()) {
    k.skipReason = "the unmutated kernel has errors";
    return k;
  }
  const ir::Module& module = c.ir();
  if (module.functions.empty()) {
    k.skipReason = "no kernel";
    return k;
  }
  k.baseSizes = runLineSizes(source);
  for (const auto& fn : module.functions)
    for (const std::string& name : fn->sizeNames)
      if (!k.baseSizes.count(name)) k.baseSizes[name] = kDefaultSize;
  // The base sizes, then random ones (ragged included) at which the original runs cleanly.
  std::mt19937_64 rng(options.seed);
  std::vector<Sizes> candidates = {k.baseSizes};
  for (int i = 0; i < options.sizeSets * 4; ++i) {
    Sizes s;
    for (const auto& [name, value] : k.baseSizes) {
      // Up to a quarter past the base sizes: ragged edges, and no run much dearer than the base one.
      int64_t hi = std::max<int64_t>(value + value / 4, 2);
      s[name] = std::uniform_int_distribution<int64_t>(1, hi)(rng);
    }
    keepRequirements(module, s);
    candidates.push_back(s);
  }
  for (const Sizes& s : candidates) {
    if (static_cast<int>(k.sizeSets.size()) > options.sizeSets) break;
    std::vector<RunResult> runs;
    bool clean = true;
    for (const auto& fn : module.functions) {
      auto r = runFunction(*fn, s, setSeed(options, k.sizeSets.size()), options);
      if (!r || r->fault) { clean = false; break; }
      runs.push_back(std::move(*r));
    }
    if (!clean) continue;
    k.sizeSets.push_back(s);
    baseline->runs.push_back(std::move(runs));
  }
  if (k.sizeSets.empty()) k.skipReason = "the unmutated kernel faults or is too large at every size tried";
  k.baseline = baseline;
  return k;
}

Verdict evaluate(const KernelUnderTest& kernel, const std::string& mutantSource, const EvalOptions& options) {
  Verdict v;
  Compilation mutant(SourceFile(kernel.path, mutantSource), optionsFor(kernel));
  // Front-end errors first: a mutant sema rejects is not a program.
  mutant.sema();
  for (const Diagnostic& d : mutant.diagnostics()) {
    if (d.severity != Severity::Error) continue;
    v.rejected = true;
    v.rejectedBy = std::string(d.code()) + " " + d.message;
    return v;
  }
  // CPU time of this thread: the machine may be shared, and wall time would measure the others.
  double start = threadCpuMs();
  mutant.check();
  v.checkMs = threadCpuMs() - start;
  const Diagnostic* firstError = nullptr;
  for (const Diagnostic& d : mutant.diagnostics()) {
    if (d.severity == Severity::Error) {
      v.errorCodes.push_back(d.code());
      if (!firstError) firstError = &d;
    } else if (d.severity == Severity::Warning) {
      v.warningCodes.push_back(d.code());
    }
  }
  if (firstError) {
    LineCol at = mutant.source().lineCol(firstError->range.begin);
    v.firstError = std::string(firstError->code()) + " " + std::to_string(at.line) + ":" + std::to_string(at.column) +
                   " " + firstError->message;
  }
  const ir::Module& base = kernel.baseline->compilation->ir();
  const ir::Module& mutated = mutant.ir();
  if (mutated.functions.size() != base.functions.size()) {
    // The checker's errors removed a kernel from the IR: judge the mutant without them.
    v.evidence = "not run: the mutant's IR lacks a kernel";
    return v;
  }
  for (size_t set = 0; set < kernel.sizeSets.size(); ++set) {
    std::string diff =
        distinguish(base, mutated, kernel.sizeSets[set], setSeed(options, set), options, &kernel.baseline->runs[set]);
    if (!diff.empty()) {
      v.distinguishable = true;
      v.evidence = diff;
      break;
    }
  }
  if (firstError) {
    Sizes at = witnessSizes(*firstError, mutated, kernel.baseSizes);
    v.witnessSizes = sizesText(at);
    v.witnessReplayed = !distinguish(base, mutated, at, options.seed + 1000, options).empty();
  }
  return v;
}

}  // namespace argus::mutants
