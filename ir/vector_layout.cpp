#include "ir/vector_layout.h"

#include <map>
#include <set>
#include <vector>

#include "ir/ops.h"
#include "ir/value_uses.h"

namespace argus::ir {

namespace {

bool isSixteenBitFloat(DType t) { return t == DType::BF16 || t == DType::F16; }

bool isElementwise(OpKind k) {
  return k == OpKind::Binary || k == OpKind::Compare || k == OpKind::Unary || k == OpKind::Fma ||
         k == OpKind::Select || k == OpKind::Cast || k == OpKind::TagSet;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t e : v) p *= e;
  return p;
}

// Threads that hold each element, on average (1: no replicas).
int64_t replication(const Layout& layout, int64_t numWarps) {
  const Distribution dist = Distribution::of(layout, numWarps);
  return numWarps * 32 * dist.valuesPerThread / std::max<int64_t>(1, product(layout.shape()));
}

// The tile values that must share one layout with a 16-bit global access, found
// through definitions and uses (vector_layout.h); `ok` turns false, with a reason, at an
// op this pass does not retype.
class Family {
 public:
  explicit Family(const Function& fn) : fn_(fn) { uses_.index(fn.body); }

  bool gather(ValueId start) {
    members_.clear();
    work_ = {start};
    ok_ = true;
    handledElsewhere_ = false;
    why_.clear();
    while (ok_ && !work_.empty()) {
      const ValueId v = work_.back();
      work_.pop_back();
      if (!fn_.typeOf(v).isTile()) continue;
      if (!members_.insert(v).second) continue;
      definedBy(v);
      if (!ok_) break;
      auto users = uses_.users.find(v);
      if (users == uses_.users.end()) continue;
      for (const auto& [user, operand] : users->second) {
        usedBy(*user, operand);
        if (!ok_) break;
      }
    }
    return ok_;
  }

  const std::set<ValueId>& members() const { return members_; }
  const std::string& why() const { return why_; }
  // Whether the reason is one codegen answers otherwise (shared memory: copy() and the
  // fused shared copies are vectorized; dots and mma tiles: ldmatrix, staged stores).
  bool handledElsewhere() const { return handledElsewhere_; }

 private:
  void fail(const std::string& why, bool handledElsewhere = false) {
    if (ok_) {
      why_ = why;
      handledElsewhere_ = handledElsewhere;
    }
    ok_ = false;
  }

  void add(ValueId v) { work_.push_back(v); }

  void carried(const Op& loop, size_t i) {
    if (loop.operands.size() <= 3 + i || loop.results.size() <= i || loop.regions.empty() ||
        loop.regions[0].args.size() <= 1 + i) {
      fail("a loop carries it in a form this pass does not follow");
      return;
    }
    add(loop.operands[3 + i]);
    add(loop.results[i]);
    add(loop.regions[0].args[1 + i]);
    const Op* yield = ValueUses::yieldOf(loop.regions[0]);
    if (!yield || yield->operands.size() <= i) {
      fail("a loop carries it in a form this pass does not follow");
      return;
    }
    add(yield->operands[i]);
  }

  void branchResult(const Op& branch, size_t i) {
    if (branch.results.size() <= i) {
      fail("a branch yields it in a form this pass does not follow");
      return;
    }
    add(branch.results[i]);
    for (const Block& region : branch.regions) {
      const Op* yield = ValueUses::yieldOf(region);
      if (!yield || yield->operands.size() <= i) {
        fail("a branch yields it in a form this pass does not follow");
        return;
      }
      add(yield->operands[i]);
    }
  }

  void definedBy(ValueId v) {
    const Op* def = fn_.values[v].def;
    if (!def) {
      auto loop = uses_.loopOfArg.find(v);
      if (loop == uses_.loopOfArg.end()) fail("it is a region argument this pass does not follow");
      else carried(*loop->second.first, loop->second.second);
      return;
    }
    const size_t result = fn_.values[v].resultIndex;
    switch (def->kind) {
      case OpKind::Splat: case OpKind::Iota: return;                    // rebuilt in any layout
      case OpKind::Reshape: case OpKind::ConvertLayout: return;         // give any layout
      case OpKind::Load:
        if (fn_.typeOf(LoadOp(*def).view()).space != MemSpace::Global) fail("its family loads from shared memory", true);
        return;
      case OpKind::Broadcast: add(BroadcastOp(*def).x()); return;
      case OpKind::Reduce: add(ReduceOp(*def).x()); return;
      case OpKind::For: carried(*def, result); return;
      case OpKind::If: branchResult(*def, result); return;
      case OpKind::Dot: fail("its family holds the accumulator of a dot", true); return;
      default:
        if (!isElementwise(def->kind)) {
          fail("its family holds the result of an op that keeps its layout");
          return;
        }
        for (ValueId operand : def->operands) add(operand);
    }
  }

  void usedBy(const Op& user, size_t operand) {
    switch (user.kind) {
      case OpKind::Store:
        if (operand == 1 && fn_.typeOf(StoreOp(user).view()).space != MemSpace::Global)
          fail("its family is stored to shared memory", true);
        return;
      case OpKind::Assert: case OpKind::ConvertLayout: case OpKind::Reshape: case OpKind::ReduceAll:
        return;  // consumers of any layout
      case OpKind::Reduce: case OpKind::Broadcast: add(user.results[0]); return;
      case OpKind::Dot: fail("its family feeds a dot", true); return;
      case OpKind::For:
        if (operand < 3) fail("its family is a loop bound");
        else carried(user, operand - 3);
        return;
      case OpKind::Yield: {
        auto parent = uses_.parentOf.find(&user);
        if (parent == uses_.parentOf.end() || !parent->second) fail("a region yields it in a form this pass does not follow");
        else if (parent->second->kind == OpKind::For) carried(*parent->second, operand);
        else branchResult(*parent->second, operand);
        return;
      }
      default:
        if (!isElementwise(user.kind)) {
          fail("its family feeds an op that keeps its layout");
          return;
        }
        for (ValueId r : user.results) add(r);
        for (ValueId o : user.operands) add(o);
    }
  }

  const Function& fn_;
  ValueUses uses_;
  std::set<ValueId> members_;
  std::vector<ValueId> work_;
  bool ok_ = true;
  bool handledElsewhere_ = false;
  std::string why_;
};

// A 16-bit global load's result or a 16-bit global store's tile: where families start.
struct Access {
  const Op* op;
  ValueId tile;
};

void collectAccesses(const Function& fn, const Block& block, std::vector<Access>& out) {
  for (const auto& op : block.ops) {
    if (op->kind == OpKind::Load && !op->operands.empty() && op->results.size() == 1 &&
        fn.typeOf(LoadOp(*op).view()).space == MemSpace::Global && fn.typeOf(op->results[0]).isTile() &&
        isSixteenBitFloat(fn.typeOf(op->results[0]).dtype))
      out.push_back({op.get(), op->results[0]});
    if (op->kind == OpKind::Store && op->operands.size() == 2) {
      const StoreOp store(*op);
      if (fn.typeOf(store.view()).space == MemSpace::Global && fn.typeOf(store.value()).isTile() &&
          isSixteenBitFloat(fn.typeOf(store.value()).dtype))
        out.push_back({op.get(), store.value()});
    }
    for (const Block& region : op->regions) collectAccesses(fn, region, out);
  }
}

// Why `layout` cannot take `vec` elements per thread, or "". *elsewhere: no note is
// worth it (an mma tile, whose codegen moves data in wide accesses by other means, or a
// tile of one element per thread).
std::string layoutProblem(const Layout& layout, int64_t vec, int64_t numWarps, bool* elsewhere) {
  *elsewhere = layout.isMma();
  if (layout.isMma()) return "its family holds a tile in a tensor-core (mma) layout";
  if (layout.vec != 1) return "its family is already vectorized differently";
  // A tile of no more elements than the block has threads is one access per thread either
  // way (an epilogue's bias row, a row's first element read as a scalar): vectorizing would
  // only replicate it more, so nothing to gain and nothing worth a note, whatever its shape.
  if (product(layout.shape()) <= numWarps * 32) {
    *elsewhere = true;
    return "the tile has no more elements than the block has threads";
  }
  const int64_t last = layout.parent.empty() ? 0 : layout.parent.back();
  if (last % vec != 0)
    return "the tile's last extent (" + std::to_string(last) + ") is not a multiple of " + std::to_string(vec);
  Layout vectorized = layout;
  vectorized.vec = vec;
  if (replication(vectorized, numWarps) <= replication(layout, numWarps)) return "";
  return "with " + std::to_string(vec) + " elements per thread, the " + std::to_string(product(layout.shape())) +
         "-element tile would not cover the block's " + std::to_string(numWarps * 32) + " threads";
}

void chooseForFunction(Function& fn, DiagnosticSink* hints) {
  std::vector<Access> accesses;
  collectAccesses(fn, fn.body, accesses);
  if (accesses.empty()) return;
  Family family(fn);
  std::set<ValueId> settled;  // members of families already decided
  for (const Access& access : accesses) {
    if (settled.count(access.tile)) continue;
    const int64_t vec = kVectorElements16;
    std::string why;
    bool elsewhere = false;
    if (!family.gather(access.tile)) {
      why = family.why();
      elsewhere = family.handledElsewhere();
    } else {
      for (ValueId v : family.members()) {
        why = layoutProblem(fn.typeOf(v).layout, vec, fn.numWarps, &elsewhere);
        if (!why.empty()) break;
      }
    }
    settled.insert(family.members().begin(), family.members().end());
    settled.insert(access.tile);
    if (why.empty()) {
      for (ValueId v : family.members()) fn.values[v].type.layout.vec = vec;
      continue;
    }
    // No note where codegen moves the data in wide accesses by other means (shared-memory
    // copies, tensor-core fragments, staged mma stores): only where the layout alone stands
    // between a row kernel and 16-byte accesses.
    if (hints && !elsewhere) {
      const Type& t = fn.typeOf(access.tile);
      hints->report(DiagId::VectorAccessBlocked, access.op->range,
                    {dtypeName(t.dtype), access.op->kind == OpKind::Load ? "load" : "store", why});
    }
  }
}

}  // namespace

void chooseVectorLayouts(Module& module, const std::string& arch, DiagnosticSink* hints) {
  (void)arch;  // 16-byte global accesses exist on every target (sm_80, sm_90, sm_90a)
  for (auto& fn : module.functions) chooseForFunction(*fn, hints);
}

}  // namespace argus::ir
