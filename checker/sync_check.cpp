// The shared-memory synchronization check: every pair of accesses the phase
// walk finds without a barrier between them becomes one Z3 query "two different
// threads touch the same element"; a model is a counterexample.
#include "checker/sync_check.h"

#include <z3++.h>

#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "checker/solver_budget.h"
#include "checker/sync_encode.h"
#include "checker/sync_report.h"
#include "checker/sync_walk.h"

namespace argus::checker {

namespace {

class SyncChecker {
 public:
  SyncChecker(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options)
      : fn_(fn), diags_(diags), file_(file), options_(options) {}

  void run() {
    fa_ = collectAccesses(fn_);
    for (const ir::Op* op : fa_.unmodeled)
      diags_.report(DiagId::CheckerCannotProve, op->range,
                    {"the shared-memory accesses of this " + std::string(ir::opKindName(op->kind)) +
                         " are free of races",
                     "the checker does not know which elements each thread touches for it; the CPU "
                     "interpreter checks the launches it runs"});
    // A buffer nobody stores to cannot race.
    std::set<ir::ValueId> written;
    for (const Access& a : fa_.accesses)
      if (a.isWrite()) written.insert(a.buffer);
    if (written.empty()) return;
    walkPhases(fn_, fa_, [this](const Pending& earlier, int later) { query(earlier, later); });
  }

 private:
  void query(const Pending& earlier, int later) {
    const Access& a = fa_.accesses[static_cast<size_t>(earlier.access)];
    const Access& b = fa_.accesses[static_cast<size_t>(later)];
    auto pairKey = std::make_tuple(a.op, b.op, a.buffer);
    if (reported_.count(pairKey)) return;
    // The relation matters only up to the first loop where the iterations differ.
    std::vector<IterRelation> relation;
    for (size_t d = 0; d < a.loops.size() && d < b.loops.size() && a.loops[d] == b.loops[d]; ++d) {
      relation.push_back(earlier.relation[d]);
      if (earlier.relation[d] != IterRelation::Same) break;
    }
    auto key = std::make_tuple(earlier.access, later, relation);
    if (!asked_.insert(key).second) return;
    if (budget_.spent()) {
      reported_.insert(pairKey);
      reportCannotProve(RacePair{fn_, fa_, earlier, later, file_}, budget_.spentReason(), diags_);
      return;
    }
    try {
      if (!ctx_) ctx_ = &SolverBudget::contextFor(options_, ownContext_);
      PairEncoder encoder(*ctx_, fn_, fa_);
      Side first, second;
      PairEncoder::Answer answer = encoder.solve(earlier, later, first, second, budget_);
      if (answer.result == z3::unsat) return;
      reported_.insert(pairKey);
      RacePair pair{fn_, fa_, earlier, later, file_};
      if (answer.model)
        reportRace(pair, *answer.model, encoder, first, second, diags_);
      else
        reportCannotProve(pair, "the solver gave up (" + answer.reason + ")", diags_);
    } catch (const z3::exception& e) {
      reported_.insert(pairKey);
      reportCannotProve(RacePair{fn_, fa_, earlier, later, file_}, std::string("the solver failed: ") + e.msg(),
                        diags_);
    }
  }

  const ir::Function& fn_;
  DiagnosticSink& diags_;
  const SourceFile* file_;
  const Options& options_;
  FunctionAccesses fa_;
  std::unique_ptr<z3::context> ownContext_;  // only when check() gave none
  z3::context* ctx_ = nullptr;
  SolverBudget budget_{options_};
  std::set<std::tuple<int, int, std::vector<IterRelation>>> asked_;
  std::set<std::tuple<const ir::Op*, const ir::Op*, ir::ValueId>> reported_;
};

}  // namespace

void checkSharedSync(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options) {
  SyncChecker(fn, diags, file, options).run();
}

}  // namespace argus::checker
