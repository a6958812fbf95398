#include "checker/checker.h"

#include "checker/async_check.h"
#include "checker/invariant_check.h"
#include "checker/mbarrier_check.h"
#include "checker/sync_check.h"
#include "checker/tag_check.h"
#include "checker/wgmma_check.h"

namespace argus::checker {

// Separation of global stores (AG2036), checker/invariant_separation.cpp.
void checkGlobalSeparation(const ir::Function& fn, DiagnosticSink& diags, const Options& options);

void check(const ir::Module& module, DiagnosticSink& diags, const SourceFile* file, const Options& options) {
  auto stop = [&] { return options.cancelled && options.cancelled(); };
  auto skip = [&](const std::unique_ptr<ir::Function>& fn) { return !fn || (options.accept && !options.accept(*fn)); };
  for (const auto& fn : module.functions) {
    if (skip(fn)) continue;
    if (stop()) return;
    checkSharedSync(*fn, diags, file, options);
    if (stop()) return;
    checkAsyncCopies(*fn, diags, file, options);
    if (stop()) return;
    checkMbarriers(*fn, diags, file, options);
    checkWgmmaDescriptors(*fn, diags);
    if (stop()) return;
    checkTagAssertions(*fn, diags, file, options);
  }
  for (const auto& fn : module.functions) {
    if (skip(fn)) continue;
    if (stop()) return;
    checkBuiltinInvariants(*fn, diags, file, options);
    if (stop()) return;
    checkGlobalSeparation(*fn, diags, options);
  }
}

}  // namespace argus::checker
