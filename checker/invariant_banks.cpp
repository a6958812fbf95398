// Bank conflicts (AG2032, a performance warning, never an error). Shared memory
// has 32 banks of 4-byte words; the lanes of a warp that access different
// words of one bank are served one after the other. For each shared load,
// store and dot operand inside a loop (where it matters), the lanes of warp 0
// are placed with their value 0 by the access's layout (ir::Distribution), the
// element becomes a byte address (through the buffer's swizzle), and the replay
// factor is the largest number of distinct words any bank receives (per
// half-warp for 64-bit elements, which the hardware serves in two halves).
// Lanes that read one word share it (a broadcast), and stores count only
// primary owners.
// View offsets that are not constants shift every lane by the same amount, so
// they are taken as 0.
#include <algorithm>
#include <map>
#include <set>

#include "checker/invariant_check.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::OpKind;

namespace {

constexpr int64_t kBanks = 32;

struct LaneAccess {
  int64_t lane;
  std::vector<int64_t> element;  // in the buffer
  int64_t word;
};

struct Conflict {
  int64_t replay = 1, bank = 0;
  std::vector<const LaneAccess*> lanes;  // the lanes hitting `bank`, one per distinct word first
};

bool isSharedView(const ir::Function& fn, ir::ValueId id) {
  if (id >= fn.values.size()) return false;
  const ir::Type& t = fn.values[id].type;
  const ir::Op* def = fn.values[id].def;
  return t.kind == ir::TypeKind::View && t.space == ir::MemSpace::Shared && def && def->kind == OpKind::View &&
         !def->operands.empty();
}

// 64-bit elements are served one half-warp at a time: lanes 0-15 and 16-31 never conflict with each other.
Conflict worstBank(const std::vector<LaneAccess>& accesses, int64_t elementBytes) {
  int64_t groupLanes = elementBytes >= 8 ? 16 : 32;
  std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> wordsPerBank;  // (lane group, bank) -> words
  auto keyOf = [&](const LaneAccess& a) {
    return std::make_pair(a.lane / groupLanes, ((a.word % kBanks) + kBanks) % kBanks);
  };
  for (const LaneAccess& a : accesses) wordsPerBank[keyOf(a)].insert(a.word);
  Conflict worst;
  std::pair<int64_t, int64_t> worstKey{0, 0};
  for (const auto& [key, words] : wordsPerBank)
    if (static_cast<int64_t>(words.size()) > worst.replay) {
      worst.replay = static_cast<int64_t>(words.size());
      worst.bank = key.second;
      worstKey = key;
    }
  std::set<int64_t> seen;
  for (const LaneAccess& a : accesses)
    if (keyOf(a) == worstKey && seen.insert(a.word).second) worst.lanes.push_back(&a);
  return worst;
}

class BankCheck {
 public:
  BankCheck(const ir::Function& fn, DiagnosticSink& diags) : fn_(fn), diags_(diags) {}

  void access(const ir::Op& op, ir::ValueId view, const ir::Layout& layout, const std::string& what, bool store,
              int dotOperand) {
    if (!isSharedView(fn_, view) || layout.isMma()) return;
    const ir::Op& viewOp = *fn_.values[view].def;
    ir::ValueId buffer = ir::ViewOp(viewOp).base();
    const ir::Type& bufferType = fn_.values[buffer].type;
    const std::vector<int64_t>& viewShape = fn_.values[view].type.shape;
    ir::Distribution dist = ir::Distribution::of(layout, fn_.numWarps);
    std::vector<LaneAccess> lanes = placeLanes(viewOp, bufferType, viewShape, bufferType.shape, dist, store,
                                               dotOperand, bufferType.swizzle);
    Conflict worst = worstBank(lanes, elementBytes(bufferType.dtype));
    if (worst.replay < 2) return;
    report(op, buffer, what, worst, viewOp, viewShape, dist, store, dotOperand);
  }

 private:
  std::vector<LaneAccess> placeLanes(const ir::Op& viewOp, const ir::Type& bufferType,
                                     const std::vector<int64_t>& viewShape, const std::vector<int64_t>& bufferShape,
                                     const ir::Distribution& dist, bool store, int dotOperand,
                                     const ir::Swizzle& swizzle) const {
    std::vector<LaneAccess> out;
    size_t rank = bufferShape.size(), k = viewShape.size();
    if (k > rank) return out;
    int64_t bytes = elementBytes(bufferType.dtype);
    for (int64_t lane = 0; lane < 32 && lane < fn_.numThreads(); ++lane) {
      if (store && !dist.isPrimaryOwner(lane)) continue;
      std::vector<int64_t> c = dist.coordinate(lane, 0);
      if (dotOperand == 0 && c.size() == 2) c = {c[0], 0};  // a[m, k] at k = 0
      if (dotOperand == 1 && c.size() == 2) c = {0, c[1]};  // b[k, n] at k = 0
      if (c.size() != k) return {};
      std::vector<int64_t> element(rank, 0);
      int64_t linear = 0;
      for (size_t d = 0; d < rank; ++d) {
        element[d] = constantOffset(viewOp, d) + (d + k >= rank ? c[d + k - rank] : 0);
        linear = linear * bufferShape[d] + element[d];
      }
      int64_t word = swizzle.apply(linear) * bytes / 4;
      out.push_back({lane, element, word});
    }
    return out;
  }

  int64_t constantOffset(const ir::Op& viewOp, size_t dim) const {
    if (dim + 1 >= viewOp.operands.size()) return 0;
    return ir::constantInt(fn_, viewOp.operands[dim + 1]).value_or(0);
  }

  std::string elementText(ir::ValueId buffer, const std::vector<int64_t>& element) const {
    std::string s = sharedName(fn_, buffer) + "[";
    for (size_t d = 0; d < element.size(); ++d) s += (d ? ", " : "") + std::to_string(element[d]);
    return s + "]";
  }

  void report(const ir::Op& op, ir::ValueId buffer, const std::string& what, const Conflict& worst,
              const ir::Op& viewOp, const std::vector<int64_t>& viewShape, const ir::Distribution& dist, bool store,
              int dotOperand) {
    std::string lanes, elements;
    for (size_t i = 0; i < worst.lanes.size(); ++i) {
      if (i == 3 && worst.lanes.size() > 4) {
        lanes += ", ...";
        elements += ", ...";
        i = worst.lanes.size() - 1;
      }
      lanes += (i ? ", " : "") + std::to_string(worst.lanes[i]->lane);
      elements += (i ? ", " : "") + elementText(buffer, worst.lanes[i]->element);
    }
    std::string verb = store ? "write" : "read";
    std::string detail = "lanes " + lanes + " of warp 0 " + verb + " " + std::to_string(worst.replay) +
                         " different words of bank " + std::to_string(worst.bank);
    Diagnostic& d = diags_.report(DiagId::SharedBankConflict, op.range,
                                  {what, sharedName(fn_, buffer), std::to_string(worst.replay), detail});
    Counterexample cx;
    const LaneAccess& first = *worst.lanes.front();
    cx.thread = first.lane;
    cx.warp = 0;
    cx.lane = first.lane;
    cx.value = 0;
    cx.facts.emplace_back("element", elementText(buffer, first.element));
    cx.facts.emplace_back("bank", std::to_string(worst.bank));
    cx.facts.emplace_back("replay", std::to_string(worst.replay));
    cx.facts.emplace_back("lanes", lanes);
    cx.facts.emplace_back("elements", elements);
    d.counterexample = std::move(cx);
    const ir::Type& bufferType = fn_.values[buffer].type;
    d.labels.push_back(Label{fn_.values[buffer].def ? fn_.values[buffer].def->range : fn_.values[buffer].range,
                             "'" + sharedName(fn_, buffer) + "' is allocated here"});
    // Padding the last axis moves consecutive rows to other banks; suggest it when it helps.
    std::vector<int64_t> padded = bufferType.shape;
    if (!padded.empty()) {
      int64_t pad = std::max<int64_t>(1, 4 / elementBytes(bufferType.dtype));
      padded.back() += pad;
      Conflict after = worstBank(placeLanes(viewOp, bufferType, viewShape, padded, dist, store, dotOperand,
                                            bufferType.swizzle),
                                 elementBytes(bufferType.dtype));
      if (after.replay < worst.replay)
        d.notes.push_back("padding the last axis, shared(" + std::string(ir::dtypeName(bufferType.dtype)) + ", " +
                          shapeText(padded) + "), leaves " + (after.replay < 2 ? std::string("no conflict") :
                          "a " + std::to_string(after.replay) + "-way conflict") +
                          " (the view keeps its shape; only the row pitch changes)");
    }
    d.notes.push_back("a warp's " + verb + " of shared memory takes one pass per distinct word in the busiest bank; "
                      "this is a performance problem, not an error");
  }

  const ir::Function& fn_;
  DiagnosticSink& diags_;
};

}  // namespace

void checkBankConflicts(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file) {
  BankCheck check(fn, diags);
  forEachOpWithDepth(fn.body, 0, [&](const ir::Op& op, int depth) {
    if (depth == 0) return;
    // The shared-memory accesses each op declares (ir/ops.def), with who touches what;
    // cp.async's 16-byte chunk writes are not linted.
    for (const ir::MemoryEffect& effect : ir::memoryEffects(fn, op)) {
      if (effect.space != ir::MemSpace::Shared || effect.decl->elements == ir::EffectElements::AsyncCopyChunks) continue;
      std::optional<ir::Layout> layout = ir::effectLayout(fn, op, *effect.decl);
      if (!layout) continue;
      const bool write = effect.decl->access == ir::MemoryAccess::Write;
      int dotOperand = -1;
      std::string what = ir::opKindName(op.kind);
      if (op.kind == OpKind::Dot) {
        dotOperand = effect.decl->operand;
        what = std::string("dot's read of operand ") + (dotOperand == 0 ? "a" : "b");
      } else if (op.kind == OpKind::Store && file && file->slice(op.range).substr(0, 5) == "copy(") {
        what = "copy";
      }
      check.access(op, effect.view, *layout, what, write, dotOperand);
    }
  });
}

}  // namespace argus::checker
