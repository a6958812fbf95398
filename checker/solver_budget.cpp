#include "checker/solver_budget.h"

#include <algorithm>
#include <chrono>

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

}  // namespace

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

void SolverBudget::account(Z3_context ctx, uint64_t counter, double ms, z3::check_result result) {
  uint64_t& last = lastCounter_[ctx];
  uint64_t units = counter > last ? counter - last : 0;
  last = std::max(last, counter);
  spentUnits_ += units;
  if (Profile* profile = options_.profile) {
    Profile::Phase& phase = profile->currentPhase();
    phase.queries += 1;
    phase.unknown += result == z3::unknown ? 1 : 0;
    phase.solverMs += ms;
    phase.units += units;
  }
}

z3::check_result SolverBudget::check(z3::solver& solver) {
  Clock::time_point start = Clock::now();
  z3::check_result result = solver.check();
  account(solver.ctx(), resourceCounter(solver.statistics()), msSince(start), result);
  return result;
}

z3::check_result SolverBudget::check(z3::solver& solver, const z3::expr_vector& assumptions) {
  Clock::time_point start = Clock::now();
  z3::check_result result = solver.check(assumptions);
  account(solver.ctx(), resourceCounter(solver.statistics()), msSince(start), result);
  return result;
}

z3::check_result SolverBudget::check(z3::optimize& optimize) {
  Clock::time_point start = Clock::now();
  z3::check_result result = optimize.check();
  account(optimize.ctx(), resourceCounter(optimize.statistics()), msSince(start), result);
  return result;
}

std::string SolverBudget::unknownReason(z3::solver& solver) const {
  std::string reason = solver.reason_unknown();
  // Z3 says "canceled" when a query exhausts its resource limit.
  if (reason == "canceled" || reason.find("resource") != std::string::npos || reason.find("rlimit") != std::string::npos)
    return spent() ? spentReason()
                   : "the query needs more than its limit of " + std::to_string(options_.queryRlimit) +
                         " solver resource units";
  return reason;
}

}  // namespace argus::checker
