#include "ir/dot_layout.h"

#include <map>
#include <set>
#include <vector>

#include "ir/ops.h"
#include "ir/value_uses.h"

#include "ir/wgmma.h"

namespace argus::ir {

namespace {

bool isSixteenBit(DType t) { return t == DType::BF16 || t == DType::F16; }

const Type* bufferOf(const Function& fn, ValueId view) {
  const Op* def = fn.values[view].def;
  return def && def->kind == OpKind::View && !def->operands.empty() ? &fn.typeOf(ViewOp(*def).base()) : nullptr;
}

// Whether wgmma reads both operands through descriptors (codegen's own test).
bool wgmmaReadsOperands(const Function& fn, const Op& dot, int64_t n) {
  const DotOp dotOp(dot);
  WgmmaDescriptor d;
  const Type& a = fn.typeOf(dotOp.a());
  const Type& b = fn.typeOf(dotOp.b());
  if (!wgmmaOperandProblem(a, bufferOf(fn, dotOp.a()), "a", &d).empty()) return false;
  if (dotOp.transB()) return wgmmaOperandProblem(b, bufferOf(fn, dotOp.b()), "b", &d).empty();
  return wgmmaMnMajorOperandProblem(b, bufferOf(fn, dotOp.b()), n, &d).empty();
}

// mma.sync's ldmatrix addressing takes unswizzled buffers and swizzles that move whole
// 8-element rows of a core matrix (M >= 3), without column panels.
bool ldmatrixReads(const Type& view) {
  return !view.swizzle.hasPanels() && (view.swizzle.bits == 0 || view.swizzle.base >= 3);
}

// The warp grid (wm, wn), wm * wn = warps, whose per-warp tile is closest to square.
std::optional<Layout> mmaLayoutFor(int64_t m, int64_t n, int64_t warps) {
  std::optional<Layout> best;
  int64_t bestSkew = 0;
  for (int64_t wm = 1; wm <= warps; ++wm) {
    if (warps % wm != 0) continue;
    const int64_t wn = warps / wm;
    if (m % (16 * wm) != 0 || n % (8 * wn) != 0) continue;
    const int64_t rows = m / wm, cols = n / wn;
    const int64_t skew = rows > cols ? rows / cols : cols / rows;
    if (!best || skew < bestSkew) {
      best = Layout::mma(m, n, wm, wn);
      bestSkew = skew;
    }
  }
  return best;
}

}  // namespace

std::optional<Layout> tensorCoreLayoutFor(const Function& fn, const Op& dot, const std::string& arch) {
  if (dot.kind != OpKind::Dot || dot.operands.size() != 3) return std::nullopt;
  const DotOp dotOp(dot);
  const Type& a = fn.typeOf(dotOp.a());
  const Type& b = fn.typeOf(dotOp.b());
  const Type& acc = fn.typeOf(dotOp.acc());
  if (!acc.isTile() || acc.dtype != DType::F32 || acc.shape.size() != 2 || acc.layout.kind != LayoutKind::Blocked ||
      acc.layout.reducedMask != 0)
    return std::nullopt;
  for (const Type* t : {&a, &b})
    if (t->kind != TypeKind::View || t->space != MemSpace::Shared || !isSixteenBit(t->dtype) || t->shape.size() != 2)
      return std::nullopt;
  if (a.dtype != b.dtype || a.shape[1] % 16 != 0) return std::nullopt;
  const int64_t m = acc.shape[0], n = acc.shape[1];
  if (arch == "sm_90a" && m % kWgmmaRowsPerWarpgroup == 0 && fn.numWarps * kWgmmaRowsPerWarpgroup == 4 * m &&
      n % 8 == 0 && n <= 256 && wgmmaReadsOperands(fn, dot, n))
    return Layout::wgmmaAccumulator(m, n, m / kWgmmaRowsPerWarpgroup);
  if (!ldmatrixReads(a) || !ldmatrixReads(b)) return std::nullopt;
  return mmaLayoutFor(m, n, fn.numWarps);
}

namespace {

// The values that must share one layout with a dot's accumulator, found through
// definitions and uses; `ok` turns false at an op this pass does not retype.
// A row or column broadcast into the family (an epilogue's `acc + bias[None, :]`)
// is its edge: the broadcast's operand takes the family's layout with its own
// reduced axes, which is free where that operand is built through shared memory
// anyway (a reshape or a layout conversion that nothing else reads).
class Family {
 public:
  explicit Family(const Function& fn) : fn_(fn) { uses_.index(fn.body); }

  bool gather(ValueId start) {
    members_.clear();
    edges_.clear();
    work_ = {start};
    ok_ = true;
    obstacle_ = nullptr;
    while (ok_ && !work_.empty()) {
      const ValueId v = work_.back();
      work_.pop_back();
      if (!fn_.typeOf(v).isTile()) continue;
      if (!members_.insert(v).second) continue;
      definedBy(v);
      for (const auto& [user, operand] : uses_.users[v]) usedBy(*user, operand);
    }
    return ok_;
  }

  const std::set<ValueId>& members() const { return members_; }
  // The operands of broadcasts into the family, each with the axes it stretches.
  const std::map<ValueId, uint32_t>& edges() const { return edges_; }
  // The op where gathering stopped (nullptr when it did not, or at a value no op defines).
  const Op* obstacle() const { return obstacle_; }
  std::vector<const Op*> dots() const {
    std::vector<const Op*> out;
    for (ValueId v : members_)
      if (const Op* def = fn_.values[v].def; def && def->kind == OpKind::Dot) out.push_back(def);
    return out;
  }

 private:
  static bool elementwise(OpKind k) {
    return k == OpKind::Binary || k == OpKind::Compare || k == OpKind::Unary || k == OpKind::Fma ||
           k == OpKind::Select || k == OpKind::Cast || k == OpKind::TagSet;
  }

  void add(ValueId v) { work_.push_back(v); }
  void stopAt(const Op& op) {
    ok_ = false;
    obstacle_ = &op;
  }

  // Loop-carried value i of `loop`: its init, region argument, yielded value and result.
  void carried(const Op& loop, size_t i) {
    if (loop.operands.size() <= 3 + i || loop.results.size() <= i || loop.regions.empty() ||
        loop.regions[0].args.size() <= 1 + i) {
      ok_ = false;
      return;
    }
    add(loop.operands[3 + i]);
    add(loop.results[i]);
    add(loop.regions[0].args[1 + i]);
    const Op* yield = ValueUses::yieldOf(loop.regions[0]);
    if (!yield || yield->operands.size() <= i) {
      ok_ = false;
      return;
    }
    add(yield->operands[i]);
  }

  void branchResult(const Op& branch, size_t i) {
    if (branch.results.size() <= i) {
      ok_ = false;
      return;
    }
    add(branch.results[i]);
    for (const Block& region : branch.regions) {
      const Op* yield = ValueUses::yieldOf(region);
      if (!yield || yield->operands.size() <= i) {
        ok_ = false;
        return;
      }
      add(yield->operands[i]);
    }
  }

  void definedBy(ValueId v) {
    const Op* def = fn_.values[v].def;
    if (!def) {
      auto loop = uses_.loopOfArg.find(v);
      if (loop == uses_.loopOfArg.end()) ok_ = false;
      else carried(*loop->second.first, loop->second.second);
      return;
    }
    const size_t result = fn_.values[v].resultIndex;
    switch (def->kind) {
      case OpKind::Splat: return;
      // A tile loaded or counted in the family's layout directly (an epilogue's residual,
      // a column index for a mask): each thread reads or makes the elements it holds.
      case OpKind::Load: case OpKind::Iota: return;
      case OpKind::Broadcast: broadcastEdge(*def); return;
      case OpKind::Dot: add(DotOp(*def).acc()); return;
      case OpKind::For: carried(*def, result); return;
      case OpKind::If: branchResult(*def, result); return;
      default:
        if (!elementwise(def->kind)) {
          stopAt(*def);
          return;
        }
        for (ValueId operand : def->operands) add(operand);
    }
  }

  void broadcastEdge(const Op& broadcast) {
    const ValueId x = BroadcastOp(broadcast).x();
    const Op* def = fn_.values[x].def;
    if (!def || (def->kind != OpKind::Reshape && def->kind != OpKind::ConvertLayout)) {
      stopAt(def ? *def : broadcast);
      return;
    }
    auto users = uses_.users.find(x);
    if (users == uses_.users.end() || users->second.size() != 1) {
      stopAt(broadcast);
      return;
    }
    edges_[x] = fn_.typeOf(x).layout.reducedMask;
  }

  void usedBy(const Op& user, size_t operand) {
    switch (user.kind) {
      case OpKind::Dot:
        if (operand != 2) stopAt(user);  // a register A operand (p @ v): its layout is the accumulator's own
        else add(user.results[0]);
        return;
      case OpKind::For:
        if (operand < 3) ok_ = false;
        else carried(user, operand - 3);
        return;
      case OpKind::Yield: {
        const Op* parent = uses_.parentOf[&user];
        if (!parent) ok_ = false;
        else if (parent->kind == OpKind::For) carried(*parent, operand);
        else branchResult(*parent, operand);
        return;
      }
      case OpKind::Store: case OpKind::Assert: case OpKind::ConvertLayout: return;  // consumers of any layout
      default:
        if (!elementwise(user.kind)) {
          stopAt(user);
          return;
        }
        for (ValueId r : user.results) add(r);
        for (ValueId o : user.operands) add(o);
    }
  }

  const Function& fn_;
  ValueUses uses_;
  std::set<ValueId> members_;
  std::map<ValueId, uint32_t> edges_;
  std::vector<ValueId> work_;
  bool ok_ = true;
  const Op* obstacle_ = nullptr;
};

void collectDots(const Block& block, std::vector<const Op*>& out) {
  for (const auto& op : block.ops) {
    if (op->kind == OpKind::Dot) out.push_back(op.get());
    for (const Block& region : op->regions) collectDots(region, out);
  }
}

void chooseForFunction(Function& fn, const std::string& arch) {
  std::vector<const Op*> dots;
  collectDots(fn.body, dots);
  Family family(fn);
  for (const Op* dot : dots) {
    std::optional<Layout> layout = tensorCoreLayoutFor(fn, *dot, arch);
    if (!layout || !family.gather(DotOp(*dot).acc())) continue;
    // Every dot of the family takes the layout, so each must be one it fits.
    bool fits = true;
    for (const Op* other : family.dots()) fits = fits && tensorCoreLayoutFor(fn, *other, arch) == layout;
    for (ValueId v : family.members()) fits = fits && fn.typeOf(v).shape == layout->parent;
    if (!fits) continue;
    for (ValueId v : family.members()) fn.values[v].type.layout = *layout;
    for (const auto& [x, stretched] : family.edges()) {
      fn.values[x].type.layout = *layout;
      fn.values[x].type.layout.reducedMask = stretched;
    }
  }
}

}  // namespace

const Op* accumulatorLayoutObstacle(const Function& fn, const Op& dot, const std::string& arch) {
  if (!tensorCoreLayoutFor(fn, dot, arch)) return nullptr;
  Family family(fn);
  return family.gather(DotOp(dot).acc()) ? nullptr : family.obstacle();
}

void chooseDotLayouts(Module& module, const std::string& arch) {
  for (auto& fn : module.functions) chooseForFunction(*fn, arch);
}

}  // namespace argus::ir
