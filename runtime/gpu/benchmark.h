// Check-then-time of one kernel on the GPU, as `argusc run` and `argus-replay`
// report it: load the module, run once with poisoned outputs and compare every
// tensor with its expected contents, then (only when that passed) warm up and
// time repeated runs with events. The report is returned as text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench.h"

namespace argus::gpu {

struct BenchOptions {
  int warmup = 10;
  int repeat = 50;
  std::optional<double> flops;      // operations per run, for TFLOP/s
  std::optional<double> tolerance;  // overrides each dtype's default
  bool check = true;                // compare with BenchTensor::expected where present
};

struct BenchOutcome {
  bool ok = false;            // ran, and every check that ran passed
  bool mismatch = false;      // ran, but an output differs from its reference
  std::string report;         // what happened, one line per fact
  std::string error;          // why it could not run (empty when it ran)
};

BenchOutcome benchmarkKernel(GpuRuntime& runtime, const std::string& moduleImage, const KernelMeta& kernel,
                             const std::map<std::string, int64_t>& sizes, const std::vector<BenchTensor>& tensors,
                             const std::map<std::string, std::vector<uint8_t>>& scalars, const BenchOptions& options);

// A run saved by `argusc run --cpu --save-io DIR` (DIR/run.json, see docs/runtime.md).
struct ReplayCase {
  std::string kernelName;
  std::string arch;        // what the PTX was compiled for
  std::string ptxFile = "kernel.ptx", metaFile = "kernel.meta.json";
  std::string ptx, metaJson;  // the files' contents (loadReplayCase)
  uint64_t seed = 0;
  std::map<std::string, int64_t> sizes;
  struct Scalar {
    std::string name, dtype;
    double value = 0;
    std::vector<uint8_t> bits;  // little-endian bytes of the dtype
  };
  std::vector<Scalar> scalars;
  std::vector<BenchTensor> tensors;
  std::map<std::string, std::vector<uint8_t>> scalarBits() const;
};

// Writes DIR/run.json, DIR/<tensor>.input.bin and DIR/<tensor>.expected.bin,
// DIR/kernel.ptx and DIR/kernel.meta.json (creating DIR).
bool saveReplayCase(const std::string& dir, const ReplayCase& replay, std::string& error);
bool loadReplayCase(const std::string& dir, ReplayCase& replay, std::string& error);

}  // namespace argus::gpu
