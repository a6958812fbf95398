// Pieces of the Evaluator (agent/evaluator.h) shared by its files: kernel
// arguments drawn at random, the comparison of outputs with a reference, and
// the GPU measurement. Not part of the agent's public interface.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "agent/task.h"
#include "ir/ir.h"
#include "runtime/interp/host_tensor.h"
#include "runtime/interp/interpreter.h"

namespace argus::agent::detail {

// The arguments of one run: a tensor per Tensor parameter and a value per
// Scalar parameter, both in parameter order.
struct KernelArguments {
  std::vector<interp::HostTensor> tensors;
  std::vector<std::string> tensorNames;
  std::vector<std::string> scalarNames;
  std::vector<interp::ArgValue> scalars;  // double for float dtypes, int64 otherwise
  std::vector<std::vector<uint8_t>> scalarBits;  // each scalar's little-endian bytes in its dtype

  // The interpreter's argument list (pointers into `tensors`; valid while this lives).
  std::vector<interp::ArgValue> interpreterValues(const ir::Function& fn);
};

// Draws every tensor (floats uniform in [-1, 1), integers in [0, 16), bools
// 0/1) and scalar at `sizes`; false with `error` when a size is missing or a
// tensor is too large for this machine.
bool drawArguments(const ir::Function& fn, const Sizes& sizes, std::mt19937_64& rng, KernelArguments& out,
                   std::string& error);

// How a kernel uses each tensor parameter (in order): a write-only tensor is
// an output whose contents before a run are poisoned, never inputs.
enum class TensorUse : uint8_t { Read, WriteOnly, ReadWrite };
std::vector<TensorUse> tensorUses(const ir::Function& fn);

// Fills every element with the poison pattern: NaN for floats, 0xAB bytes otherwise.
void poison(interp::HostTensor& tensor);

// The allowed absolute error of an element is rtol x max |reference|: 2e-2 for
// bf16, 2e-3 for f16, 1e-1 for 8-bit floats, 1e-4 for f32, 1e-10 for f64, 0 for integers.
double relativeTolerance(ir::DType dtype);

// Compares `got` with `want`; empty when they match, else one line naming the
// worst element ("C[3, 17]: got nan (never written), want 0.4512; ...").
std::string compareTensors(const std::string& name, const interp::HostTensor& got, const interp::HostTensor& want);

// "M=64 N=48 K=40"
std::string sizesText(const Sizes& sizes);

// The GPU side: a device opened once, then runs of PTX from their metadata.
class GpuMeasurer {
 public:
  // Null with `error` saying why there is no usable GPU.
  static std::unique_ptr<GpuMeasurer> open(std::string& error);
  virtual ~GpuMeasurer() = default;
  virtual std::string deviceName() const = 0;
  virtual std::string deviceArch() const = 0;  // "sm_80", "sm_90" (gpu::DeviceInfo::argusArch)
  // Runs the kernel once with the outputs poisoned; `results` gets every tensor after it.
  virtual bool runOnce(const std::string& ptx, const std::string& metadataJson, const std::string& kernelName,
                       const Sizes& sizes, const KernelArguments& args, const std::vector<TensorUse>& uses,
                       std::vector<interp::HostTensor>& results, std::string& error) = 0;
  // Warm-up runs, then the median of `repeat` event-timed runs (outputs poisoned before each).
  virtual bool time(const std::string& ptx, const std::string& metadataJson, const std::string& kernelName,
                    const Sizes& sizes, const KernelArguments& args, const std::vector<TensorUse>& uses, int warmup,
                    int repeat, double& medianMs, std::string& error) = 0;
};

}  // namespace argus::agent::detail
