// The shared-memory synchronization check (internal to the checker): no read of
// a shared element another thread wrote, and no write of an element another
// thread reads or writes, within one phase (between two barriers).
#pragma once

#include "checker/checker.h"

namespace argus::checker {

void checkSharedSync(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file,
                     const Options& options);

}  // namespace argus::checker
