// Fix-its of the checker are verified before anyone is offered them (issue 22, deliverable 4).
// A fix-it stays on its diagnostic only when
//   1. the source with its edit applied has no error the original did not have, and not the
//      one the fix-it is attached to (re-checked as argusc would: the same options); and,
//      when the fixed source checks without any error,
//   2. the CPU interpreter runs the fixed kernel at the sizes of the diagnostic's
//      counterexample, at every size 64 and at every size 97 (a ragged edge) without a
//      fault, and with the outputs that the same kernel computes when every copy_async is
//      synchronous (interp::RunOptions::synchronousCopies), on the same random inputs.
// A fix-it that fails either is withheld, and its diagnostic gets a note saying why, so a
// user (or the agent) is never handed an edit that silently computes something else.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/compilation.h"
#include "ir/ir.h"

namespace argus {

// The runtime sizes of `fn` that the counterexample of `d` names in its launch fact
// ("K = 17, program_id(0) = 1" gives K = 17).
std::map<std::string, int64_t> counterexampleSizes(const Diagnostic& d, const ir::Function& fn);

// The interpreter's half: why a kernel fails it at the sizes `witness` names (others 64), at
// every size 64 and at every size 97 (a fault, or outputs other than those of its run with
// synchronous copies on the same inputs), or nothing when it passes.
std::optional<std::string> differsFromSynchronousCopies(const ir::Module& module,
                                                        const std::map<std::string, int64_t>& witness);

// Verifies the fix-its of `diagnostics[first..]` (those the checker just reported for `file`),
// compiled with `options`; removes the ones that fail and notes why.
void verifyCheckerFixits(const SourceFile& file, const CompileOptions& options, std::vector<Diagnostic>& diagnostics,
                         size_t first);

}  // namespace argus
