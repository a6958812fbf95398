// The invariant checker: static analyses over the Tile IR that prove built-in
// invariants for every thread, value and loop iteration at once (Z3 queries),
// and report a concrete counterexample when one fails. See docs/checker.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::checker {

class SharedSolverContext;  // checker/solver_budget.h

// Where the checker's time goes, per analysis (bench/compile_bench fills one).
struct Profile {
  struct Phase {
    std::string name;
    double ms = 0;          // wall time of the analysis, solver included
    int queries = 0;        // Z3 checks
    int unknown = 0;        // of which undecided
    double solverMs = 0;    // wall time inside Z3's check
    uint64_t units = 0;     // Z3 resource units spent
  };
  std::vector<Phase> phases;
  size_t current = 0;
  Phase& currentPhase() {
    if (phases.empty()) phases.push_back({"checker"});
    return phases[std::min(current, phases.size() - 1)];
  }
};

struct Options {
  // Solver limits are Z3 resource counts ("rlimit"), never wall-clock time, so
  // that the same file gives the same diagnostics on every run and at any
  // machine load (checker/solver_budget.h). About 1 to 2 million units are a
  // second of solving on the 2-core machine; the examples' largest query
  // spends well under a million.
  uint64_t queryRlimit = 20'000'000;   // per Z3 query; exhausted: "cannot prove"
  uint64_t kernelRlimit = 200'000'000; // per kernel and analysis; the queries left then are "cannot prove" too
  Profile* profile = nullptr;          // optional: filled with the time and queries of each analysis
  // Polled between functions and between checks: once it returns true the
  // checker stops and its findings are incomplete (an editor's next keystroke).
  // With `parallel`, both lanes call it, from two threads.
  std::function<bool()> cancelled;
  // When set, only the functions it accepts are checked (an editor re-checks
  // only the kernels whose text changed and reuses the others' findings).
  std::function<bool(const ir::Function&)> accept;
  // The Z3 context every analysis builds its queries in, made when the first
  // analysis needs one. check() shares one over its whole run when this is
  // null: a context costs 50 to 70 ms to create (Z3 4.8 allocates and touches
  // its tables), more than most kernels' queries.
  SharedSolverContext* solverContext = nullptr;
  // A function's analyses run in two lanes on two threads (checker.cpp says
  // which analysis runs where); off: one after the other on the caller's.
  bool parallel = true;
};

// Runs every check on every function. `file` (optional) gives line:col in notes
// and enables fix-its. Reports AG2xxx diagnostics; never throws.
void check(const ir::Module& module, DiagnosticSink& diags, const SourceFile* file = nullptr,
           const Options& options = {});

}  // namespace argus::checker
