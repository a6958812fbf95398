// Compile-time benchmarks (reported, never asserted):
//  - each example kernel from source text to PTX, cold (a new Compilation each time),
//    at the architecture its '# arch:' line names;
//  - each example through the invariant checker (and a kernel with a race);
//  - parse + sema of a generated 5,000-line file.
// Run: build/bench/compile_bench  (see bench/results/compile.md)
//
// `compile_bench --phases [--repetitions=N] [FILE.ag ...]` instead prints, per
// example (default: every one), the median over N runs (default 3) of the whole
// compile (also with CompileOptions::parallel off, back to back) and of each phase: parse, sema (Tile IR and policy passes included),
// each checker analysis (with its Z3 query count, undecided queries and solver
// resource units), lowering to LLVM IR with the O3 pipeline, and the NVPTX
// backend. One JSON object per line.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "checker/checker.h"
#include "codegen/codegen.h"
#include "driver/compilation.h"
#include "frontend/ast.h"

namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

argus::CompileOptions optionsFor(const std::string& text) {
  argus::CompileOptions options;
  if (std::string arch = argus::declaredArch(text); !arch.empty()) options.arch = arch;
  return options;
}

void compileToPtx(benchmark::State& state, std::string path) {
  std::string text = readFile(path);
  for (auto _ : state) {
    argus::Compilation c(argus::SourceFile(path, text), optionsFor(text));
    const std::string& ptx = c.ptx();
    if (ptx.empty()) state.SkipWithError("compilation failed");
    benchmark::DoNotOptimize(ptx.data());
  }
}

// Source to the end of the invariant checker (parse, sema, Tile IR, checker).
void checkKernel(benchmark::State& state, std::string path) {
  std::string text = readFile(path);
  for (auto _ : state) {
    argus::Compilation c(argus::SourceFile(path, text), optionsFor(text));
    benchmark::DoNotOptimize(c.check());
  }
}

// A kernel of about 50 lines; repeated with distinct names.
std::string generatedKernel(int index) {
  std::string n = std::to_string(index);
  std::string s = "@kernel(grid=(cdiv(N, BLOCK),), warps=4)\n"
                  "def k" + n + "(x: Tensor[f32, (N,)], y: Tensor[f32, (N,)], s: f32, BLOCK: const = 256):\n"
                  "    i = program_id(0)\n"
                  "    a = load(x.tile((BLOCK,))[i])\n";
  for (int j = 0; j < 44; ++j)
    s += "    a = a * s + " + std::to_string(j) + ".0  # step " + std::to_string(j) + "\n";
  s += "    y.tile((BLOCK,))[i] = a\n\n";
  return s;
}

void parseAndSemaLargeFile(benchmark::State& state) {
  std::string text;
  int lines = 0;
  for (int k = 0; lines < 5000; ++k) {
    text += generatedKernel(k);
    lines += 50;
  }
  for (auto _ : state) {
    argus::Compilation c(argus::SourceFile("large.ag", text), argus::CompileOptions{});
    c.sema();
    if (c.hasErrors()) state.SkipWithError("the generated file has errors");
  }
  state.counters["lines"] = lines;
}

std::vector<std::filesystem::path> exampleFiles() {
  std::filesystem::path dir = std::filesystem::path(ARGUS_SOURCE_DIR) / "examples";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".ag") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// ---------------------------------------------------------------- --phases

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One run: the whole compile, then each phase in a second, separate compilation.
struct PhaseRun {
  double whole = 0;
  double wholeSequential = 0;  // the same, with CompileOptions::parallel off
  std::vector<std::pair<std::string, double>> phases;  // in order
  argus::checker::Profile profile;
  bool ok = true;
};

PhaseRun runPhases(const std::string& path, const std::string& text) {
  PhaseRun run;
  {
    Clock::time_point start = Clock::now();
    argus::Compilation c(argus::SourceFile(path, text), optionsFor(text));
    run.ok = !c.ptx().empty();
    run.whole = msSince(start);
  }
  {
    argus::CompileOptions sequential = optionsFor(text);
    sequential.parallel = false;
    Clock::time_point start = Clock::now();
    argus::Compilation c(argus::SourceFile(path, text), sequential);
    c.ptx();
    run.wholeSequential = msSince(start);
  }
  argus::CompileOptions options = optionsFor(text);
  argus::Compilation c(argus::SourceFile(path, text), options);
  Clock::time_point start = Clock::now();
  c.ast();
  run.phases.emplace_back("parse", msSince(start));
  start = Clock::now();
  c.sema();
  run.phases.emplace_back("sema", msSince(start));
  argus::DiagnosticSink diags;
  argus::checker::Options checkerOptions;
  checkerOptions.profile = &run.profile;
  start = Clock::now();
  argus::checker::check(c.ir(), diags, &c.source(), checkerOptions);
  run.phases.emplace_back("checker", msSince(start));
  argus::codegen::Options codegenOptions;
  codegenOptions.arch = options.arch;
  std::string llvmIR, ptx;
  start = Clock::now();
  argus::codegen::emitLLVM(c.ir(), codegenOptions, diags, &llvmIR);
  double lowering = msSince(start);
  run.phases.emplace_back("lower+O3", lowering);
  start = Clock::now();
  argus::codegen::emitPTX(c.ir(), codegenOptions, diags, &ptx);
  run.phases.emplace_back("backend", std::max(0.0, msSince(start) - lowering));
  return run;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string jsonNumber(double v) {
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << v;
  return out.str();
}

int phasesMain(int argc, char** argv) {
  int repetitions = 3;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--repetitions=", 0) == 0) repetitions = std::max(1, std::stoi(a.substr(14)));
    else if (a != "--phases") files.emplace_back(a);
  }
  if (files.empty()) files = exampleFiles();
  for (const auto& f : files) {
    std::string text = readFile(f);
    std::vector<PhaseRun> runs;
    for (int r = 0; r < repetitions; ++r) runs.push_back(runPhases(f.string(), text));
    std::vector<double> whole, wholeSequential;
    for (const PhaseRun& r : runs) whole.push_back(r.whole), wholeSequential.push_back(r.wholeSequential);
    std::cout << "{\"example\": \"" << f.stem().string() << "\", \"ok\": " << (runs[0].ok ? "true" : "false")
              << ", \"whole_ms\": " << jsonNumber(median(whole))
              << ", \"whole_sequential_ms\": " << jsonNumber(median(wholeSequential));
    for (size_t p = 0; p < runs[0].phases.size(); ++p) {
      std::vector<double> ms;
      for (const PhaseRun& r : runs) ms.push_back(r.phases[p].second);
      std::cout << ", \"" << runs[0].phases[p].first << "_ms\": " << jsonNumber(median(ms));
    }
    std::cout << ", \"analyses\": [";
    for (size_t p = 0; p < runs[0].profile.phases.size(); ++p) {
      const auto& first = runs[0].profile.phases[p];
      std::vector<double> ms, solver;
      for (const PhaseRun& r : runs) {
        ms.push_back(r.profile.phases[p].ms);
        solver.push_back(r.profile.phases[p].solverMs);
      }
      std::cout << (p ? ", " : "") << "{\"name\": \"" << first.name << "\", \"ms\": " << jsonNumber(median(ms))
                << ", \"solver_ms\": " << jsonNumber(median(solver)) << ", \"queries\": " << first.queries
                << ", \"unknown\": " << first.unknown << ", \"units\": " << first.units << "}";
    }
    std::cout << "]}" << std::endl;
  }
  return 0;
}

int registerExamples() {
  std::filesystem::path dir = std::filesystem::path(ARGUS_SOURCE_DIR) / "examples";
  std::vector<std::filesystem::path> files = exampleFiles();
  for (const auto& f : files)
    benchmark::RegisterBenchmark(("compile_to_ptx/" + f.stem().string()).c_str(), compileToPtx,
                                 f.string())->Unit(benchmark::kMillisecond);
  for (const auto& f : files)
    benchmark::RegisterBenchmark(("check/" + f.stem().string()).c_str(), checkKernel, f.string())
        ->Unit(benchmark::kMillisecond);
  // A kernel with a race: the checker's Z3 queries and counterexample search run.
  benchmark::RegisterBenchmark("check/broken_missing_barrier", checkKernel,
                               (dir / "broken" / "missing_barrier.ag").string())->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("parse_sema/5000_lines", parseAndSemaLargeFile)->Unit(benchmark::kMillisecond);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--phases") == 0) return phasesMain(argc, argv);
  registerExamples();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
