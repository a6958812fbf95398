// Check-then-time (see benchmark.h).
#include "benchmark.h"

#include <sstream>

namespace argus::gpu {

BenchOutcome benchmarkKernel(GpuRuntime& runtime, const std::string& moduleImage, const KernelMeta& kernel,
                             const std::map<std::string, int64_t>& sizes, const std::vector<BenchTensor>& tensors,
                             const std::map<std::string, std::vector<uint8_t>>& scalars, const BenchOptions& options) {
  BenchOutcome outcome;
  std::ostringstream report;
  std::shared_ptr<GpuModule> module = runtime.loadModule(moduleImage, outcome.error);
  if (!module) return outcome;
  std::shared_ptr<GpuKernel> gpuKernel = module->kernel(kernel.name, outcome.error);
  if (!gpuKernel) return outcome;
  std::unique_ptr<BenchRun> run = BenchRun::create(runtime, gpuKernel, kernel, sizes, tensors, scalars, outcome.error);
  if (!run) return outcome;

  const LaunchPlan& plan = run->plan();
  report << "kernel " << kernel.name << ": grid (" << plan.grid.x << ", " << plan.grid.y << ", " << plan.grid.z
         << "), " << plan.block.x << " threads per block";
  KernelResources resources;
  std::string ignored;
  if (gpuKernel->resources(resources, ignored))
    report << ", " << resources.registers << " registers per thread, "
           << resources.staticSharedBytes + plan.dynamicSharedBytes << " bytes of shared memory per block"
           << (plan.dynamicSharedBytes ? " (" + std::to_string(plan.dynamicSharedBytes) + " dynamic)" : std::string())
           << ", " << resources.localBytes << " bytes of local memory per thread"
           << (resources.localBytes ? " (spills or local arrays)" : "");
  report << "\n";

  std::vector<std::vector<uint8_t>> results;
  if (!run->runOnce(results, outcome.error)) {
    outcome.report = report.str();
    return outcome;
  }
  // BenchRun::create bound the kernel's tensors in parameter order: find each by name.
  bool passed = true;
  size_t resultIndex = 0;
  for (const MetaParam& p : kernel.params) {
    if (p.kind != MetaParam::Kind::Tensor) continue;
    const BenchTensor* tensor = nullptr;
    for (const BenchTensor& t : tensors)
      if (t.name == p.name) tensor = &t;
    const std::vector<uint8_t>& got = results[resultIndex++];
    if (!tensor) continue;
    if (options.check && !tensor->expected.empty()) {
      double tolerance = options.tolerance.value_or(tensor->dtype.defaultTolerance());
      Comparison c = compareTensor(tensor->name, tensor->dtype, tensor->shape, got, tensor->expected, tolerance);
      report << "check " << c.describe() << "\n";
      passed = passed && c.passed;
    } else if (tensor->role != TensorRole::Input) {
      size_t poisoned = countPoisoned(tensor->dtype, got);
      report << "check " << tensor->name << ": skipped (no reference)";
      if (poisoned)
        report << "; " << poisoned << " of " << tensor->elements()
               << " elements still hold the poison pattern (never written?)";
      report << "\n";
    }
  }
  if (!passed) {
    report << "result: MISMATCH against the reference; not timing a wrong kernel\n";
    outcome.mismatch = true;
    outcome.report = report.str();
    return outcome;
  }
  if (options.repeat > 0) {
    std::vector<float> ms;
    if (!run->time(options.warmup, options.repeat, ms, outcome.error)) {
      outcome.report = report.str();
      return outcome;
    }
    report << "timed " << options.repeat << " runs after " << options.warmup
           << " warm-up runs (CUDA events; outputs poisoned before each run)\n";
    report << formatTiming(summarizeTimes(ms), run->bytesMoved(), options.flops);
  }
  outcome.ok = true;
  outcome.report = report.str();
  return outcome;
}

}  // namespace argus::gpu
