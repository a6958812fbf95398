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
  for (const auto& fn : module.functions)
    if (fn) {
      checkSharedSync(*fn, diags, file, options);
      checkAsyncCopies(*fn, diags, file, options);
      checkMbarriers(*fn, diags, file, options);
      checkWgmmaDescriptors(*fn, diags);
      checkTagAssertions(*fn, diags, file, options);
    }
  for (const auto& fn : module.functions)
    if (fn) {
      checkBuiltinInvariants(*fn, diags, file, options);
      checkGlobalSeparation(*fn, diags, options);
    }
}

}  // namespace argus::checker
