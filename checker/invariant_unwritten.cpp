// Shared buffers that are read but never written (AG2037). Shared memory starts
// each block with whatever the SM held before (another block's data, or
// garbage), so a buffer the kernel reads must be written by it first: a copy
// into it, an asynchronous copy (cp.async, TMA) or a store. A kernel that
// forgets one (say, the copy of attention's query tile) runs without a fault
// and computes on stale data; this catches the whole-buffer case before
// anything runs. Which elements a partial write covers, and whether every read
// comes after its write, is the synchronization checker's business
// (docs/checker.md).
#include <unordered_map>
#include <unordered_set>

#include "checker/invariant_check.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::OpKind;

namespace {

// What an op does with its operand `i` when that is a view of shared memory, as its memory
// effects (ir/ops.def) declare: views only name memory, and tags and assertions touch no data.
enum class Use { None, Read, Write };
Use useOf(const ir::Op& op, size_t i) {
  Use use = Use::None;
  for (const ir::EffectDecl& effect : ir::opInfo(op.kind).effects) {
    if (effect.operand != i) continue;
    if (effect.access == ir::MemoryAccess::Write) return Use::Write;
    use = Use::Read;
  }
  return use;
}

std::string readWord(const ir::Op& op) {
  return std::string(ir::opKindName(op.kind)) + " reads";
}

}  // namespace

void checkSharedWritten(const ir::Function& fn, DiagnosticSink& diags) {
  std::vector<ir::ValueId> order;                            // buffers in order of first read
  std::unordered_map<ir::ValueId, const ir::Op*> firstRead;  // buffer -> its first read
  std::unordered_set<ir::ValueId> written;
  forEachOpWithDepth(fn.body, 0, [&](const ir::Op& op, int) {
    for (size_t i = 0; i < op.operands.size(); ++i) {
      ir::ValueId buffer = ir::sharedBufferOf(fn, op.operands[i]);
      if (buffer == ir::kNoValue) continue;
      Use use = useOf(op, i);
      if (use == Use::Write) written.insert(buffer);
      if (use == Use::Read && firstRead.emplace(buffer, &op).second) order.push_back(buffer);
    }
  });
  for (ir::ValueId buffer : order) {
    if (written.count(buffer)) continue;
    const ir::Op* read = firstRead.at(buffer);
    const std::string name = sharedName(fn, buffer);
    Diagnostic& d = diags.report(DiagId::SharedNeverWritten, read->range, {readWord(*read), name});
    if (const ir::Op* alloc = fn.values[buffer].def) d.labels.push_back(Label{alloc->range, "'" + name + "' is declared here"});
    Counterexample cx;
    cx.thread = 0;
    cx.warp = 0;
    cx.lane = 0;
    std::string origin;
    for (size_t a = 0; a < std::max<size_t>(1, fn.typeOf(buffer).shape.size()); ++a) origin += a ? ", 0" : "0";
    cx.facts.emplace_back("element", name + "[" + origin + "]");
    cx.facts.emplace_back("writes", "none in the kernel");
    d.counterexample = std::move(cx);
    d.notes.push_back("write '" + name + "' before reading it: copy(" + name + ", ...) and barrier(), copy_async(" + name +
                      ", ...) in a pipelined loop, or copy_bulk(" + name + ", ...) on sm_90a");
  }
}

}  // namespace argus::checker
