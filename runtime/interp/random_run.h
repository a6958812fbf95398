// A kernel run on seeded random inputs at given runtime sizes, and the comparison of two such
// runs: the oracle of the mutation benchmark (bench/mutants) and of fix-it verification
// (driver/fixit_check.h). The same sizes and seed give the same inputs, so two kernels with
// the same signature (a kernel and its mutant or its fixed version) see the same data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "runtime/interp/interpreter.h"

namespace argus::interp {

struct RandomRunOptions {
  int64_t defaultSize = 64;         // a size the map does not name
  int64_t maxElements = 1 << 20;    // per tensor; larger launches are not run
  uint64_t maxOpsPerBlock = 20'000'000;
  bool synchronousCopies = false;   // RunOptions::synchronousCopies
};

struct RandomRun {
  std::vector<HostTensor> tensors;  // every tensor parameter, in order, after the run
  bool fault = false;
  bool requirementFailed = false;   // the fault is a failed require(...)
  std::string faultText;            // "AG6004: shared-memory race on ..."
};

// Floats uniform in [-1, 1), integers in [0, 16), bools 0/1; scalar parameters 0.5 or 3.
// Nothing when a tensor would exceed maxElements.
std::optional<RandomRun> runOnRandomInputs(const ir::Function& fn, const std::map<std::string, int64_t>& sizes,
                                           uint64_t seed, const RandomRunOptions& options = {});

// Where two runs of `fn`'s signature differ beyond float noise (relative 1e-3), as
// "output y[3] is 0.25, <reference>'s 0.5"; empty when they agree.
std::string firstDifference(const ir::Function& fn, const RandomRun& reference, const RandomRun& run,
                            const std::string& referenceName);

}  // namespace argus::interp
