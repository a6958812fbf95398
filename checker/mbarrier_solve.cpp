// Solver helpers of the mbarrier check: the constants of a formula, and the thread that touches an
// element (for counterexamples).
#include <functional>
#include <map>

#include "checker/mbarrier_events.h"
#include "ir/ops.h"

namespace argus::checker {


using ir::OpKind;

void collectConstants(const z3::expr& e, std::set<std::string>& names, std::set<unsigned>& seen) {
  if (!seen.insert(e.id()).second) return;
  if (e.is_const() && e.decl().decl_kind() == Z3_OP_UNINTERPRETED) {
    names.insert(e.decl().name().str());
    return;
  }
  if (e.is_app())
    for (unsigned i = 0; i < e.num_args(); ++i) collectConstants(e.arg(i), names, seen);
}

// The lowest thread (and value) that reads or writes `element` through the access `e`.
Toucher lowestToucher(const ir::Function& fn, const MbEvent& e, const std::vector<int64_t>& element,
                    const std::vector<int64_t>& lo) {
  Toucher out;
  const ir::Op& op = *e.op;
  const std::vector<int64_t>& viewShape = fn.typeOf(e.view).shape;
  size_t r = element.size(), k = std::min(viewShape.size(), r);
  std::vector<int64_t> tile;
  for (size_t d = r - k; d < r; ++d) tile.push_back(element[d] - lo[d]);
  // Who touches what: the op's declared effect on this view (ir/ops.def).
  std::optional<ir::Layout> found;
  bool primary = false;
  for (const ir::MemoryEffect& effect : ir::memoryEffects(fn, op)) {
    if (effect.view != e.view || effect.decl->elements == ir::EffectElements::AsyncCopyChunks) continue;
    found = ir::effectLayout(fn, op, *effect.decl);
    primary = effect.decl->elements == ir::EffectElements::StoredValueLayout;
    if (found) break;
  }
  if (!found) return out;
  const ir::Layout& layout = *found;
  ir::Distribution dist = ir::Distribution::of(layout, fn.numWarps);
  for (int64_t t = 0; t < fn.numThreads(); ++t) {
    if (primary && !dist.isPrimaryOwner(t)) continue;
    for (int64_t v = 0; v < dist.valuesPerThread; ++v) {
      std::vector<int64_t> c = dist.coordinate(t, v);
      bool match = false;
      if (op.kind != OpKind::Dot) match = c == tile;
      else if (c.size() == 2 && tile.size() == 2) {
        if (e.dotOperand == 0) match = c[0] == tile[0];
        else if (ir::DotOp(op).transB()) match = c[1] == tile[0];
        else match = c[1] == tile[1];
      }
      if (match) return Toucher{t, v};
    }
  }
  return out;
}

}  // namespace argus::checker
