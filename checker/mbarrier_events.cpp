// Events of the mbarrier protocol and their encoding over a window of
// iterations (see mbarrier_events.h).
#include "checker/mbarrier_events.h"
#include "checker/invariant_scalar.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ir/ops.h"

namespace argus::checker {

using ir::Block;
using ir::Op;
using ir::OpKind;

namespace {


class Collector {
 public:
  Collector(const ir::Function& fn, MbEvents& out) : fn_(fn), out_(out) {}

  void run() {
    // The buffers copy_bulk fills: their loads, stores and dot operands are events.
    std::function<void(const Block&)> scan = [&](const Block& b) {
      for (const auto& op : b.ops) {
        if (op->kind == OpKind::CopyBulk && !op->operands.empty()) {
          ir::ValueId buffer = bufferOf(ir::CopyBulkOp(*op).dst());
          if (buffer != ir::kNoValue) staged_.insert(buffer);
        }
        for (const Block& r : op->regions) scan(r);
      }
    };
    scan(fn_.body);
    for (size_t i = 0; i < fn_.body.ops.size(); ++i) {
      top_ = static_cast<int>(i);
      const Op& op = *fn_.body.ops[i];
      if (op.kind == OpKind::For && !op.regions.empty()) {
        topLoop_ = &op;
        scope_.loops.push_back(&op);
        block(op.regions[0], 1);
        scope_.loops.pop_back();
        topLoop_ = nullptr;
      } else {
        visit(op, 0);
      }
    }
  }

 private:
  ir::ValueId bufferOf(ir::ValueId view) const { return ir::sharedBufferOf(fn_, view); }

  void block(const Block& b, int loopDepth) {
    for (const auto& op : b.ops) visit(*op, loopDepth);
  }

  MbEvent& add(const Op& op, MbEventKind kind) {
    MbEvent e;
    e.op = &op;
    e.kind = kind;
    e.top = top_;
    e.loop = topLoop_;
    e.order = order_++;
    e.scope = scope_;
    out_.events.push_back(std::move(e));
    return out_.events.back();
  }

  // mbarrier ops, copies and barriers must run in straight-line code or in a
  // top-level loop (not in an inner loop) for the window to place them.
  bool placeable(int loopDepth) const {
    return loopDepth == 0 || (loopDepth == 1 && topLoop_ && scope_.loops.size() == 1 && scope_.loops[0] == topLoop_);
  }

  void protocolEvent(const Op& op, MbEventKind kind, int loopDepth) {
    if (!placeable(loopDepth)) {
      if (kind != MbEventKind::Barrier && !out_.unsupported) out_.unsupported = &op;
      return;  // a barrier in an inner loop may run zero times: it does not count
    }
    MbEvent& e = add(op, kind);
    switch (kind) {
      case MbEventKind::Init:
      case MbEventKind::ExpectTx:
      case MbEventKind::Arrive:
      case MbEventKind::Wait: {
        // visit() derives these from the op's sync kind, each of which one mbarrier op has.
        const MbarrierOperands mbarrier = mbarrierOperands(op);
        e.bars = mbarrier.bars;
        e.index = mbarrier.index;
        if (kind == MbEventKind::Wait) e.parity = ir::MbarrierWaitOp(op).parity();
        if (kind == MbEventKind::ExpectTx) e.arrivals = 1;
        if (kind == MbEventKind::Arrive) e.arrivals = fn_.numThreads();
        break;
      }
      case MbEventKind::Copy: {
        const ir::CopyBulkOp copy(op);  // visit(): a copy_bulk with its mbarrier
        e.view = copy.dst();
        e.buffer = bufferOf(copy.dst());
        e.bars = copy.bars();
        e.index = copy.index();
        break;
      }
      case MbEventKind::Barrier:
      case MbEventKind::Read:
      case MbEventKind::Write:
        break;
    }
  }

  void access(const Op& op, MbEventKind kind, ir::ValueId view, int dotOperand) {
    ir::ValueId buffer = bufferOf(view);
    if (buffer == ir::kNoValue || !staged_.count(buffer)) return;
    MbEvent& e = add(op, kind);
    e.view = view;
    e.buffer = buffer;
    e.dotOperand = dotOperand;
  }

  // Protocol events come from each op's sync kind, accesses from its declared memory effects
  // (ir/ops.def); a write that completes on an mbarrier is a TMA copy.
  void visit(const Op& op, int loopDepth) {
    switch (ir::opInfo(op.kind).sync) {
      case ir::SyncKind::MbarrierInit: return protocolEvent(op, MbEventKind::Init, loopDepth);
      case ir::SyncKind::MbarrierExpectTx: return protocolEvent(op, MbEventKind::ExpectTx, loopDepth);
      case ir::SyncKind::MbarrierArrive: return protocolEvent(op, MbEventKind::Arrive, loopDepth);
      case ir::SyncKind::MbarrierWait: return protocolEvent(op, MbEventKind::Wait, loopDepth);
      case ir::SyncKind::BlockBarrier: return protocolEvent(op, MbEventKind::Barrier, loopDepth);
      case ir::SyncKind::AsyncCommit:  // cp.async groups: async_check.cpp
      case ir::SyncKind::AsyncWait:
      case ir::SyncKind::None:
        break;
    }
    for (const ir::MemoryEffect& effect : ir::memoryEffects(fn_, op)) {
      if (effect.decl->completion == ir::Completion::Mbarrier) {
        // Without its mbarrier it is a copy the pipeline pass did not place (sema reports it).
        if (auto copy = ir::as<ir::CopyBulkOp>(op); copy && copy->bars() != ir::kNoValue)
          protocolEvent(op, MbEventKind::Copy, loopDepth);
        continue;
      }
      const bool write = effect.decl->access == ir::MemoryAccess::Write;
      const int dotOperand = op.kind == OpKind::Dot ? effect.decl->operand : -1;
      access(op, write ? MbEventKind::Write : MbEventKind::Read, effect.view, dotOperand);
    }
    if (op.kind == OpKind::For) {
      if (op.regions.empty()) return;
      scope_.loops.push_back(&op);
      block(op.regions[0], loopDepth + 1);
      scope_.loops.pop_back();
      return;
    }
    if (op.kind == OpKind::If) {
      const ir::ValueId condition = ir::IfOp(op).condition();
      for (size_t r = 0; r < op.regions.size(); ++r) {
        scope_.conditions.push_back({condition, r == 0});
        block(op.regions[r], loopDepth);
        scope_.conditions.pop_back();
      }
      return;
    }
    for (const Block& region : op.regions) block(region, loopDepth);
  }

  const ir::Function& fn_;
  MbEvents& out_;
  std::set<ir::ValueId> staged_;
  ScalarScope scope_;
  const Op* topLoop_ = nullptr;
  int top_ = 0, order_ = 0;
};

}  // namespace

MbarrierOperands mbarrierOperands(const Op& op) {
  auto of = [](const auto& mbarrierOp) { return MbarrierOperands{mbarrierOp.bars(), mbarrierOp.index()}; };
  switch (op.kind) {
    case OpKind::MbarrierInit: return of(ir::MbarrierInitOp(op));
    case OpKind::MbarrierExpectTx: return of(ir::MbarrierExpectTxOp(op));
    case OpKind::MbarrierArrive: return of(ir::MbarrierArriveOp(op));
    case OpKind::MbarrierWait: return of(ir::MbarrierWaitOp(op));
    default: return {};
  }
}

std::optional<MbEvents> collectMbEvents(const ir::Function& fn) {
  MbEvents out;
  Collector(fn, out).run();
  bool any = false;
  int64_t stages = 1;
  for (const MbEvent& e : out.events) {
    if (e.usesMbarrier()) {
      any = true;
      const ir::Type& bars = fn.values[e.bars].type;
      if (!bars.shape.empty()) stages = std::max(stages, bars.shape[0]);
    }
  }
  if (!any && !out.unsupported) return std::nullopt;
  // A ring of S mbarriers reuses each one every S iterations: the previous
  // wait on the mbarrier a wait uses is S iterations back, and the first wait
  // on a "free stage" mbarrier of a warp-specialized pipeline comes up to
  // 2S - 1 iterations into the loop (ir/pipeline.h).
  out.stages = stages;
  out.window = std::clamp<int64_t>(2 * stages + 1, 2, 17);
  return out;
}

z3::expr MbInstance::covers(const std::vector<z3::expr>& element) const {
  z3::expr all = present.ctx().bool_val(true);
  for (size_t d = 0; d < element.size() && d < lo.size(); ++d)
    all = all && element[d] >= lo[d] && element[d] < lo[d] + present.ctx().bv_val(extent[d], 32);
  return all;
}

MbEncoder::MbEncoder(z3::context& ctx, const ir::Function& fn, const MbEvents& events)
    : ctx_(ctx), fn_(fn), events_(events) {}

MbEncoder::Template& MbEncoder::templateOf(const MbEvent& event) {
  auto it = templates_.find(&event);
  if (it != templates_.end()) return *it->second;
  auto t = std::make_unique<Template>(ctx_);
  // The protocol's properties do not depend on the compiler's own launch rules (TMA's
  // row alignment), which would only cost solver time here; the check adds them back
  // before it reports a violation (mbarrier_check.cpp, solve).
  t->encoder = std::make_unique<ScalarEncoder>(ctx_, fn_, event.scope, /*impliedRequirements=*/false);
  ScalarEncoder& enc = *t->encoder;
  MbInstance& terms = t->terms;
  terms.event = &event;
  if (event.index != ir::kNoValue) terms.index = enc.scalar(event.index);
  if (event.parity != ir::kNoValue) terms.parity = enc.scalar(event.parity);
  if (event.loop && !event.loop->regions.empty() && !event.loop->regions[0].args.empty())
    terms.iv = enc.scalar(event.loop->regions[0].args[0]);
  if (event.view != ir::kNoValue) {
    const Op* viewOp = fn_.values[event.view].def;
    const std::vector<int64_t>& shape = fn_.values[event.buffer].type.shape;
    const std::vector<int64_t>& viewShape = fn_.values[event.view].type.shape;
    size_t r = shape.size(), k = std::min(viewShape.size(), r);
    for (size_t d = 0; d < r; ++d) {
      terms.lo.push_back(viewOp && d + 1 < viewOp->operands.size() ? enc.scalar(viewOp->operands[d + 1])
                                                                   : ctx_.bv_val(0, 32));
      terms.extent.push_back(d + k >= r ? viewShape[d + k - r] : 1);
    }
  }
  z3::expr present = ctx_.bool_val(true);
  for (const z3::expr& c : enc.constraints()) present = present && c;
  for (size_t c = 0; c < event.scope.conditions.size(); ++c) {
    const auto& [cond, taken] = event.scope.conditions[c];
    if (conditionEncodable(fn_, cond)) continue;
    z3::expr g = ctx_.bool_const(("guard" + std::to_string(event.order) + "_" + std::to_string(c)).c_str());
    t->renamed.push_back(g);
    present = present && (taken ? g : !g);
  }
  terms.present = present;
  // Inner loops' iteration indices are fresh per instance.
  for (size_t l = event.loop ? 1 : 0; l < event.scope.loops.size(); ++l)
    t->renamed.push_back(ctx_.bv_const(("j" + std::to_string(l)).c_str(), 32));
  Template& ref = *t;
  templates_.emplace(&event, std::move(t));
  return ref;
}

bool MbEncoder::usesOpaque(const MbEvent& event) { return !templateOf(event).encoder->opaqueNames().empty(); }

MbInstance MbEncoder::instantiate(const MbEvent& event, int shift, const z3::expr& J, int tag) {
  Template& t = templateOf(event);
  z3::expr_vector from(ctx_), to(ctx_);
  if (tag >= 0)
    for (const z3::expr& v : t.renamed) {
      from.push_back(v);
      std::string name = v.decl().name().str() + "_i" + std::to_string(tag);
      to.push_back(v.is_bool() ? ctx_.bool_const(name.c_str()) : ctx_.bv_const(name.c_str(), 32));
    }
  if (event.loop && shift >= 0) {
    z3::expr j0 = ctx_.bv_const("j0", 32);
    if (shift > 0) {
      from.push_back(j0);
      to.push_back(J - ctx_.bv_val(shift, 32));
      // Unknown values computed in the loop body differ from one iteration to the next.
      std::set<std::string> names;
      std::set<unsigned> seen;
      std::vector<z3::expr> all = {t.terms.present};
      if (t.terms.index) all.push_back(*t.terms.index);
      if (t.terms.parity) all.push_back(*t.terms.parity);
      for (const z3::expr& x : t.terms.lo) all.push_back(x);
      for (const z3::expr& x : all) collectConstants(x, names, seen);
      for (const std::string& name : names) {
        if (name.rfind("opaque", 0) != 0) continue;
        from.push_back(ctx_.bv_const(name.c_str(), 32));
        to.push_back(ctx_.bv_const((name + "@" + std::to_string(shift)).c_str(), 32));
      }
    }
  }
  auto sub = [&](const z3::expr& e) { return from.empty() ? e : z3::expr(e).substitute(from, to); };
  MbInstance out(ctx_);
  out.event = &event;
  out.shift = event.loop ? shift : -1;
  out.present = sub(t.terms.present);
  if (t.terms.index) out.index = sub(*t.terms.index);
  if (t.terms.parity) out.parity = sub(*t.terms.parity);
  if (t.terms.iv) out.iv = sub(*t.terms.iv);
  for (const z3::expr& x : t.terms.lo) out.lo.push_back(sub(x));
  out.extent = t.terms.extent;
  return out;
}

z3::expr MbEncoder::iterationRuns(const Op& loop, const z3::expr& x) {
  auto it = loopHeaders_.find(&loop);
  if (it == loopHeaders_.end()) {
    LoopHeader h;
    h.scope = std::make_unique<ScalarScope>();
    h.scope->loops.push_back(&loop);
    h.encoder = std::make_unique<ScalarEncoder>(ctx_, fn_, *h.scope, /*impliedRequirements=*/false);
    it = loopHeaders_.emplace(&loop, std::move(h)).first;
  }
  z3::expr runs = ctx_.bool_val(true);
  for (const z3::expr& c : it->second.encoder->constraints()) runs = runs && c;
  z3::expr_vector from(ctx_), to(ctx_);
  from.push_back(ctx_.bv_const("j0", 32));
  to.push_back(x);
  return runs.substitute(from, to);
}

MbWindow MbEncoder::window(const MbEvent& self, int64_t depth) {
  MbWindow w(ctx_);
  w.J = ctx_.bv_const("j0", 32);
  const int64_t d = std::clamp<int64_t>(depth, 1, events_.window);
  // The last d iterations of `loop`, ending before iteration `end` (J, or the trip count).
  auto lastIterations = [&](const Op* loop, const z3::expr& end) {
    w.beforeStart = w.beforeStart || z3::ult(end, ctx_.bv_val(d, 32));
    for (int64_t s = d; s >= 1; --s)
      for (const MbEvent& e : events_.events) {
        if (e.loop != loop) continue;
        MbInstance inst = instantiate(e, static_cast<int>(s), end, nextTag_++);
        inst.present = inst.present && z3::uge(end, ctx_.bv_val(s, 32));
        w.history.push_back(std::move(inst));
      }
  };
  const Op* windowed = nullptr;
  for (const MbEvent& e : events_.events) {
    if (e.top < self.top && e.loop) {
      // A loop that ended before self: its trip count T (iteration T does not run, T - 1 does).
      if (e.loop == windowed) continue;
      windowed = e.loop;
      z3::expr T = ctx_.bv_const(("trip" + std::to_string(e.top)).c_str(), 32);
      w.assumptions = w.assumptions && !iterationRuns(*e.loop, T) &&
                      (T == 0 || iterationRuns(*e.loop, T - ctx_.bv_val(1, 32)));
      w.complete = w.complete && z3::ule(T, ctx_.bv_val(d, 32));
      lastIterations(e.loop, T);
    } else if (e.top < self.top || (e.top == self.top && !self.loop && e.order < self.order)) {
      w.history.push_back(instantiate(e, -1, w.J, nextTag_++));
    }
  }
  if (self.loop) {
    lastIterations(self.loop, w.J);
    for (const MbEvent& e : events_.events)
      if (e.loop == self.loop && e.order < self.order) w.history.push_back(instantiate(e, 0, w.J, nextTag_++));
    w.complete = w.complete && z3::ult(w.J, ctx_.bv_val(d, 32));
  }
  w.self = instantiate(self, 0, w.J, -1);
  w.selfEncoder = templateOf(self).encoder.get();
  return w;
}

}  // namespace argus::checker
