// Tag assertions (internal to the checker): every `assert` over tags is proven
// for every thread, value and loop iteration that reaches it, or reported with
// a counterexample (AG2010), or as "cannot prove" (AG2004). It reads `fn` as
// the user wrote it (fn.asWritten when the pipelining policy rewrote it).
#pragma once

#include "checker/checker.h"

namespace argus::checker {

void checkTagAssertions(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options);

}  // namespace argus::checker
