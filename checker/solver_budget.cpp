#include "checker/solver_budget.h"

#include "checker/integer_reading.h"
#include "checker/narrow_width.h"

#include <algorithm>
#include <chrono>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace argus::checker {

namespace {

// Z3's "rlimit count": the resources its context has spent so far.
uint64_t resourceCounter(const z3::stats& stats) {
  for (unsigned i = 0; i < stats.size(); ++i)
    if (stats.key(i) == "rlimit count")
      return stats.is_uint(i) ? stats.uint_value(i) : static_cast<uint64_t>(stats.double_value(i));
  return 0;
}

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// ARGUS_TRACE_QUERIES=DIR writes every query the checker asks to DIR/qNNNNN.smt2, with its
// analysis, answer, wall time and resource units in a leading comment (for tuning the encodings).
const char* traceDirectory() {
  static const char* dir = std::getenv("ARGUS_TRACE_QUERIES");
  return dir && *dir ? dir : nullptr;
}

// What the trace prints of a query, taken before the check (empty when not
// tracing): a solver made from tactics (bitVectorSolver) prints no assertions
// of its own, and one that gives up keeps its bit-blasted goal in their place;
// a plain solver holding the same assertions prints them.
std::string assertionsText(const z3::solver& solver) {
  return traceDirectory() ? copyOfSolver(solver).to_smt2() : std::string();
}

void traceQuery(const Options& options, const std::string& label, const std::string& formula, double ms,
                uint64_t units, z3::check_result result) {
  const char* dir = traceDirectory();
  if (!dir) return;  // the common case: no formula is printed
  static std::atomic<int> next{0};
  char name[32];
  std::snprintf(name, sizeof name, "/q%05d.smt2", next++);
  std::ofstream out(std::string(dir) + name);
  const char* phase = options.profile ? options.profile->currentPhase().name.c_str() : "?";
  out << "; phase " << phase << " answer " << (result == z3::sat ? "sat" : result == z3::unsat ? "unsat" : "unknown")
      << " ms " << ms << " units " << units << " label " << label << "\n"
      << formula;
}

}  // namespace

z3::solver bitVectorSolver(z3::context& ctx) {
  z3::tactic steps = z3::tactic(ctx, "simplify") & z3::tactic(ctx, "propagate-values") & z3::tactic(ctx, "solve-eqs") &
                     z3::tactic(ctx, "simplify") & z3::tactic(ctx, "bit-blast") & z3::tactic(ctx, "sat");
  return steps.mk_solver();
}

z3::solver linearIntegerSolver(z3::context& ctx) {
  z3::params olderArithmetic(ctx);
  olderArithmetic.set("arith.solver", 2u);
  z3::tactic steps = z3::tactic(ctx, "simplify") & z3::tactic(ctx, "propagate-values") & z3::tactic(ctx, "solve-eqs") &
                     z3::with(z3::tactic(ctx, "smt"), olderArithmetic);
  return steps.mk_solver();
}

z3::solver copyOfSolver(const z3::solver& solver) {
  z3::solver copy(solver.ctx(), "QF_BV");
  for (const z3::expr& e : solver.assertions()) copy.add(e);
  return copy;
}

z3::context& SolverBudget::contextFor(const Options& options, std::unique_ptr<z3::context>& own) {
  if (options.solverContext) return options.solverContext->get();
  if (!own) own = std::make_unique<z3::context>();
  return *own;
}

std::string SolverBudget::spentReason() const {
  return "the checker's solver budget for this kernel (" + std::to_string(options_.kernelRlimit) +
         " resource units) is spent";
}

uint64_t SolverBudget::queryLimit() const {
  uint64_t left = spent() ? 1 : options_.kernelRlimit - spentUnits_;
  // Z3 takes an unsigned; 0 would mean "no limit".
  return std::clamp<uint64_t>(std::min(options_.queryRlimit, left), 1, 0xFFFFFFFFu);
}

void SolverBudget::limit(z3::solver& solver) const {
  z3::params params(solver.ctx());
  params.set("rlimit", static_cast<unsigned>(queryLimit()));
  solver.set(params);
}

void SolverBudget::limit(z3::solver& solver, uint64_t cap) const {
  z3::params params(solver.ctx());
  params.set("rlimit", static_cast<unsigned>(std::clamp<uint64_t>(std::min(cap, queryLimit()), 1, 0xFFFFFFFFu)));
  solver.set(params);
}

void SolverBudget::limit(z3::optimize& optimize) const {
  z3::params params(optimize.ctx());
  params.set("rlimit", static_cast<unsigned>(queryLimit()));
  optimize.set(params);
}

void SolverBudget::account(uint64_t before, uint64_t after, double ms, z3::check_result result) {
  uint64_t units = after > before ? after - before : 0;
  spentUnits_ += units;
  lastUnits_ = units;
  if (Profile* profile = options_.profile) {
    Profile::Phase& phase = profile->currentPhase();
    phase.queries += 1;
    phase.unknown += result == z3::unknown ? 1 : 0;
    phase.solverMs += ms;
    phase.units += units;
  }
}

std::optional<z3::check_result> SolverBudget::checkNarrowed(const z3::expr& formula) {
  std::optional<z3::expr> narrow = narrowedFormula(formula);
  if (!narrow) return std::nullopt;
  z3::solver solver = bitVectorSolver(formula.ctx());
  limit(solver);
  solver.add(*narrow);
  z3::check_result result = countedCheck(solver, traceLabel_ + " (narrowed)");
  if (result == z3::unknown) return std::nullopt;
  return result;
}

z3::check_result SolverBudget::check(z3::solver& solver) {
  if (std::optional<z3::check_result> narrowed = checkNarrowed(z3::mk_and(solver.assertions())))
    if (*narrowed == z3::unsat) return z3::unsat;
  return checkExactly(solver);
}

z3::check_result SolverBudget::answer(z3::solver& solver) {
  if (std::optional<z3::check_result> narrowed = checkNarrowed(z3::mk_and(solver.assertions()))) return *narrowed;
  return checkExactly(solver);
}

z3::check_result SolverBudget::checkExactly(z3::solver& solver) { return countedCheck(solver, traceLabel_); }

z3::check_result SolverBudget::countedCheck(z3::solver& solver, const std::string& label) {
  const std::string text = assertionsText(solver);
  uint64_t before = resourceCounter(solver.statistics());
  Clock::time_point start = Clock::now();
  z3::check_result result = solver.check();
  double ms = msSince(start);
  account(before, resourceCounter(solver.statistics()), ms, result);
  if (traceDirectory()) traceQuery(options_, label, text, ms, lastUnits_, result);
  return result;
}

z3::check_result SolverBudget::check(z3::solver& solver, const z3::expr_vector& assumptions) {
  if (std::optional<z3::check_result> narrowed =
          checkNarrowed(z3::mk_and(solver.assertions()) && z3::mk_and(assumptions)))
    if (*narrowed == z3::unsat) return z3::unsat;
  std::string text = assertionsText(solver);
  uint64_t before = resourceCounter(solver.statistics());
  Clock::time_point start = Clock::now();
  z3::check_result result = solver.check(assumptions);
  double ms = msSince(start);
  account(before, resourceCounter(solver.statistics()), ms, result);
  if (traceDirectory()) {
    text += "; under the assumptions\n";
    for (unsigned i = 0; i < assumptions.size(); ++i) text += "; " + assumptions[static_cast<int>(i)].to_string() + "\n";
    traceQuery(options_, traceLabel_ + " (assumptions)", text, ms, lastUnits_, result);
  }
  return result;
}

z3::check_result SolverBudget::check(z3::optimize& optimize) {
  uint64_t before = resourceCounter(optimize.statistics());
  Clock::time_point start = Clock::now();
  z3::check_result result = optimize.check();
  double ms = msSince(start);
  account(before, resourceCounter(optimize.statistics()), ms, result);
  if (traceDirectory()) {
    std::ostringstream text;
    text << optimize;
    traceQuery(options_, traceLabel_ + " (optimize)", text.str(), ms, lastUnits_, result);
  }
  return result;
}

bool SolverBudget::unsatOverIntegers(const z3::expr& formula, uint64_t cap) {
  std::optional<z3::expr> overIntegers = readAsIntegers(formula);
  if (!overIntegers) return false;
  z3::solver solver = linearIntegerSolver(formula.ctx());
  limit(solver, cap);
  solver.add(*overIntegers);
  return countedCheck(solver, traceLabel_ + " (integers)") == z3::unsat;
}

std::string SolverBudget::unknownReason(z3::solver& solver) const { return unknownReason(solver, options_.queryRlimit); }

std::string SolverBudget::unknownReason(z3::solver& solver, uint64_t cap) const {
  std::string reason = solver.reason_unknown();
  // Z3 says "canceled" when a query exhausts its resource limit.
  if (reason.find("canceled") != std::string::npos || reason.find("resource") != std::string::npos || reason.find("rlimit") != std::string::npos)
    return spent() ? spentReason()
                   : "the query needs more than its limit of " + std::to_string(std::min(cap, options_.queryRlimit)) +
                         " solver resource units";
  return reason;
}

}  // namespace argus::checker
