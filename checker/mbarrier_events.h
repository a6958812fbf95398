// The events of the mbarrier / bulk-copy protocol and their Z3 encoding over a
// window of loop iterations (internal to the checker; docs/checker.md,
// "Mbarriers and bulk copies").
//
// An event is an op that matters to the protocol: mbarrier_init, an arrival
// (mbarrier_expect_tx, mbarrier_arrive), mbarrier_wait, copy_bulk, barrier(),
// and the reads and writes of the buffers copy_bulk fills. A query is asked at
// one event instance X ("self"), in a symbolic iteration J of its loop; its
// history is every event instance before it: the straight-line code before
// the loop, the iterations J - d .. J - 1 of the loop (each present only when
// it exists) and the events of iteration J before X. When J < d the history
// is complete; otherwise older iterations are not represented, and a query
// whose answer needs them is "cannot prove", never "holds".
#pragma once

#include <z3++.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checker/invariant_scalar.h"
#include "ir/ir.h"

namespace argus::checker {

enum class MbEventKind : uint8_t { Init, ExpectTx, Arrive, Wait, Copy, Barrier, Read, Write };

struct MbEvent {
  const ir::Op* op = nullptr;
  MbEventKind kind = MbEventKind::Read;
  int top = -1;                   // index of the function's top-level op that contains it
  const ir::Op* loop = nullptr;   // the top-level loop it runs in (null: straight-line code)
  int order = 0;                  // pre-order position in the function (program order)
  ScalarScope scope;              // every enclosing loop and if
  ir::ValueId bars = ir::kNoValue, index = ir::kNoValue, parity = ir::kNoValue;
  ir::ValueId buffer = ir::kNoValue, view = ir::kNoValue;  // Copy (destination), Read, Write
  int dotOperand = -1;            // Read by a dot: 0 (a) or 1 (b)
  int64_t arrivals = 0;           // ExpectTx: 1, Arrive: every thread of the block
  bool isArrival() const { return kind == MbEventKind::ExpectTx || kind == MbEventKind::Arrive; }
  bool usesMbarrier() const { return bars != ir::kNoValue; }
};

struct MbEvents {
  std::vector<MbEvent> events;        // in program order
  const ir::Op* unsupported = nullptr;  // an mbarrier op or copy_bulk the encoding cannot place
  int64_t window = 3;                 // the most iterations of history a query keeps
  int64_t stages = 1;                 // S: the longest mbarrier buffer (a ring of S stages)
};

// The events of `fn`, or nothing when it has no copy_bulk and no mbarrier op.
std::optional<MbEvents> collectMbEvents(const ir::Function& fn);

// The mbarrier (bars, index) that an op of an mbarrier sync kind (ir::isMbarrierSync) names;
// kNoValue for both with any other op.
struct MbarrierOperands {
  ir::ValueId bars = ir::kNoValue, index = ir::kNoValue;
};
MbarrierOperands mbarrierOperands(const ir::Op& op);

// One execution of an event, as Z3 terms over the launch and the iteration J.
struct MbInstance {
  const MbEvent* event = nullptr;
  int shift = -1;  // iterations before J (0: iteration J); -1: straight-line code
  z3::expr present;
  std::optional<z3::expr> index, parity, iv;
  std::vector<z3::expr> lo;         // Copy / Read / Write: first element of the box, per buffer axis
  std::vector<int64_t> extent;      // and its extent
  explicit MbInstance(z3::context& ctx) : present(ctx.bool_val(true)) {}
  // The element e lies in the box this instance touches.
  z3::expr covers(const std::vector<z3::expr>& element) const;
};

struct MbWindow {
  std::vector<MbInstance> history;  // program order
  MbInstance self;
  z3::expr complete;                // the history holds every earlier instance
  z3::expr assumptions;             // facts of the window (the trip counts of earlier loops)
  z3::expr J;                       // the iteration index of self's loop (j0)
  // The history looks back past a loop's first iteration (J, or an earlier loop's trip
  // count, below the depth): the terms of those absent instances wrap around.
  z3::expr beforeStart;
  ScalarEncoder* selfEncoder = nullptr;  // for minimizing and naming the model
  explicit MbWindow(z3::context& ctx)
      : self(ctx), complete(ctx.bool_val(true)), assumptions(ctx.bool_val(true)), J(ctx.bv_val(0, 32)),
        beforeStart(ctx.bool_val(false)) {}
};

class MbEncoder {
 public:
  MbEncoder(z3::context& ctx, const ir::Function& fn, const MbEvents& events);
  // `depth` iterations of history (at most MbEvents::window).
  MbWindow window(const MbEvent& self, int64_t depth);
  z3::context& ctx() { return ctx_; }
  // The names of values the encoding treats as unknown constants, over all events used so far.
  bool usesOpaque(const MbEvent& event);

 private:
  struct Template {
    std::unique_ptr<ScalarEncoder> encoder;
    MbInstance terms;
    std::vector<z3::expr> renamed;  // inner-loop iteration indices and guards, fresh per instance
    explicit Template(z3::context& ctx) : terms(ctx) {}
  };
  Template& templateOf(const MbEvent& event);
  MbInstance instantiate(const MbEvent& event, int shift, const z3::expr& J, int tag);
  // Iteration x of `loop` runs (lb + step * x < ub), as for the loop's own events.
  z3::expr iterationRuns(const ir::Op& loop, const z3::expr& x);
  struct LoopHeader {
    std::unique_ptr<ScalarScope> scope;
    std::unique_ptr<ScalarEncoder> encoder;
  };
  std::map<const ir::Op*, LoopHeader> loopHeaders_;

  z3::context& ctx_;
  const ir::Function& fn_;
  const MbEvents& events_;
  std::map<const MbEvent*, std::unique_ptr<Template>> templates_;
  int nextTag_ = 0;
};

// The names of the uninterpreted constants of `e`.
void collectConstants(const z3::expr& e, std::set<std::string>& names, std::set<unsigned>& seen);

// The lowest thread (and its value index) that touches `element` of the buffer
// through the load, store or dot of `event`, whose view starts at `lo`.
struct Toucher {
  int64_t thread = 0, value = 0;
};
Toucher lowestToucher(const ir::Function& fn, const MbEvent& event, const std::vector<int64_t>& element,
                      const std::vector<int64_t>& lo);

}  // namespace argus::checker
