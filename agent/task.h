// An optimization task: a kernel plus what "correct" and "fast" mean for it.
// Read from a JSON task file (docs/agent.md):
//   {"name": "gemm_4096", "kernel": "gemm_naive.ag",          (relative to the task file)
//    "validate": [{"M": 64, "N": 48, "K": 40}, {"M": 97, "N": 33, "K": 71}],
//    "measure": {"M": 4096, "N": 4096, "K": 4096},
//    "flops": "2*M*N*K",                                       (optional, for TFLOP/s)
//    "budget": {"candidates": 40},
//    "peer": {"name": "cuBLAS", "tflops": 788},                (optional, for the report)
//    "arch": "sm_90a",                                          (optional, default sm_90)
//    "multiple_of": {"K": 8, "N": 8}}                           (optional: sizes the task promises)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace argus::agent {

using Sizes = std::map<std::string, int64_t>;

struct Task {
  std::string name;
  std::string kernelPath;    // absolute or relative to the working directory
  std::string kernelSource;  // the starting program (also the correctness reference)
  std::vector<Sizes> validate;  // correctness shapes (run in the CPU interpreter)
  Sizes measure;                // the shape timed (GPU) or modelled (cost model)
  std::string flopsExpr;        // over size names; empty: none
  int candidateBudget = 40;
  std::string peerName;
  std::optional<double> peerTflops;
  std::string arch = "sm_90";
  // Sizes the task promises to be multiples of these (TMA's 16-byte rows: bf16 K % 8 == 0).
  // Every validate and measure shape keeps the promise, and so do the shapes the
  // evaluator derives; a kernel may rely on it, nothing else.
  Sizes multipleOf;
};

std::optional<Task> loadTask(const std::string& path, std::string& error);
// Evaluates flopsExpr (+ - * / parentheses, integers, size names) at `sizes`.
std::optional<double> taskFlops(const Task& task, const Sizes& sizes);

}  // namespace argus::agent
