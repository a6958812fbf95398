// Collects the shared-memory accesses of a function and walks its phases.
//
// The walk keeps the set of accesses that ran since the last barrier on some
// path ("pending"). Each new access is compared with every pending one. If
// branches join by union (path-insensitive, sound). A loop body is walked twice:
// once from the state before the loop, and once from what the first walk left
// pending at the end of the body, marked as coming from the previous iteration
// (Next when the body has a barrier at its top level, otherwise from any earlier
// iteration: Later). That covers every pair of iterations by induction.
#include "checker/sync_walk.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "ir/async.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::TypeKind;

namespace {

// True when every path through the block crosses a barrier: one at its top
// level, or an `if` whose branches all do (a loop may run zero times).
bool alwaysBarriers(const Block& b) {
  for (const auto& op : b.ops) {
    if (ir::opInfo(op->kind).sync == ir::SyncKind::BlockBarrier) return true;
    if (op->kind == OpKind::If && !op->regions.empty()) {
      bool all = true;
      for (const Block& region : op->regions) all = all && alwaysBarriers(region);
      if (all) return true;
    }
  }
  return false;
}

class Collector {
 public:
  Collector(const ir::Function& fn, FunctionAccesses& out) : fn_(fn), out_(out) {
    out_.valueLoops.assign(fn.values.size(), {});
  }

  void block(const Block& b) {
    for (ir::ValueId arg : b.args) setLoops(arg);
    for (const auto& op : b.ops) visit(*op);
  }

 private:
  void setLoops(ir::ValueId id) {
    if (id < out_.valueLoops.size()) out_.valueLoops[id] = stack_;
  }

  ir::ValueId bufferOf(ir::ValueId view) const { return ir::sharedBufferOf(fn_, view); }

  void addAccess(const Op& op, AccessRole role, ir::ValueId view, const ir::Layout& layout) {
    ir::ValueId buffer = bufferOf(view);
    if (buffer == ir::kNoValue) return;
    Access a;
    a.op = &op;
    a.role = role;
    a.buffer = buffer;
    a.view = view;
    a.layout = layout;
    a.loops = stack_;
    out_.accesses.push_back(std::move(a));
  }

  const ir::Type* type(ir::ValueId id) const { return id < fn_.values.size() ? &fn_.values[id].type : nullptr; }

  void visit(const Op& op) {
    for (ir::ValueId r : op.results) setLoops(r);
    for (const ir::MemoryEffect& effect : ir::memoryEffects(fn_, op)) collect(op, effect);
    if (op.kind == OpKind::For && !op.regions.empty()) {
      LoopInfo info;
      info.op = &op;
      info.enclosing = stack_;
      info.definiteBarrier = alwaysBarriers(op.regions[0]);
      out_.loops.push_back(info);
      stack_.push_back(static_cast<int>(out_.loops.size() - 1));
      block(op.regions[0]);
      stack_.pop_back();
      return;
    }
    for (const Block& region : op.regions) block(region);
  }

  // One declared effect (ir/ops.def) of `op` on shared memory, as an access of the phase walk.
  void collect(const Op& op, const ir::MemoryEffect& effect) {
    if (effect.space != ir::MemSpace::Shared) return;  // global memory: invariant_separation.cpp
    // Writes that complete on an mbarrier (TMA) are ordered by its phases, which
    // mbarrier_check.cpp proves; the phase walk orders accesses by barriers only.
    if (effect.decl->completion == ir::Completion::Mbarrier) return;
    auto dot = ir::as<ir::DotOp>(op);
    std::optional<AccessRole> role = accessRoleOf(op.kind, *effect.decl, dot && dot->transB());
    std::optional<ir::Layout> layout = ir::effectLayout(fn_, op, *effect.decl);
    if (!role || !layout) {
      out_.unmodeled.push_back(&op);
      return;
    }
    addAccess(op, *role, effect.view, *layout);
  }

  const ir::Function& fn_;
  FunctionAccesses& out_;
  std::vector<int> stack_;
};

using PendingSet = std::vector<Pending>;

void addUnique(PendingSet& set, const Pending& p) {
  if (std::find(set.begin(), set.end(), p) == set.end()) set.push_back(p);
}

class PhaseWalker {
 public:
  PhaseWalker(const FunctionAccesses& fa, const std::function<void(const Pending&, int)>& conflict)
      : fa_(fa), conflict_(conflict) {
    for (size_t i = 0; i < fa.accesses.size(); ++i) accessesOf_[fa.accesses[i].op].push_back(static_cast<int>(i));
    for (size_t i = 0; i < fa.loops.size(); ++i) loopOf_[fa.loops[i].op] = static_cast<int>(i);
  }

  PendingSet block(const Block& b, PendingSet pending) {
    for (const auto& op : b.ops) visit(*op, pending);
    return pending;
  }

 private:
  void visit(const Op& op, PendingSet& pending) {
    if (ir::opInfo(op.kind).sync == ir::SyncKind::BlockBarrier) {
      pending.clear();
      return;
    }
    if (auto it = accessesOf_.find(&op); it != accessesOf_.end()) {
      for (int a : it->second) {
        for (const Pending& p : pending) compare(p, a);
      }
      for (int a : it->second) {
        Pending p;
        p.access = a;
        p.relation.assign(fa_.accesses[static_cast<size_t>(a)].loops.size(), IterRelation::Same);
        addUnique(pending, p);
      }
      return;
    }
    if (op.kind == OpKind::If) {
      PendingSet joined;
      for (const Block& region : op.regions)
        for (const Pending& p : block(region, pending)) addUnique(joined, p);
      if (op.regions.size() < 2)
        for (const Pending& p : pending) addUnique(joined, p);
      pending = std::move(joined);
      return;
    }
    if (op.kind == OpKind::For) {
      auto it = loopOf_.find(&op);
      if (it == loopOf_.end() || op.regions.empty()) return;
      const LoopInfo& loop = fa_.loops[static_cast<size_t>(it->second)];
      size_t depth = loop.enclosing.size();
      PendingSet first = block(op.regions[0], pending);
      // What the body leaves pending meets the next iteration's accesses.
      PendingSet carried;
      for (Pending p : first) {
        const Access& a = fa_.accesses[static_cast<size_t>(p.access)];
        if (a.loops.size() <= depth || a.loops[depth] != it->second) continue;
        if (p.relation[depth] == IterRelation::Same)
          p.relation[depth] = loop.definiteBarrier ? IterRelation::Next : IterRelation::Later;
        addUnique(carried, p);
      }
      PendingSet second = carried.empty() ? PendingSet{} : block(op.regions[0], carried);
      // After the loop: it may have run zero times, or ended in any iteration.
      for (const Pending& p : first) addUnique(pending, p);
      for (const Pending& p : second) addUnique(pending, p);
      return;
    }
    // Any other op with regions (none today): its regions run in order.
    for (const Block& region : op.regions) pending = block(region, pending);
  }

  void compare(const Pending& earlier, int later) {
    const Access& a = fa_.accesses[static_cast<size_t>(earlier.access)];
    const Access& b = fa_.accesses[static_cast<size_t>(later)];
    if (a.buffer != b.buffer || (!a.isWrite() && !b.isWrite())) return;
    conflict_(earlier, later);
  }

  const FunctionAccesses& fa_;
  const std::function<void(const Pending&, int)>& conflict_;
  std::unordered_map<const Op*, std::vector<int>> accessesOf_;
  std::unordered_map<const Op*, int> loopOf_;
};

}  // namespace

std::optional<AccessRole> accessRoleOf(ir::OpKind kind, const ir::EffectDecl& effect, bool transB) {
  const bool read = effect.access == ir::MemoryAccess::Read;
  switch (effect.elements) {
    case ir::EffectElements::ResultLayout: return read ? std::optional(AccessRole::Load) : std::nullopt;
    case ir::EffectElements::StoredValueLayout: return read ? std::nullopt : std::optional(AccessRole::Store);
    case ir::EffectElements::AsyncCopyChunks: return read ? std::nullopt : std::optional(AccessRole::AsyncCopy);
    case ir::EffectElements::AccumulatorLayout:
      if (kind != OpKind::Dot || !read) return std::nullopt;
      if (effect.operand == 0) return AccessRole::DotA;
      return transB ? AccessRole::DotBTransposed : AccessRole::DotB;
    case ir::EffectElements::WholeViewOneThread: return std::nullopt;
  }
  return std::nullopt;
}

FunctionAccesses collectAccesses(const ir::Function& fn) {
  FunctionAccesses out;
  Collector(fn, out).block(fn.body);
  return out;
}

void walkPhases(const ir::Function& fn, const FunctionAccesses& fa,
                const std::function<void(const Pending&, int)>& conflict) {
  if (fa.accesses.empty()) return;
  PhaseWalker(fa, conflict).block(fn.body, {});
}

}  // namespace argus::checker
