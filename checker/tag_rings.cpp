// The ring guess for the loop induction of the tag flow (tag_loops.cpp).
//
// A loop that fills a ring of S stages (the compiler's pipelined() loops, or a
// hand-written `buf[kt % S]`) rewrites each slot every S iterations, and near
// the end of the loop a guarded prefetch stops rewriting some. "The entry's
// tags, then what the previous iteration yields", unrolled down to the entry,
// describes the slots nobody rewrites any more with the entry's tags, which is
// wrong, and the induction refutes it. Unrolled down to "unknown" instead:
//   G_0(j) = ite(j == 0, entry, unknown),
//   G_d(j) = ite(j == 0, entry, body(G_(d-1))(j - 1)),   d = S,
// every slot written in the last S iterations is described exactly (and a
// ring slot still read always is), the others are unknown. Since "unknown"
// (present, not known) covers anything, G_d(j) covers body(G_d)(j - 1)
// whenever the body does not turn an unknown tag into a known one; the
// induction query checks it as for every guess, so a wrong guess is refuted,
// never accepted. The queries compare the stage indices (j - d + c) % S of
// consecutive iterations; TagFlow::check first tries them with every
// remainder abstracted (tag_remainders.cpp), which is what keeps S = 3..8 fast.
#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

// The number of stages of the deepest ring the body writes (a store into
// buf[stage] of a buffer of shape (S, ...) whose stage is not a constant); 0
// when it writes none.
int TagFlow::ringDepth(const ir::Op& loopOp) const {
  int64_t depth = 0;
  std::function<void(const ir::Block&)> scan = [&](const ir::Block& block) {
    for (const auto& op : block.ops) {
      bool writes = ir::writesOperand(op->kind, 0);
      const ir::Op* view = writes && !op->operands.empty() ? fn_.values[writtenView(*op)].def : nullptr;
      if (view && view->kind == ir::OpKind::View && view->operands.size() >= 2) {
        const ir::ViewOp viewOp(*view);
        const ir::Type& buffer = fn_.values[viewOp.base()].type;
        const ir::Op* stage = fn_.values[viewOp.offsets()[0]].def;
        bool constant = stage && stage->kind == ir::OpKind::Const;
        if (buffer.kind == ir::TypeKind::Shared &&
            buffer.shape.size() > fn_.values[writtenView(*op)].type.shape.size() && !constant)
          depth = std::max(depth, buffer.shape[0]);
      }
      for (const ir::Block& region : op->regions) scan(region);
    }
  };
  scan(loopOp.regions[0]);
  return static_cast<int>(std::min<int64_t>(depth, kMaxRingDepth));
}

// ite(j == 0, entry, unknown) for every component the body changes; the
// entry's tags for those it leaves untouched (the same terms after one walk).
TagFlow::State TagFlow::ringBottom(const State& entry, const State& firstYield, const LoopFrame& loop, const ir::Op& op) {
  z3::expr first = loop.j == 0, no = ctx_.bool_val(false);
  auto untouched = [](const TagTerm* e, const TagTerm* y) {
    return e && y && z3::eq(e->value, y->value) && z3::eq(e->known, y->known) && z3::eq(e->present, y->present);
  };
  Label lost{op.range, "the tag was written further back in the loop over '" + loop.name +
                           "' than the checker follows it (a ring of more stages than it unrolls)"};
  Combine bottom = [&](const std::string&, const TagTerm* e, const TagTerm* y) {
    TagTerm entryTerm = e ? *e : TagTerm{bv(0), no, no, {}};
    if (untouched(e, y)) return entryTerm;
    TagTerm out = entryTerm;
    out.known = first && entryTerm.known;
    out.present = !first || entryTerm.present;
    addLabels(out.why, {lost}, 3);
    return out;
  };
  return combineStates(entry, firstYield, bottom);
}

// The head of iteration j from a yield: the entry's tags at j = 0, else what
// iteration j - 1 yields.
TagFlow::State TagFlow::headFrom(const State& entry, const State& yield, const LoopFrame& loop) {
  return loopHead(entry, yield, loop, {}, *loop.op);
}

std::optional<TagFlow::State> TagFlow::ringGuess(const State& entry, const State& firstYield, const LoopFrame& loop,
                                                 const ir::Op& op) {
  State guess = ringBottom(entry, firstYield, loop, op);
  int depth = std::max(3, ringDepth(op));
  // The rounds leave the dots' tags unknown (each would cost a query): what a
  // dot computed in the previous iteration is unknown at the head, and the
  // dot of the current iteration, walked from the head, is exact again.
  bool saved = exactDots_;
  exactDots_ = false;
  for (int d = 0; d < depth; ++d) guess = headFrom(entry, walkBody(op, guess, loop, false), loop);
  exactDots_ = saved;
  if (failingClaims(guess, walkBody(op, guess, loop, false), loop, op, false).empty()) return guess;
  return std::nullopt;
}

}  // namespace argus::checker
