// Pieces of the Evaluator (agent/evaluator.h) shared by its files: kernel
// arguments drawn at random, the comparison of outputs with a reference, and
// the GPU measurement. Not part of the agent's public interface.
#pragma once

#include <cstdint>
#include <map>
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

// The largest absolute difference of one comparison (infinite where NaN or
// infinity meets a number) and the tolerance it was held to.
struct TensorError {
  double maxError = 0, tolerance = 0;
};

// Compares `got` with `want`; empty when they match, else one line naming the
// worst element ("C[3, 17]: got nan (never written), want 0.4512; ...").
std::string compareTensors(const std::string& name, const interp::HostTensor& got, const interp::HostTensor& want,
                           TensorError* error = nullptr);

// The values a size takes in the shapes derived from a candidate: `least`
// gives every grid axis and loop that grows with the size at least 2 tiles
// (grid) or the trip target (loops) -- or as many as the measured value
// gives, if fewer --, `full` is the largest value with the same counts (whole
// tiles). A size that nothing grows with (`tiled` false) takes its measured value.
struct SizeCoverage {
  int64_t least = 1, full = 1;
  bool tiled = false;
};

// The pipeline depth of a kernel: the largest of `modelledStages` (the cost
// model's reading of the main loop), any loop's requested stages and any
// const parameter whose name contains STAGE.
int pipelineDepth(const ir::Function& fn, int modelledStages);

// Per size of `candidate`, derived by evaluating its grid and loop trip counts.
std::map<std::string, SizeCoverage> coverageOf(const ir::Function& candidate, const Sizes& measure, int tripTarget);

struct ValidationShape {
  std::string role;  // "task", "tiles", "ragged", "stretched K", "measure"
  Sizes sizes;
};

struct ShapePlan {
  std::vector<ValidationShape> shapes;
  std::vector<std::string> skipped;  // shapes a requirement of either kernel excludes, and why
  std::map<std::string, SizeCoverage> coverage;
  int tripTarget = 2;
  bool measureUnaffordable = false;
};

// The interpreter shapes of one evaluation (random parts drawn from `rng`);
// `workBudget` bounds the generated shapes other than "tiles" by the cost
// model's FLOPs + global bytes of both kernels together.
ShapePlan planValidationShapes(const ir::Function& reference, const ir::Function& candidate, const Task& task,
                               int tripTarget, double workBudget, std::mt19937_64& rng);

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
