#include "ir/passes.h"

#include <vector>

#include "ir/cluster.h"
#include "ir/dot_layout.h"
#include "ir/pipeline.h"
#include "ir/vector_layout.h"

namespace argus::ir {

namespace {

// Passes that report take a sink; without the caller's, theirs is dropped.
template <typename F>
void withSink(const PassContext& context, F&& run) {
  if (context.diags) return run(*context.diags);
  DiagnosticSink dropped;
  run(dropped);
}

const Pass kPasses[] = {
    {"dot-layouts",
     "gives each dot on 16-bit shared operands whose accumulator the program left in the default layout "
     "the tensor-core layout of its instruction (wgmma on sm_90a, else mma.sync)",
     [](Module& module, const PassContext& context) { chooseDotLayouts(module, context.arch); }},
    {"vector-layouts",
     "widens the per-thread accesses of global loads and stores to 16 bytes where the layout allows",
     [](Module& module, const PassContext& context) {
       chooseVectorLayouts(module, context.arch, context.diags);
     }},
    {"clusters",
     "proves that every multicast copy names the same tile in every block of a cluster (AG4048); changes nothing",
     [](Module& module, const PassContext& context) {
       withSink(context, [&](DiagnosticSink& diags) { checkClusters(module, diags); });
     }},
    {"pipelining",
     "rewrites pipelined(n, stages=S) loops into prologue, steady loop and epilogue with cp.async groups or "
     "mbarriers",
     [](Module& module, const PassContext& context) {
       withSink(context, [&](DiagnosticSink& diags) { applyPipelining(module, context.file, diags); });
     }},
};

}  // namespace

std::span<const Pass> policyPasses() { return kPasses; }

const Pass* findPass(std::string_view name) {
  for (const Pass& pass : kPasses)
    if (name == pass.name) return &pass;
  return nullptr;
}

void runPasses(Module& module, std::span<const Pass* const> passes, const PassContext& context,
               const std::function<void(const Pass&, const Module&)>& after) {
  for (const Pass* pass : passes) {
    pass->run(module, context);
    if (after) after(*pass, module);
  }
}

}  // namespace argus::ir
