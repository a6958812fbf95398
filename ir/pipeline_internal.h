// Internal to the pipelining policy (ir/pipeline.h): what the analysis of one
// pipelined loop hands to the rewrite. pipeline_analysis.cpp finds a loop's
// leading copies and its problems; pipeline.cpp rewrites loops without problems.
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/pipeline.h"

namespace argus::ir::detail {

// What the rewrite needs to know about one pipelined loop.
struct LoopPlan {
  std::vector<const Op*> copies;        // the leading copy_async ops, in order
  std::vector<ValueId> buffers;         // the buffer each of them fills
  std::unordered_set<const Op*> slice;  // body ops that feed the copies' views
  bool bulk = false;                    // copy_bulk (TMA, mbarriers) instead of copy_async
  const Op* outer = nullptr;            // bulk loops in a loop: the kernel's top-level loop around it
};

// The problems of one pipelined loop (none: `plan` is filled in for the rewrite).
std::vector<PipelineProblem> analyzePipelinedLoop(const Function& fn, const Op& loop, LoopPlan& plan);

}  // namespace argus::ir::detail
