// The mbarrier and bulk-copy (TMA) check (internal to the checker): every
// mbarrier is initialized and published before use, each phase gets the
// arrivals and transaction bytes it expects, each wait observes the phase of
// the copies it guards (parity, for every iteration, by induction over the
// waits of each mbarrier), no thread touches a copy_bulk's destination before
// the wait that completes it, and no copy_bulk overwrites elements still read
// or still in flight. AG2050-AG2057; AG2004 when it cannot decide.
#pragma once

#include "checker/checker.h"

namespace argus::checker {

void checkMbarriers(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options);

// AG2053 / AG2054 alone (mbarrier_tx.cpp); checkMbarriers runs it.
void checkBulkTransactions(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file,
                           const Options& options);

// The transaction bytes of a copy_bulk: elements of its destination view times the dtype's size.
int64_t bulkCopyBytes(const ir::Function& fn, const ir::Op& copy);

}  // namespace argus::checker
