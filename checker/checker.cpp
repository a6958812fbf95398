#include "checker/checker.h"

#include "checker/sync_check.h"

namespace argus::checker {

void check(const ir::Module& module, DiagnosticSink& diags, const SourceFile* file, const Options& options) {
  for (const auto& fn : module.functions)
    if (fn) checkSharedSync(*fn, diags, file, options);
}

}  // namespace argus::checker
