// An analytical cost model of a compiled kernel at the task's measure shape:
// FLOPs at the tensor-core or CUDA-core rate, global bytes moved (tile reuse),
// shared-memory traffic, and occupancy from shared memory, registers and
// warps; the time is a roofline max, divided by an occupancy/latency factor,
// times a calibration scale fitted to GPU measurements when there are any.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace argus::agent {

struct CostEstimate {
  double flops = 0, globalBytes = 0, sharedBytes = 0;
  double computeMs = 0, memoryMs = 0, sharedMs = 0;
  int blocks = 0, warpsPerBlock = 0, blocksPerSm = 0;
  int sharedBytesPerBlock = 0, registersPerThread = 0;
  bool tensorCores = false;
  double occupancyFactor = 1;
  double timeMs = 0;  // calibrated
  nlohmann::json toJson() const;
};

}  // namespace argus::agent
