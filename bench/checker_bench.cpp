// Checker benchmark: the time of checker::check alone (the IR is built once,
// outside the timing) for every example kernel, every kernel of the checker
// corpus (tests/checker/, where the solver finds counterexamples) and
// examples/broken/; the median of N runs, and the median of each phase on its
// own (synchronization, async copies, tags, built-in invariants), so that a
// slow kernel shows which check to look at. Reported, never asserted.
//
//   checker_bench [--runs N] [--json FILE]
// prints a Markdown table; bench/checker_report.py writes bench/results/checker.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "checker/async_check.h"
#include "checker/checker.h"
#include "checker/invariant_check.h"
#include "checker/sync_check.h"
#include "checker/tag_check.h"
#include "driver/compilation.h"
#include "ir/ir.h"

namespace fs = std::filesystem;

namespace {

std::string readFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Row {
  std::string group, name;
  double checkMs = 0, checkMinMs = 0;
  double phaseMs[4] = {0, 0, 0, 0};  // sync, async, tags, invariants
  size_t diagnostics = 0;
  bool skipped = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

template <typename F>
std::vector<double> timeRuns(int runs, const F& f) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return ms;
}

Row measure(const std::string& group, const fs::path& path, int runs) {
  Row row{group, path.stem().string()};
  std::string text = readFile(path);
  argus::Compilation c(argus::SourceFile(path.filename().string(), text), argus::CompileOptions{});
  const argus::ir::Module& module = c.ir();
  if (c.hasErrors() || module.functions.empty()) {
    row.skipped = true;  // sema rejects it: nothing for the checker
    return row;
  }
  const argus::SourceFile& file = c.source();
  std::vector<double> check = timeRuns(runs, [&] {
    argus::DiagnosticSink diags;
    argus::checker::check(module, diags, &file);
    row.diagnostics = diags.diagnostics().size();
  });
  using Phase = void (*)(const argus::ir::Function&, argus::DiagnosticSink&, const argus::SourceFile*,
                         const argus::checker::Options&);
  const Phase phases[4] = {argus::checker::checkSharedSync, argus::checker::checkAsyncCopies,
                           argus::checker::checkTagAssertions, argus::checker::checkBuiltinInvariants};
  for (int p = 0; p < 4; ++p)
    row.phaseMs[p] = median(timeRuns(runs, [&] {
      argus::DiagnosticSink diags;
      for (const auto& fn : module.functions)
        if (fn) phases[p](*fn, diags, &file, argus::checker::Options{});
    }));
  row.checkMs = median(check);
  row.checkMinMs = *std::min_element(check.begin(), check.end());
  return row;
}

std::vector<fs::path> agFiles(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ag") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 21;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--json" && i + 1 < argc) json = argv[++i];
    else {
      std::fprintf(stderr, "usage: checker_bench [--runs N] [--json FILE]\n");
      return 2;
    }
  }
  fs::path root = ARGUS_SOURCE_DIR;
  std::vector<Row> rows;
  for (const fs::path& p : agFiles(root / "examples")) rows.push_back(measure("example", p, runs));
  for (const auto& e : fs::directory_iterator(root / "examples"))
    if (e.is_directory())
      for (const fs::path& p : agFiles(e.path()))
        rows.push_back(measure(e.path().filename() == "broken" ? "broken" : "example", p, runs));
  for (const fs::path& p : agFiles(root / "tests" / "checker")) rows.push_back(measure("corpus", p, runs));

  std::printf("| group | kernel | checker::check median | min | sync | async | tags | invariants | diagnostics |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows) {
    if (r.skipped) {
      std::printf("| %s | %s | (sema rejects it) | | | | | | |\n", r.group.c_str(), r.name.c_str());
      continue;
    }
    std::printf("| %s | %s | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %zu |\n", r.group.c_str(),
                r.name.c_str(), r.checkMs, r.checkMinMs, r.phaseMs[0], r.phaseMs[1], r.phaseMs[2], r.phaseMs[3],
                r.diagnostics);
  }
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"runs\": " << runs << ", \"kernels\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << "  {\"group\": \"" << r.group << "\", \"name\": \"" << r.name << "\", \"skipped\": "
          << (r.skipped ? "true" : "false") << ", \"check_median_ms\": " << r.checkMs
          << ", \"check_min_ms\": " << r.checkMinMs << ", \"sync_median_ms\": " << r.phaseMs[0]
          << ", \"async_median_ms\": " << r.phaseMs[1] << ", \"tags_median_ms\": " << r.phaseMs[2]
          << ", \"invariants_median_ms\": " << r.phaseMs[3]
          << ", \"diagnostics\": " << r.diagnostics << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    out << "]}\n";
  }
  return 0;
}
