// An analytical cost model of a compiled kernel at the task's measure shape:
// FLOPs at the tensor-core or CUDA-core rate, global bytes moved (tile reuse),
// shared-memory traffic, and occupancy from shared memory, registers and
// warps; the time is a roofline max, divided by an occupancy/latency factor,
// times a calibration scale fitted to GPU measurements when there are any.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/task.h"

namespace argus::ir { struct Function; }

namespace argus::agent {

struct CostEstimate {
  double flops = 0, globalBytes = 0, sharedBytes = 0;
  double dramBytes = 0;  // every tensor once: the traffic that cannot come from L2
  double computeMs = 0, memoryMs = 0, sharedMs = 0;
  int blocks = 0, warpsPerBlock = 0, blocksPerSm = 0;
  int sharedBytesPerBlock = 0, registersPerThread = 0;
  bool tensorCores = false;
  double occupancyFactor = 1;
  double timeMs = 0;  // calibrated
  double uncalibratedMs = 0;   // the model's own time (timeMs = uncalibratedMs x calibrationScale)
  double calibrationScale = 1;
  int pipelineStages = 1;  // of the main loop: 1 synchronous copies, S for pipelined(stages=S)
  nlohmann::json toJson() const;
};

// The machine the model describes (an H200 by default; docs/agent/evaluation.md).
struct MachineModel {
  int multiprocessors = 132;
  // bf16/f16 mma.sync, effective: the best mma.sync GEMM measured on the H200 ran at
  // 319 TFLOP/s at 4096^3, the wgmma ones at 780 (bench/results/bench_gpu*.md).
  double tensorCoreTflops = 450;
  double wgmmaTflops = 990;       // bf16/f16 wgmma.mma_async (sm_90a), dense peak
  double cudaCoreTflops = 60;     // f32 FMA
  double hbmTBps = 4.8;
  double l2TBps = 10;             // tile loads that blocks share come from L2 (50 MiB on H200)
  double sharedTBps = 33;         // all SMs together
  int sharedBytesPerSm = 227 * 1024;
  int maxWarpsPerSm = 64;
  int registersPerSm = 65536;
  int maxBlocksPerSm = 32;
};

// Models `fn` at `sizes` (every size name of the kernel). `scale` is the
// calibration factor (timeMs = modelled time x scale).
CostEstimate estimateCost(const ir::Function& fn, const Sizes& sizes, double scale = 1.0,
                          const MachineModel& machine = {});

// The trip count of every loop of `fn` at `sizes`, in program order, as block 0
// runs its first iteration (nothing where a bound is not block-uniform or
// depends on loaded values). The evaluator derives its validation shapes from
// how these and the grid grow with each size.
std::vector<std::optional<int64_t>> loopTripCounts(const ir::Function& fn, const Sizes& sizes);

// The scale s minimising sum (log(measured) - log(s * modelled))^2 over the
// pairs with both times positive: exp(mean(log(measured / modelled))); 1 when
// there is no such pair.
double fitCalibrationScale(const std::vector<std::pair<double, double>>& modelledMeasuredMs);

}  // namespace argus::agent
