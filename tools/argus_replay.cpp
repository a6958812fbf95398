// argus-replay DIR: runs a kernel saved by `argusc run --cpu --save-io DIR` on
// the GPU, checks its outputs against the interpreter's, then times it.
// Depends on the GPU runtime alone (no LLVM, ANTLR or Z3), so that it builds
// on a GPU machine with:
//   g++ -std=c++20 -O2 -I<dir holding nlohmann/> runtime/gpu/*.cpp tools/argus_replay.cpp -ldl -o argus-replay
// (the includes below are relative to this file for that reason).
// Exit status: 0 checked (and timed), 1 mismatch or GPU failure, 2 bad usage or no GPU.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "../runtime/gpu/benchmark.h"
#include "../runtime/gpu/gpu_runtime.h"
#include "../runtime/gpu/launch_metadata.h"

namespace {

constexpr const char* kUsage = R"(usage: argus-replay DIR [options]

Runs the kernel saved by `argusc run --cpu --save-io DIR` on the GPU: launches it
on the saved inputs, compares every tensor with the CPU interpreter's results,
then times it.

options:
  --repeat N       timed runs (default 50; 0: check only)
  --warmup N       untimed runs before timing (default 10)
  --flops EXPR     operations per run over the size names, e.g. '2*M*N*K' (for TFLOP/s)
  --rtol X         relative tolerance of the check (default: by dtype)
  --no-check       skip the comparison
  --device N       the CUDA device (default 0)
  -h, --help       print this help
)";

int usage(const std::string& message) {
  std::cerr << "argus-replay: error: " << message << "\n" << "argus-replay: run 'argus-replay --help' for usage\n";
  return 2;
}

bool parseCount(const std::string& text, int& out) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0 || v > 1000000) return false;
  out = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace argus::gpu;
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string dir, flopsText;
  BenchOptions options;
  argus::gpu::OpenOptions open;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string* { return i + 1 < args.size() ? &args[++i] : nullptr; };
    if (a == "-h" || a == "--help") { std::cout << kUsage; return 0; }
    if (a == "--no-check") { options.check = false; continue; }
    if (a == "--repeat" || a == "--warmup" || a == "--device") {
      const std::string* v = value();
      int n = 0;
      if (!v || !parseCount(*v, n)) return usage(a + " needs a count");
      (a == "--repeat" ? options.repeat : a == "--warmup" ? options.warmup : open.device) = n;
      continue;
    }
    if (a == "--flops") {
      const std::string* v = value();
      if (!v) return usage("--flops needs an expression such as '2*M*N*K'");
      flopsText = *v;
      continue;
    }
    if (a == "--rtol") {
      const std::string* v = value();
      char* end = nullptr;
      double tol = v ? std::strtod(v->c_str(), &end) : -1;
      if (!v || *end != '\0' || !(tol >= 0)) return usage("--rtol needs a non-negative number");
      options.tolerance = tol;
      continue;
    }
    if (!a.empty() && a[0] == '-') return usage("unknown option '" + a + "'");
    if (!dir.empty()) return usage("one directory at a time");
    dir = a;
  }
  if (dir.empty()) return usage("no directory (written by `argusc run --cpu --save-io DIR`)");

  std::string error;
  ReplayCase replay;
  if (!loadReplayCase(dir, replay, error)) return usage(error);
  std::vector<KernelMeta> kernels;
  if (!parseKernelMetadata(replay.metaJson, kernels, error)) return usage(dir + "/" + replay.metaFile + ": " + error);
  const KernelMeta* kernel = nullptr;
  for (const KernelMeta& k : kernels)
    if (k.name == replay.kernelName) kernel = &k;
  if (!kernel) return usage("the metadata has no kernel '" + replay.kernelName + "'");
  if (!flopsText.empty()) {
    SizeExpr expr;
    int64_t flops = 0;
    if (!parseSizeExpression(flopsText, expr, error) || !expr.evaluate(replay.sizes, flops, error))
      return usage("--flops: " + error);
    options.flops = static_cast<double>(flops);
  }

  // As for argusc: tests point this at a missing library to see the no-driver path.
  if (const char* driver = std::getenv("ARGUS_CUDA_DRIVER"); driver && *driver) open.driverLibrary = driver;
  std::unique_ptr<GpuRuntime> runtime = GpuRuntime::open(error, open);
  if (!runtime) {
    std::cerr << "argus-replay: no GPU: " << error << "\n";
    return 2;
  }
  const DeviceInfo& device = runtime->device();
  std::cout << "device " << device.ordinal << ": " << device.name << " (compute capability " << device.major << "."
            << device.minor << ", " << device.multiprocessors << " multiprocessors)\n";
  std::cout << "replaying " << dir << ": kernel " << replay.kernelName << " (PTX for " << replay.arch << "), sizes";
  for (const auto& [name, value] : replay.sizes) std::cout << " " << name << "=" << value;
  std::cout << ", seed " << replay.seed << "\n";
  BenchOutcome outcome =
      benchmarkKernel(*runtime, replay.ptx, *kernel, replay.sizes, replay.tensors, replay.scalarBits(), options);
  std::cout << outcome.report;
  if (!outcome.error.empty()) {
    std::cerr << "argus-replay: error: " << outcome.error << "\n";
    return 1;
  }
  return outcome.ok ? 0 : 1;
}
