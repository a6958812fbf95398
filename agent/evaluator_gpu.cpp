// The Evaluator's GPU side over runtime/gpu: one device opened for the
// Evaluator's lifetime; each run loads the candidate's PTX, binds fresh device
// buffers through gpu::BenchRun (which poisons write-only outputs before every
// launch and restores in/out tensors) and runs or times the kernel.
#include <algorithm>

#include "agent/evaluator_internal.h"
#include "runtime/gpu/bench.h"
#include "runtime/gpu/gpu_runtime.h"
#include "runtime/gpu/launch_metadata.h"

namespace argus::agent::detail {
namespace {

class CudaMeasurer : public GpuMeasurer {
 public:
  explicit CudaMeasurer(std::unique_ptr<gpu::GpuRuntime> runtime) : runtime_(std::move(runtime)) {}

  std::string deviceName() const override { return runtime_->device().name; }
  std::string deviceArch() const override { return runtime_->device().argusArch(); }

  bool runOnce(const std::string& ptx, const std::string& metadataJson, const std::string& kernelName,
               const Sizes& sizes, const KernelArguments& args, const std::vector<TensorUse>& uses,
               std::vector<interp::HostTensor>& results, std::string& error) override {
    Prepared p;
    if (!prepare(ptx, metadataJson, kernelName, sizes, args, uses, p, error)) return false;
    std::vector<std::vector<uint8_t>> bytes;
    if (!p.run->runOnce(bytes, error)) return false;
    results = args.tensors;
    for (size_t t = 0; t < results.size() && t < bytes.size(); ++t) {
      if (bytes[t].size() != results[t].bytes.size()) {
        error = "the GPU returned " + std::to_string(bytes[t].size()) + " bytes for tensor '" + args.tensorNames[t] +
                "', expected " + std::to_string(results[t].bytes.size());
        return false;
      }
      results[t].bytes = std::move(bytes[t]);
    }
    return true;
  }

  bool time(const std::string& ptx, const std::string& metadataJson, const std::string& kernelName,
            const Sizes& sizes, const KernelArguments& args, const std::vector<TensorUse>& uses, int warmup,
            int repeat, double& medianMs, std::string& error) override {
    Prepared p;
    if (!prepare(ptx, metadataJson, kernelName, sizes, args, uses, p, error)) return false;
    std::vector<float> ms;
    if (!p.run->time(warmup, std::max(1, repeat), ms, error)) return false;
    medianMs = gpu::summarizeTimes(ms).medianMs;
    return true;
  }

 private:
  struct Prepared {
    gpu::KernelMeta meta;
    std::vector<gpu::BenchTensor> tensors;  // BenchRun keeps pointers: lives as long as `run`
    std::unique_ptr<gpu::BenchRun> run;
  };

  bool prepare(const std::string& ptx, const std::string& metadataJson, const std::string& kernelName,
               const Sizes& sizes, const KernelArguments& args, const std::vector<TensorUse>& uses, Prepared& p,
               std::string& error) {
    std::vector<gpu::KernelMeta> kernels;
    if (!gpu::parseKernelMetadata(metadataJson, kernels, error)) return false;
    auto it = std::find_if(kernels.begin(), kernels.end(), [&](const gpu::KernelMeta& k) { return k.name == kernelName; });
    if (it == kernels.end()) {
      error = "no launch metadata for kernel '" + kernelName + "'";
      return false;
    }
    p.meta = *it;
    std::shared_ptr<gpu::GpuModule> module = runtime_->loadModule(ptx, error);
    if (!module) return false;
    std::shared_ptr<gpu::GpuKernel> kernel = module->kernel(kernelName, error);
    if (!kernel) return false;
    for (size_t t = 0; t < args.tensors.size(); ++t) {
      gpu::BenchTensor b;
      b.name = args.tensorNames[t];
      std::optional<gpu::HostDType> dtype = gpu::hostDTypeFromName(ir::dtypeName(args.tensors[t].dtype));
      if (!dtype) {
        error = std::string("the GPU runtime has no dtype ") + ir::dtypeName(args.tensors[t].dtype);
        return false;
      }
      b.dtype = *dtype;
      b.shape = args.tensors[t].shape;
      TensorUse use = t < uses.size() ? uses[t] : TensorUse::ReadWrite;
      b.role = use == TensorUse::Read        ? gpu::TensorRole::Input
               : use == TensorUse::WriteOnly ? gpu::TensorRole::Output
                                             : gpu::TensorRole::InOut;
      b.input = args.tensors[t].bytes;
      p.tensors.push_back(std::move(b));
    }
    std::map<std::string, std::vector<uint8_t>> scalars;
    for (size_t s = 0; s < args.scalarNames.size(); ++s) scalars[args.scalarNames[s]] = args.scalarBits[s];
    p.run = gpu::BenchRun::create(*runtime_, kernel, p.meta, std::map<std::string, int64_t>(sizes.begin(), sizes.end()),
                                  p.tensors, scalars, error);
    return p.run != nullptr;
  }

  std::unique_ptr<gpu::GpuRuntime> runtime_;
};

}  // namespace

std::unique_ptr<GpuMeasurer> GpuMeasurer::open(std::string& error) {
  std::unique_ptr<gpu::GpuRuntime> runtime = gpu::GpuRuntime::open(error);
  if (!runtime) return nullptr;
  if (runtime->device().argusArch().empty()) {
    error = runtime->device().name + " is older than compute capability 8.0";
    return nullptr;
  }
  return std::make_unique<CudaMeasurer>(std::move(runtime));
}

}  // namespace argus::agent::detail
