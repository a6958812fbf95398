// Every Z3 query of the checker goes through here (internal to the checker).
//
// Limits are Z3 resource counts ("rlimit"), never wall-clock time: the same
// query gets the same answer on every run and at any machine load, so the
// same file always gives the same diagnostics. A query that exhausts its
// limit answers "unknown", which every check reports as "cannot prove".
//
// The per-kernel budget is counted in the same units: each query's spent
// resources are added up, and once a kernel has spent `kernelRlimit` the
// queries left are "cannot prove" as well.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "checker/checker.h"

namespace argus::checker {

// One Z3 context, created on first use and shared by every analysis of one
// function in a check() (Options::solverContext).
class SharedSolverContext {
 public:
  z3::context& get() {
    if (!context_) context_ = std::make_unique<z3::context>();
    return *context_;
  }

 private:
  std::unique_ptr<z3::context> context_;
};

// A solver for the checker's bit-vector formulas: simplify, propagate the
// constants, substitute the equalities (a fixed size, a program id), then
// bit-blast to SAT, each check from scratch (after a push too: Z3's default
// solver turns incremental there and bit-blasts a division by cdiv(N, 256) * 8
// with N fixed as a divider of unknowns). Measured on the heaviest queries of
// the examples with the z3 tool: 1 to 3 times faster than Z3's QF_BV default,
// never slower (docs/checker.md, "Cheap before solving").
z3::solver bitVectorSolver(z3::context& ctx);

// A solver for integer readings (integer_reading.h) of questions expected to
// hold: simplify, propagate values, solve equations, then Z3's SMT core with
// its older arithmetic solver (arith.solver=2). Measured 2026-12-07 on the
// mbarrier check's stage-parity questions (quotients and remainders by
// STAGES, an iteration count from cdiv(S, BN)): 1 to 12 ms where the
// bit-blaster takes 15 to 220, Z3's default solver 8 to 20, and the same
// tactics with the newer arithmetic solver up to 760 (gemm_wgmma's hardest);
// on the separation's grouped-order questions 3 to 8 ms where the default
// with arith.solver=2 took 11 to 54.
z3::solver linearIntegerSolver(z3::context& ctx);

// A fresh QF_BV solver holding `solver`'s assertions: how to ask a check with
// more constraints, in place of push/pop. A push turns Z3's QF_BV solver
// incremental for good, and it then bit-blasts every assertion at the push,
// dividers and multipliers included, before any check (gemm_tc spent 40% of
// its whole compile in Z3_solver_push), where a narrowed question
// (narrow_width.h) is answered without that.
z3::solver copyOfSolver(const z3::solver& solver);

class SolverBudget {
 public:
  // The context an analysis builds its formulas in: the one check() shares
  // (Options::solverContext), or one of its own, made on first use, when an
  // analysis runs alone (unit tests).
  static z3::context& contextFor(const Options& options, std::unique_ptr<z3::context>& own);

  explicit SolverBudget(const Options& options) : options_(options) {}

  // True once the kernel's queries have spent its budget.
  bool spent() const { return spentUnits_ >= options_.kernelRlimit; }
  // What to say in a "cannot prove" when `spent()`.
  std::string spentReason() const;

  // Applies the per-query resource limit (at most what the kernel has left) to `solver`.
  void limit(z3::solver& solver) const;
  // The same, at most `cap` units (an analysis whose queries should stay cheaper).
  void limit(z3::solver& solver, uint64_t cap) const;
  void limit(z3::optimize& optimize) const;
  // solver.check(), counted in the profile and in the kernel's budget. Asked
  // narrowed first (narrow_width.h) where the bounds the assertions put on
  // their unknowns allow: unsatisfiable there is the answer; satisfiable asks
  // the solver itself too, whose model the caller reads.
  z3::check_result check(z3::solver& solver);
  // The same for a caller that reads no model: satisfiable narrowed is the answer as well.
  z3::check_result answer(z3::solver& solver);
  // solver.check() without the narrowed question first (a query that has no narrowed form).
  z3::check_result checkExactly(z3::solver& solver);
  z3::check_result check(z3::solver& solver, const z3::expr_vector& assumptions);
  z3::check_result check(z3::optimize& optimize);
  // Whether `formula` (over bit-vectors) has no model over the integers
  // (integer_reading.h), asked of linearIntegerSolver within `cap` units: then
  // it holds in every launch in which no index computation wraps around. False
  // when the reading does not model an operation, or satisfiable, or undecided.
  bool unsatOverIntegers(const z3::expr& formula, uint64_t cap);
  // Why a solver answered "unknown", in words for a diagnostic.
  std::string unknownReason(z3::solver& solver) const;
  // The same, for a query that was limited to `cap` units.
  std::string unknownReason(z3::solver& solver, uint64_t cap) const;

  uint64_t spentUnits() const { return spentUnits_; }

  // What the next queries are asked for, in the ARGUS_TRACE_QUERIES dump.
  void setTraceLabel(std::string label) { traceLabel_ = std::move(label); }

 private:
  uint64_t queryLimit() const;
  // solver.check(), counted and traced under `label`.
  z3::check_result countedCheck(z3::solver& solver, const std::string& label);
  // The narrowed formula's answer; nullopt when there is none or it is undecided.
  std::optional<z3::check_result> checkNarrowed(const z3::expr& formula);
  // Adds what one query spent: Z3's counter is per context and cumulative, and
  // the context is shared by every analysis of a function (Options::solverContext).
  void account(uint64_t before, uint64_t after, double ms, z3::check_result result);

  const Options& options_;
  uint64_t spentUnits_ = 0;
  uint64_t lastUnits_ = 0;  // of the latest query
  std::string traceLabel_;
};

}  // namespace argus::checker
