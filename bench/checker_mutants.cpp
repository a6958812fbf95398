// Mutation testing of the checker: the yardstick for how well it generalizes
// beyond the bugs our own tests plant. Every kernel is mutated by the
// operators of bench/mutants/mutate.h; each mutant goes through the checker
// and through the CPU interpreter at several sizes with the same random
// inputs as the original. Reported (never asserted here):
//   - mutants the interpreter distinguishes from the original (a fault, or a
//     different output): the denominator;
//   - the share of those the checker flags with an error, and with a witness
//     that replays (the interpreter at the counterexample's sizes shows it);
//   - errors on unmutated kernels (false errors), and errors on mutants the
//     interpreter could not distinguish (to read: equivalent or unexposed);
//   - time.
//
//   checker_mutants [--max-per-kernel N] [--sizes N] [--seed S] [--markdown F] [--json F]
//                   [--min-flagged-percent P] [KERNEL.ag ...]
// Without kernels: examples/*.ag, tests/golden/**/*.ag and tests/checker/*.ag
// (those whose unmutated form checks clean). With --min-flagged-percent the exit
// status is 1 when the flagged share or the count of false errors misses
// (the CI sample in tests/CMakeLists.txt).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/mutants/evaluate.h"
#include "bench/mutants/mutate.h"

namespace fs = std::filesystem;
using namespace argus::mutants;

namespace {

std::string readFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> defaultKernels() {
  std::vector<fs::path> out;
  fs::path root = ARGUS_SOURCE_DIR;
  for (const char* dir : {"examples", "tests/checker"})
    for (const auto& e : fs::directory_iterator(root / dir))
      if (e.path().extension() == ".ag") out.push_back(e.path());
  for (const auto& e : fs::recursive_directory_iterator(root / "tests/golden"))
    if (e.path().extension() == ".ag") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// At most `limit` mutants, taken round-robin over operators so that each is represented.
std::vector<Mutant> sample(std::vector<Mutant> all, size_t limit) {
  if (limit == 0 || all.size() <= limit) return all;
  std::map<std::string, std::vector<Mutant>> byOp;
  for (Mutant& m : all) byOp[m.op].push_back(std::move(m));
  std::vector<Mutant> out;
  // Spread the picks over each operator's list (not just its first lines).
  std::map<std::string, size_t> taken;
  while (out.size() < limit) {
    bool any = false;
    for (auto& [op, list] : byOp) {
      size_t& k = taken[op];
      if (k >= list.size() || out.size() >= limit) continue;
      size_t stride = std::max<size_t>(1, list.size() / std::max<size_t>(1, limit / byOp.size()));
      size_t index = (k * stride) % list.size();
      // Fall back to the next unused one when the stride wraps onto a taken mutant.
      out.push_back(list[index]);
      list.erase(list.begin() + static_cast<long>(index));
      any = true;
    }
    if (!any) break;
  }
  return out;
}

struct Row {
  std::string kernel;
  Mutant mutant;
  Verdict verdict;
};

std::string percent(size_t part, size_t whole) {
  if (whole == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

std::string escape(std::string s) {
  for (char& c : s)
    if (c == '|' || c == '\n') c = ' ';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  size_t maxPerKernel = 40;
  double minFlagged = -1;
  std::string markdownPath, jsonPath;
  EvalOptions options;
  std::vector<fs::path> kernels;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "checker_mutants: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--max-per-kernel") maxPerKernel = std::stoul(next());
    else if (a == "--sizes") options.sizeSets = std::stoi(next());
    else if (a == "--seed") options.seed = std::stoull(next());
    else if (a == "--markdown") markdownPath = next();
    else if (a == "--json") jsonPath = next();
    else if (a == "--min-flagged-percent") minFlagged = std::stod(next());
    else if (!a.empty() && a[0] == '-') {
      std::cerr << "checker_mutants: unknown option " << a << "\n";
      return 2;
    } else kernels.push_back(a);
  }
  if (kernels.empty()) kernels = defaultKernels();

  auto start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  std::vector<std::pair<std::string, std::string>> skipped;  // kernel, why
  size_t falseErrors = 0;
  std::vector<std::string> falseErrorKernels;
  for (const fs::path& path : kernels) {
    std::string source = readFile(path);
    std::string name = fs::relative(path, ARGUS_SOURCE_DIR).string();
    KernelUnderTest k = prepare(name, source, options);
    if (!k.skipReason.empty()) {
      // A corpus or golden kernel with planted errors is no baseline; an example must be clean.
      bool mustBeClean = name.rfind("examples/", 0) == 0 && name.find("broken/") == std::string::npos;
      if (mustBeClean && !k.baselineErrors.empty()) {
        ++falseErrors;
        falseErrorKernels.push_back(name + ": " + k.baselineErrors.front());
      }
      skipped.push_back({name, k.skipReason});
      continue;
    }
    std::vector<Mutant> mutants = sample(mutantsOf(name, source), maxPerKernel);
    std::cerr << name << ": " << mutants.size() << " mutants\n";
    for (Mutant& m : mutants) {
      Verdict v = evaluate(k, m.text, options);
      rows.push_back({name, std::move(m), std::move(v)});
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  size_t total = rows.size(), rejected = 0, distinguishable = 0, flagged = 0, replayed = 0, flaggedEquivalent = 0;
  std::map<std::string, std::array<size_t, 3>> byOp;  // distinguishable, flagged, replayed
  std::vector<double> checkMs;
  for (const Row& r : rows) {
    const Verdict& v = r.verdict;
    if (v.rejected) { ++rejected; continue; }
    checkMs.push_back(v.checkMs);
    bool isFlagged = !v.errorCodes.empty();
    if (v.distinguishable) {
      ++distinguishable;
      byOp[r.mutant.op][0]++;
      if (isFlagged) { ++flagged; byOp[r.mutant.op][1]++; }
      if (isFlagged && v.witnessReplayed) { ++replayed; byOp[r.mutant.op][2]++; }
    } else if (isFlagged) {
      ++flaggedEquivalent;
    }
  }
  std::sort(checkMs.begin(), checkMs.end());
  double medianCheck = checkMs.empty() ? 0 : checkMs[checkMs.size() / 2];

  std::ostringstream md;
  md << "| measure | value |\n| --- | --- |\n";
  md << "| kernels mutated / skipped | " << (kernels.size() - skipped.size()) << " / " << skipped.size() << " |\n";
  md << "| mutants | " << total << " |\n";
  md << "| rejected by the front end (not programs) | " << rejected << " |\n";
  md << "| distinguishable by the interpreter | " << distinguishable << " |\n";
  md << "| ... flagged by the checker (an error) | " << flagged << " (" << percent(flagged, distinguishable) << ") |\n";
  md << "| ... flagged with a witness that replays | " << replayed << " (" << percent(replayed, distinguishable)
     << ") |\n";
  md << "| errors on unmutated examples | " << falseErrors << " |\n";
  md << "| errors on mutants the interpreter did not distinguish | " << flaggedEquivalent << " |\n";
  md << "| median checker CPU time per mutant | " << static_cast<int>(medianCheck) << " ms |\n";
  md << "| total time | " << static_cast<int>(seconds) << " s |\n\n";
  md << "| operator | distinguishable | flagged | witness replays |\n| --- | --- | --- | --- |\n";
  for (const auto& [op, c] : byOp)
    md << "| " << op << " | " << c[0] << " | " << c[1] << " (" << percent(c[1], c[0]) << ") | " << c[2] << " ("
       << percent(c[2], c[0]) << ") |\n";
  md << "\n### Missed: distinguishable, no checker error\n\n| kernel | line | operator | mutation | interpreter |\n"
        "| --- | --- | --- | --- | --- |\n";
  for (const Row& r : rows)
    if (!r.verdict.rejected && r.verdict.distinguishable && r.verdict.errorCodes.empty())
      md << "| " << r.kernel << " | " << r.mutant.line << " | " << r.mutant.op << " | " << escape(r.mutant.description)
         << " | " << escape(r.verdict.evidence) << " |\n";
  md << "\n### Flagged, witness does not replay\n\n| kernel | line | mutation | error | witness sizes |\n"
        "| --- | --- | --- | --- | --- |\n";
  for (const Row& r : rows)
    if (!r.verdict.rejected && r.verdict.distinguishable && !r.verdict.errorCodes.empty() && !r.verdict.witnessReplayed)
      md << "| " << r.kernel << " | " << r.mutant.line << " | " << escape(r.mutant.description) << " | "
         << escape(r.verdict.firstError) << " | " << r.verdict.witnessSizes << " |\n";
  md << "\n### Errors on mutants the interpreter did not distinguish\n\n| kernel | line | mutation | error |\n"
        "| --- | --- | --- | --- |\n";
  for (const Row& r : rows)
    if (!r.verdict.rejected && !r.verdict.distinguishable && !r.verdict.errorCodes.empty())
      md << "| " << r.kernel << " | " << r.mutant.line << " | " << escape(r.mutant.description) << " | "
         << escape(r.verdict.firstError) << " |\n";
  if (!falseErrorKernels.empty()) {
    md << "\n### Errors on unmutated examples\n\n";
    for (const std::string& k : falseErrorKernels) md << "- " << escape(k) << "\n";
  }
  md << "\n### Skipped kernels\n\n";
  for (const auto& [k, why] : skipped) md << "- " << k << ": " << why << "\n";

  std::cout << md.str();
  if (!markdownPath.empty()) std::ofstream(markdownPath) << md.str();
  if (!jsonPath.empty()) {
    nlohmann::json rowsJson = nlohmann::json::array();
    for (const Row& r : rows)
      rowsJson.push_back({{"kernel", r.kernel}, {"line", r.mutant.line}, {"operator", r.mutant.op},
                          {"mutation", r.mutant.description}, {"rejected", r.verdict.rejected},
                          {"rejected_by", r.verdict.rejectedBy}, {"errors", r.verdict.errorCodes},
                          {"warnings", r.verdict.warningCodes}, {"first_error", r.verdict.firstError},
                          {"distinguishable", r.verdict.distinguishable}, {"evidence", r.verdict.evidence},
                          {"witness_replayed", r.verdict.witnessReplayed}, {"witness_sizes", r.verdict.witnessSizes},
                          {"check_ms", r.verdict.checkMs}});
    std::ofstream(jsonPath) << nlohmann::json{{"mutants", rowsJson}, {"seconds", seconds}}.dump(1) << "\n";
  }
  if (minFlagged >= 0) {
    double share = distinguishable ? 100.0 * static_cast<double>(flagged) / static_cast<double>(distinguishable) : 100;
    if (share < minFlagged || falseErrors > 0) {
      std::cerr << "checker_mutants: flagged " << share << "% (floor " << minFlagged << "%), " << falseErrors
                << " errors on unmutated examples\n";
      return 1;
    }
  }
  return 0;
}
