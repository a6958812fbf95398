#include "checker/checker.h"

#include <chrono>

#include "checker/async_check.h"
#include "checker/invariant_check.h"
#include "checker/mbarrier_check.h"
#include "checker/solver_budget.h"
#include "checker/sync_check.h"
#include "checker/tag_check.h"
#include "checker/wgmma_check.h"

namespace argus::checker {

// Separation of global stores (AG2036), checker/invariant_separation.cpp.
void checkGlobalSeparation(const ir::Function& fn, DiagnosticSink& diags, const Options& options);

namespace {

// Runs one analysis, adding its wall time to its phase of the profile (when one is asked for).
template <typename Analysis>
void timed(const Options& options, const char* name, const Analysis& analysis) {
  Profile* profile = options.profile;
  if (!profile) return analysis();
  size_t index = 0;
  while (index < profile->phases.size() && profile->phases[index].name != name) ++index;
  if (index == profile->phases.size()) profile->phases.push_back({name});
  profile->current = index;
  auto start = std::chrono::steady_clock::now();
  analysis();
  profile->phases[index].ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void check(const ir::Module& module, DiagnosticSink& diags, const SourceFile* file, const Options& given) {
  auto stop = [&] { return given.cancelled && given.cancelled(); };
  for (const auto& fn : module.functions) {
    if (!fn || (given.accept && !given.accept(*fn))) continue;
    if (stop()) return;
    // One Z3 context per function, shared by its analyses (Options::solverContext)
    // and gone when they are done (an empty context holds about 17 MB): per
    // function, so that a kernel gets the same answers and counterexamples
    // whether it is checked alone (an editor's re-check) or with the whole file.
    SharedSolverContext context;
    Options options = given;
    if (!options.solverContext) options.solverContext = &context;
    timed(options, "sync", [&] { checkSharedSync(*fn, diags, file, options); });
    if (stop()) return;
    timed(options, "async", [&] { checkAsyncCopies(*fn, diags, file, options); });
    if (stop()) return;
    timed(options, "mbarrier", [&] { checkMbarriers(*fn, diags, file, options); });
    timed(options, "wgmma", [&] { checkWgmmaDescriptors(*fn, diags); });
    if (stop()) return;
    timed(options, "tags", [&] { checkTagAssertions(*fn, diags, file, options); });
    if (stop()) return;
    timed(options, "invariants", [&] { checkBuiltinInvariants(*fn, diags, file, options); });
    if (stop()) return;
    timed(options, "separation", [&] { checkGlobalSeparation(*fn, diags, options); });
  }
}

}  // namespace argus::checker
