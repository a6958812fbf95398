// The slow half of an analysis: the invariant checker and code generation's
// target checks (shared memory per block, sm_90a-only instructions), run on a
// snapshot's Tile IR off the editor's critical path, interruptible, and reusing
// the findings of every kernel whose text did not change since it was last checked.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "lsp/analysis.h"

namespace argus::lsp {

// What earlier checks of one document found, per kernel and for code
// generation, with the text they refer to. Used by one thread at a time.
class CheckCache {
 public:
  struct Base {  // the text the cached diagnostics' ranges refer to
    SourceFile file;
    std::vector<TokenInfo> tokens;
  };
  struct Entry {
    std::string key;  // the tokens the result depends on, and the options
    std::shared_ptr<const Base> base;
    std::vector<Diagnostic> diagnostics;
  };
  std::map<std::string, Entry> kernels;  // by kernel name
  std::optional<Entry> codegen;
  std::string codegenPtx;  // what the code generation of `codegen` produced (empty on errors)
  // What ptxas allocated for the kernels of `codegenPtx`, once measured.
  std::optional<std::vector<codegen::KernelResources>> resources;
};

struct CheckProgress {
  size_t done = 0, total = 0;
  std::string kernel;  // the kernel being checked now
};

struct CheckStats {
  size_t kernelsChecked = 0, kernelsReused = 0;
  bool codegenRan = false, codegenReused = false;
};

// Every diagnostic argusc gives for the snapshot's text (front end, checker,
// code generation; the checker runs only when the front end found no error, code
// generation only when the checker found none either), or nothing when
// `cancelled` returned true before it finished. A cancelled check returns without
// waiting for the code generation it started beside the checker, which holds the
// snapshot until it ends.
std::optional<std::vector<Diagnostic>> checkSnapshot(const std::shared_ptr<const Snapshot>& snapshot, CheckCache& cache,
                                                     const std::function<bool()>& cancelled,
                                                     const std::function<void(const CheckProgress&)>& progress = {},
                                                     CheckStats* stats = nullptr);

// Returns once no code generation started by a check is running; call it before
// the process exits (lsp::Scheduler::stop does).
void waitForBackgroundCodegen();

// What ptxas allocates for each kernel (registers, spills), from the PTX that
// the last check of this very text generated: nothing when that check did not
// reach code generation for it (errors, cancelled, other text or options),
// ptxas is missing or fails, or `cancelled` stopped it (then the next call
// runs it again). Runs ptxas to completion once per generated PTX.
std::optional<std::vector<codegen::KernelResources>> measureResources(const Snapshot& snapshot, CheckCache& cache,
                                                                      const std::string& ptxasPath,
                                                                      const std::function<bool()>& cancelled = {});

// True when the checker would run on the snapshot (the front end found no
// error and there is at least one kernel).
bool needsCheck(const Snapshot& snapshot);

}  // namespace argus::lsp
