// Compile-time benchmarks (reported, never asserted):
//  - each example kernel from source text to PTX, cold (a new Compilation each time);
//  - each example through the invariant checker (and a kernel with a race);
//  - parse + sema of a generated 5,000-line file.
// Run: build/bench/compile_bench  (see bench/results/compile.md)
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/compilation.h"
#include "frontend/ast.h"

namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void compileToPtx(benchmark::State& state, std::string path) {
  std::string text = readFile(path);
  for (auto _ : state) {
    argus::Compilation c(argus::SourceFile(path, text), argus::CompileOptions{});
    const std::string& ptx = c.ptx();
    if (ptx.empty()) state.SkipWithError("compilation failed");
    benchmark::DoNotOptimize(ptx.data());
  }
}

// Source to the end of the invariant checker (parse, sema, Tile IR, checker).
void checkKernel(benchmark::State& state, std::string path) {
  std::string text = readFile(path);
  for (auto _ : state) {
    argus::Compilation c(argus::SourceFile(path, text), argus::CompileOptions{});
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

int registerExamples() {
  std::filesystem::path dir = std::filesystem::path(ARGUS_SOURCE_DIR) / "examples";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".ag") files.push_back(e.path());
  std::sort(files.begin(), files.end());
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
const int registered = registerExamples();

}  // namespace

BENCHMARK_MAIN();
