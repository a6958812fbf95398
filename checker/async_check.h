// The async-copy completion check (internal to the checker): a shared element
// written by copy_async is read only after a wait_group that retires the copy's
// group (same thread) and, for other threads, a barrier() after that wait.
// Reports AG2005 with a counterexample, AG2004 when it cannot decide.
#pragma once

#include "checker/checker.h"

namespace argus::checker {

void checkAsyncCopies(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options);

}  // namespace argus::checker
