// The invariant checker: static analyses over the Tile IR that prove built-in
// invariants for every thread, value and loop iteration at once (Z3 queries),
// and report a concrete counterexample when one fails. See docs/checker.md.
#pragma once

#include <functional>

#include "ir/ir.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::checker {

struct Options {
  // Wall-clock limits, so that a pathological kernel cannot hang an editor. They
  // are far above what the examples need (the slowest query of gemm_tc.ag takes
  // well under a second), because a proof that times out only on a loaded
  // machine would make the result depend on the load.
  unsigned queryTimeoutMs = 10000;  // per Z3 query; a timeout is reported as "cannot prove"
  unsigned kernelBudgetMs = 60000;  // per kernel; the queries left then are "cannot prove" too
  // Polled between functions and between checks: once it returns true the
  // checker stops and its findings are incomplete (an editor's next keystroke).
  std::function<bool()> cancelled;
  // When set, only the functions it accepts are checked (an editor re-checks
  // only the kernels whose text changed and reuses the others' findings).
  std::function<bool(const ir::Function&)> accept;
};

// Runs every check on every function. `file` (optional) gives line:col in notes
// and enables fix-its. Reports AG2xxx diagnostics; never throws.
void check(const ir::Module& module, DiagnosticSink& diags, const SourceFile* file = nullptr,
           const Options& options = {});

}  // namespace argus::checker
