// The compiler's policy passes, IR to IR, in the order they run between sema and the checker:
// the one list that Compilation, `argusc opt` and the tests read. Each pass decides something
// the program left to the compiler (which instruction a `dot` uses, how wide a thread's
// accesses are, how a `pipelined` loop overlaps its copies) or proves what such a decision
// needs (clusters); the checker then validates the IR the passes produced.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "ir/ir.h"
#include "support/diagnostic.h"

namespace argus::ir {

struct PassContext {
  std::string arch = "sm_90";
  const SourceFile* file = nullptr;  // the source the IR came from (pipelining's notes quote it)
  DiagnosticSink* diags = nullptr;   // null: the passes' diagnostics are dropped
};

struct Pass {
  const char* name;     // as `argusc opt --pass=NAME` spells it
  const char* summary;  // one line, for `argusc opt --help`
  void (*run)(Module& module, const PassContext& context);
};

// Every pass, in the order the compiler runs them.
std::span<const Pass> policyPasses();
// The pass called `name`, or null.
const Pass* findPass(std::string_view name);
// Runs `passes` in order; `after` (when set) sees the module after each one.
void runPasses(Module& module, std::span<const Pass* const> passes, const PassContext& context,
               const std::function<void(const Pass&, const Module&)>& after = {});

}  // namespace argus::ir
