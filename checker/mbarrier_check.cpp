// The mbarrier protocol and bulk-copy visibility check (see mbarrier_check.h).
//
// Every obligation is one Z3 query at an event instance in a symbolic
// iteration J, over the window of history of mbarrier_events.h:
//  - init (AG2055): the mbarrier index is inside the buffer; an mbarrier_init
//    of it comes before, and a barrier() after that init;
//  - wait (AG2052, AG2056), by induction over the waits of each mbarrier: the
//    previous wait on the same mbarrier (the latest one in the history)
//    observed a phase of parity p (the induction hypothesis: it is the
//    obligation of that earlier wait); the arrivals since then must be exactly
//    the init count (one new phase: this wait must use parity 1 - p) or none
//    (a repeated wait: parity p); with no earlier wait at all (a complete
//    history), exactly one phase was armed and the parity is 0;
//  - arrival (AG2057): the current phase has not yet got all its arrivals
//    (an mbarrier is not re-armed before its phase was waited);
//  - visibility (AG2050, AG2051): an element a thread reads or writes, or a
//    copy_bulk writes, is written by no copy_bulk instance of the history
//    that no mbarrier_wait on its mbarrier follows; a copy_bulk's elements
//    are read or written by no thread earlier without a barrier() (or a
//    consumer arrive and a wait on it) in between.
// Each wait observes the phase its predecessor left armed (the wait and
// arrival obligations), and each copy completes the phase armed just before
// it (mbarrier_tx.cpp), so the first wait on a copy's mbarrier after it is the
// one that makes its data visible. Where the history window is not complete
// and an obligation needs older iterations, the answer is AG2004.
#include "checker/mbarrier_check.h"
#include "checker/report_text.h"

#include <z3++.h>

#include <algorithm>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "checker/mbarrier_events.h"
#include "checker/scalar_semantics.h"
#include "checker/solver_budget.h"
#include "ir/ops.h"

namespace argus::checker {

namespace {

using ir::Op;
using ir::OpKind;
using K = MbEventKind;

// The counterexample's thread, warp, lane and value: the thread that touches the element.
void setToucher(Counterexample& cx, const Toucher& t) {
  cx.thread = t.thread;
  cx.warp = t.thread / 32;
  cx.lane = t.thread % 32;
  cx.value = t.value;
}

// The events one checker takes: those whose index is `part` modulo `parts`.
struct Share {
  size_t part = 0, parts = 1;
};

// Below this many events one pass is quicker than making a second Z3 context.
constexpr size_t kEventsWorthAShare = 12;

// The integer proof's limit: the examples' questions that it settles take up to 330 000
// units there (gemm_wgmma's hardest, 60 ms); one it leaves undecided costs the limit.
constexpr uint64_t kIntegerRlimit = 500'000;

class MbarrierChecker {
 public:
  MbarrierChecker(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options,
                  MbEvents events, Share share)
      : fn_(fn), diags_(diags), file_(file), options_(options), events_(std::move(events)), share_(share) {}

  // Which event each finding came from (kBeforeEvents: the byte accounting),
  // and the key under which a finding is reported once (empty: always).
  struct Origin {
    size_t event = kBeforeEvents;
    std::string onceKey;
  };
  static constexpr size_t kBeforeEvents = 0;  // events count from 1 here
  const std::vector<Origin>& origins() const { return origins_; }

  void run() {
    if (share_.part == 0) checkBulkTransactions(fn_, diags_, file_, options_);
    origins_.resize(diags_.diagnostics().size());
    // mbarrier operations in an inner loop (the persistent pipeline, whose phases carry on
    // through a loop-carried iteration count) are beyond the window encoding: not checked,
    // like launch data (docs/checker.md, "Mbarriers and bulk copies", Limits); the byte
    // accounting above still is, and the CPU interpreter checks every launch it runs.
    if (events_.unsupported) return;
    // A second share builds its queries in a context of its own (a context is not thread-safe).
    if (share_.part == 0) ctx_ = &SolverBudget::contextFor(options_, ownContext_);
    else ctx_ = &*(ownContext_ = std::make_unique<z3::context>());
    encoder_ = std::make_unique<MbEncoder>(*ctx_, fn_, events_);
    for (size_t index = 0; index < events_.events.size(); ++index) {
      if (index % share_.parts != share_.part) continue;
      const MbEvent& e = events_.events[index];
      currentEvent_ = index + 1;
      try {
        auto label = [&](const char* check) { budget_.setTraceLabel(std::string(check) + ":" + opWord(e)); };
        if (e.usesMbarrier() && e.kind != K::Init) label("init"), withWindow([&] { checkInit(e); });
        if (e.kind == K::Wait) label("wait"), withWindow([&] { checkWait(e); });
        if (e.isArrival()) label("arrival"), withWindow([&] { checkArrival(e); });
        if (e.kind == K::Copy || e.kind == K::Read || e.kind == K::Write) label("in-flight"), withWindow([&] { checkInFlight(e); });
        if (e.kind == K::Copy) label("overwrite"), withWindow([&] { checkOverwrite(e); });
      } catch (const z3::exception& ex) {
        cannotProve(e, "its mbarrier protocol holds", std::string("the solver failed: ") + ex.msg());
      }
      origins_.resize(diags_.diagnostics().size(), Origin{currentEvent_, {}});
    }
  }

 private:
  // A check asked with S + 1 iterations of history (enough for a plain ring),
  // and again with the longest window when that one was too short to decide.
  template <typename Check>
  void withWindow(Check&& check) {
    depth_ = std::min<int64_t>(events_.stages + 1, events_.window);
    for (;;) {
      widen_ = false;
      check();
      if (!widen_ || depth_ >= events_.window) return;
      depth_ = events_.window;
    }
  }

  // ------------------------------------------------------------ solving

  enum class Result { Holds, Violated, Unknown };
  struct Answer {
    Result result = Result::Holds;
    std::optional<z3::model> model;
    std::string reason;
  };

  // Whether a violation needs a readable witness (a finding) or only the answer (whether
  // the window reaches back far enough, which incomplete() reads: these are often sat
  // with the first, short window, and their witness search was wasted).
  enum class Want { Witness, Answer };

  Answer solve(const MbWindow& w, const z3::expr& formula, Want want = Want::Witness) {
    Answer a;
    if (budget_.spent()) {
      a.result = Result::Unknown;
      a.reason = budget_.spentReason();
      return a;
    }
    z3::expr question = withoutDivisions(*ctx_, formula && w.assumptions);
    // Cheap before exact: nearly every window's question holds, and over the integers a
    // proof of it takes a few milliseconds where the bit-blaster takes tens to hundreds
    // (the stage parities are quotients and remainders by STAGES). Such a proof covers
    // every launch in which no i32 index computation wraps around, as the separation's
    // does (docs/checker.md). Asked only past the first iterations: before them the
    // history's absent instances hold wrapped terms, and the integer reading, which
    // assumes no term wraps, would leave those iterations out. They, or the whole
    // question where the integers do not settle it, go to the bit-vectors.
    if (budget_.unsatOverIntegers(question && !w.beforeStart, kIntegerRlimit)) question = question && w.beforeStart;
    z3::solver solver = bitVectorSolver(*ctx_);
    budget_.limit(solver);
    solver.add(question);
    z3::check_result r = budget_.check(solver);
    if (r == z3::unsat) return a;
    if (r == z3::unknown) {
      a.result = Result::Unknown;
      a.reason = "the solver gave up (" + budget_.unknownReason(solver) + ")";
      return a;
    }
    // A violation only at launches the compiler's own rules refuse (TMA's row
    // alignment, left out of the encoding above) is no violation: keep those rules for
    // the witness, and when no launch keeps them, the property holds.
    if (std::any_of(fn_.requirements.begin(), fn_.requirements.end(), [](const ir::Requirement& q) { return q.implied; })) {
      ScalarEncoder launch(*ctx_, fn_, ScalarScope{});
      z3::expr implied = ctx_->bool_val(true);
      for (const z3::expr& c : launch.constraints()) implied = implied && c;
      solver.add(withoutDivisions(*ctx_, implied));
      r = budget_.check(solver);
      if (r == z3::unsat) return a;
      if (r == z3::unknown) {
        a.result = Result::Unknown;
        a.reason = "the solver gave up (" + budget_.unknownReason(solver) + ")";
        return a;
      }
    }
    a.result = Result::Violated;
    a.model = solver.get_model();
    if (want == Want::Answer) return a;
    // The earliest iteration and a small launch make the counterexample readable.
    std::set<std::string> names;
    std::set<unsigned> seen;
    collectConstants(formula && w.assumptions, names, seen);
    z3::expr small = ctx_->bool_val(true);
    for (const std::string& n : names)
      if (n.rfind("size_", 0) == 0) small = small && z3::ule(ctx_->bv_const(n.c_str(), 32), ctx_->bv_val(256, 32));
      else if (n.rfind("program_id", 0) == 0) small = small && ctx_->bv_const(n.c_str(), 32) == 0;
    auto tryWith = [&](const z3::expr& extra) {
      solver.push();
      solver.add(extra);
      bool found = budget_.check(solver) == z3::sat;
      if (found) a.model = solver.get_model();
      solver.pop();
      return found;
    };
    bool useSmall = tryWith(small);
    if (!w.self.event->loop) return a;
    // The earliest iteration: binary search on J below the model's.
    z3::expr keep = useSmall ? small : ctx_->bool_val(true);
    uint64_t lo = 0, hi = static_cast<uint32_t>(eval(*a.model, w.J));  // J = hi is possible
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (tryWith(keep && z3::ule(w.J, ctx_->bv_val(mid, 32)))) hi = static_cast<uint32_t>(eval(*a.model, w.J));
      else lo = mid + 1;
    }
    return a;
  }

  int64_t eval(const z3::model& m, const z3::expr& e) const { return ScalarEncoder::valueOf(m, e); }
  bool truth(const z3::model& m, const z3::expr& e) const { return m.eval(e, true).is_true(); }

  z3::expr bv(int64_t v) { return ctx_->bv_val(v, 32); }
  z3::expr hits(const MbInstance& i, const z3::expr& k) { return i.present && *i.index == k; }
  static bool sameBars(const MbInstance& i, const MbEvent& e) { return i.event->bars == e.bars; }

  // The arrivals count mbarrier_init gave mbarrier k (the latest init of it in the history; 1 if none).
  z3::expr countOf(const MbWindow& w, const MbEvent& e, const z3::expr& k) {
    z3::expr n = bv(1);
    for (const MbInstance& i : w.history)
      if (i.event->kind == K::Init && sameBars(i, e)) n = z3::ite(hits(i, k), bv(ir::MbarrierInitOp(*i.event->op).arrivals()), n);
    return n;
  }

  // The latest wait on mbarrier k of e's buffer in the history, as one condition per candidate.
  struct Latest {
    std::vector<std::pair<size_t, z3::expr>> candidates;  // history index, "it is the latest"
    z3::expr none;
  };
  Latest latestWait(const MbWindow& w, const MbEvent& e, const z3::expr& k) {
    Latest out{{}, ctx_->bool_val(true)};
    z3::expr laterHit = ctx_->bool_val(false);
    for (size_t i = w.history.size(); i-- > 0;) {
      const MbInstance& h = w.history[i];
      if (h.event->kind != K::Wait || !sameBars(h, e)) continue;
      out.candidates.emplace_back(i, hits(h, k) && !laterHit);
      laterHit = laterHit || hits(h, k);
    }
    out.none = !laterHit;
    return out;
  }

  z3::expr arrivalsAfter(const MbWindow& w, size_t from, const MbEvent& e, const z3::expr& k) {
    z3::expr sum = bv(0);
    for (size_t i = from; i < w.history.size(); ++i) {
      const MbInstance& h = w.history[i];
      if (h.event->isArrival() && sameBars(h, e)) sum = sum + z3::ite(hits(h, k), bv(h.event->arrivals), bv(0));
    }
    return sum;
  }

  // ------------------------------------------------------------ naming

  std::string name(ir::ValueId id, const char* fallback) const {
    return id < fn_.values.size() && !fn_.values[id].name.empty() ? fn_.values[id].name : fallback;
  }
  std::string loopVar(const Op* loop) const {
    if (loop && !loop->regions.empty() && !loop->regions[0].args.empty()) {
      const std::string& n = fn_.values[loop->regions[0].args[0]].name;
      if (!n.empty()) return n;
    }
    return "the loop variable";
  }
  std::string iterationOf(const z3::model& m, const MbInstance& i) const {
    if (!i.iv) return "";
    return " in iteration " + loopVar(i.event->loop) + " = " + std::to_string(eval(m, *i.iv));
  }
  // Where an instance runs: its iteration, or "before the loop" for straight-line code.
  std::string when(const z3::model& m, const MbInstance& i) const {
    return i.iv ? iterationOf(m, i) : std::string(" before the loop");
  }
  std::string at(const MbInstance& i) const {
    std::string p = sourcePosition(file_, i.event->op->range);
    return p.empty() ? "" : " at " + p;
  }
  static const char* opWord(const MbEvent& e) {
    switch (e.kind) {
      case K::Init: return "mbarrier_init";
      case K::ExpectTx: return "mbarrier_expect_tx";
      case K::Arrive: return "mbarrier_arrive";
      case K::Wait: return "mbarrier_wait";
      case K::Copy: return "copy_bulk";
      case K::Barrier: return "barrier()";
      case K::Read: return e.op->kind == OpKind::Dot ? "dot" : "load";
      case K::Write: return "store";
    }
    return "access";
  }

  Counterexample baseCounterexample(const MbWindow& w, const z3::model& m) const {
    Counterexample cx;
    if (w.selfEncoder) {
      if (w.self.iv) cx.iteration.emplace_back(loopVar(w.self.event->loop), eval(m, *w.self.iv));
      std::string launch;
      for (const auto& [n, v] : w.selfEncoder->launchValues(m))
        launch += (launch.empty() ? "" : ", ") + n + " = " + std::to_string(v);
      if (!launch.empty()) cx.facts.emplace_back("launch", launch);
    }
    return cx;
  }


  // The window of history was too short to decide (the "complete history" query is satisfiable):
  // ask again with the longest window, and only then say "cannot prove".
  void incomplete(const MbEvent& e, const std::string& what, const Answer& c, const std::string& why) {
    if (c.result == Result::Holds) return;
    if (c.result == Result::Violated && depth_ < events_.window) {
      widen_ = true;
      return;
    }
    cannotProve(e, what, c.result == Result::Unknown ? c.reason : why);
  }

  void cannotProve(const MbEvent& e, const std::string& what, const std::string& reason) {
    if (!reportedCannot_.insert(e.op).second) return;
    once("cannot " + std::to_string(reinterpret_cast<uintptr_t>(e.op)));
    diags_.report(DiagId::CheckerCannotProve, e.op->range, {what, reason});
  }

  // ------------------------------------------------------------ init (AG2055)

  void checkInit(const MbEvent& e) {
    MbWindow w = encoder_->window(e, depth_);
    const z3::expr k = *w.self.index;
    const int64_t length = fn_.typeOf(e.bars).shape.empty() ? 1 : fn_.typeOf(e.bars).shape[0];
    z3::expr initialized = ctx_->bool_val(false), fenced = ctx_->bool_val(false);
    for (size_t i = 0; i < w.history.size(); ++i) {
      const MbInstance& h = w.history[i];
      if (h.event->kind != K::Init || !sameBars(h, e)) continue;
      z3::expr barrierAfter = ctx_->bool_val(false);
      for (size_t b = i + 1; b < w.history.size(); ++b)
        if (w.history[b].event->kind == K::Barrier) barrierAfter = barrierAfter || w.history[b].present;
      initialized = initialized || hits(h, k);
      fenced = fenced || (hits(h, k) && barrierAfter);
    }
    z3::expr outside = k < 0 || k >= bv(length);
    z3::expr violation = w.self.present && (outside || (!initialized && w.complete) || (initialized && !fenced));
    Answer a = solve(w, violation);
    if (a.result == Result::Unknown) return cannotProve(e, "mbarrier " + name(e.index, "i") + " is initialized before this use", a.reason);
    if (a.result == Result::Holds) {
      Answer c = solve(w, w.self.present && !initialized && !w.complete, Want::Answer);
      incomplete(e, "the mbarrier this " + std::string(opWord(e)) + " uses is initialized", c,
                 "its mbarrier_init is more iterations back than the checker looks");
      return;
    }
    const z3::model& m = *a.model;
    int64_t index = eval(m, k);
    std::string how;
    if (truth(m, outside))
      how = "with index " + std::to_string(index) + ", outside '" + name(e.bars, "bars") + "', which holds " +
            std::to_string(length) + " mbarrier" + (length == 1 ? "" : "s");
    else if (!truth(m, initialized))
      how = "by this " + std::string(opWord(e)) + " before any mbarrier_init initializes it";
    else
      how = "by this " + std::string(opWord(e)) + " after its mbarrier_init but before the barrier() that must follow "
            "the initialization (other threads may not see the initialized mbarrier yet)";
    // One report per buffer and mistake: every later use of the same mbarriers repeats it.
    int category = truth(m, outside) ? 0 : !truth(m, initialized) ? 1 : 2;
    if (!reportedInit_.insert({e.bars, category}).second) return;
    once("init " + std::to_string(e.bars) + " " + std::to_string(category));
    Diagnostic& d = diags_.report(DiagId::MbarrierUninitialized, e.op->range,
                                  {std::to_string(index), name(e.bars, "bars"), how + iterationOf(m, w.self)});
    Counterexample cx = baseCounterexample(w, m);
    cx.facts.emplace_back("mbarrier", std::to_string(index));
    d.counterexample = std::move(cx);
    d.notes.push_back("initialize every mbarrier of '" + name(e.bars, "bars") +
                      "' with mbarrier_init before its first use, then barrier()");
  }

  // ------------------------------------------------------------ waits (AG2052, AG2056)

  void checkWait(const MbEvent& e) {
    MbWindow w = encoder_->window(e, depth_);
    const z3::expr k = *w.self.index;
    const z3::expr P = *w.self.parity & bv(1);
    const z3::expr N = countOf(w, e, k);
    Latest latest = latestWait(w, e, k);
    z3::expr bad = ctx_->bool_val(false);
    for (const auto& [i, isLatest] : latest.candidates) {
      z3::expr a = arrivalsAfter(w, i + 1, e, k);
      z3::expr Pm = *w.history[i].parity & bv(1);
      bad = bad || (isLatest && !((a == N && P != Pm) || (a == 0 && P == Pm)));
    }
    z3::expr a0 = arrivalsAfter(w, 0, e, k);
    bad = bad || (latest.none && w.complete && !(a0 == N && P == 0));
    Answer ans = solve(w, w.self.present && bad);
    if (ans.result == Result::Unknown)
      return cannotProve(e, "this mbarrier_wait waits for the phase of the copies it guards", ans.reason);
    if (ans.result == Result::Holds) {
      Answer c = solve(w, w.self.present && latest.none && !w.complete, Want::Answer);
      incomplete(e, "this mbarrier_wait waits for the phase of the copies it guards", c,
                 "the previous wait on its mbarrier is more iterations back than the checker looks (" +
                     std::to_string(depth_) + ")");
      return;
    }
    const z3::model& m = *ans.model;
    int64_t index = eval(m, k), parity = eval(m, P), count = eval(m, N);
    const MbInstance* previous = nullptr;
    int64_t arrivals = eval(m, a0), previousParity = -1;
    for (const auto& [i, isLatest] : latest.candidates)
      if (truth(m, isLatest)) {
        previous = &w.history[i];
        arrivals = eval(m, arrivalsAfter(w, i + 1, e, k));
        previousParity = eval(m, *w.history[i].parity & bv(1));
      }
    // The latest arrival on the mbarrier: the operation that armed the phase.
    const MbInstance* armed = nullptr;
    for (const MbInstance& h : w.history)
      if (h.event->isArrival() && sameBars(h, e) && truth(m, hits(h, k))) armed = &h;
    std::string bars = name(e.bars, "bars");
    std::string since = previous ? "since the previous mbarrier_wait on it" + at(*previous) + iterationOf(m, *previous)
                                 : "since it was initialized";
    Counterexample cx = baseCounterexample(w, m);
    cx.facts.emplace_back("stage", std::to_string(index));
    cx.facts.emplace_back("parity", std::to_string(parity));
    if (arrivals != 0 && arrivals != count) {
      Diagnostic& d = diags_.report(
          DiagId::MbarrierArrivals, e.op->range,
          {std::to_string(index), bars, std::to_string(arrivals), arrivals == 1 ? "" : "s", std::to_string(count),
           (arrivals < count ? "the phase never completes, so this wait" + iterationOf(m, w.self) + " hangs"
                             : "the extra arrivals complete the next phase early" + iterationOf(m, w.self)) +
               std::string(" (") + std::to_string(arrivals) + " arrival" + (arrivals == 1 ? "" : "s") + " " + since + ")"});
      if (armed) d.labels.push_back(Label{armed->event->op->range, "arrives here" + iterationOf(m, *armed)});
      cx.facts.emplace_back("arrivals", std::to_string(arrivals));
      cx.facts.emplace_back("expected", std::to_string(count));
      d.counterexample = std::move(cx);
      d.notes.push_back("mbarrier_expect_tx arrives once and mbarrier_arrive once per thread; make the count of "
                        "mbarrier_init equal the arrivals of one phase");
      return;
    }
    std::string why;
    int64_t needed = -1;
    if (arrivals == 0 && !previous) {
      why = "no operation has armed mbarrier " + std::to_string(index) + " before it" + iterationOf(m, w.self) +
            (parity == 0 ? ", so it waits for a phase that never completes" : ", so it returns at once with no data");
    } else if (arrivals == 0) {
      needed = previousParity;
      why = "no phase was armed " + since + ", which observed parity " + std::to_string(previousParity) +
            "; waiting for parity " + std::to_string(parity) + iterationOf(m, w.self) + " waits for a phase nobody arms";
    } else {
      needed = previous ? 1 - previousParity : 0;
      why = "the phase it must observe" + (armed ? " (armed by the " + std::string(opWord(*armed->event)) + at(*armed) +
                                                         iterationOf(m, *armed) + ")"
                                                   : std::string()) +
            " has parity " + std::to_string(needed) + iterationOf(m, w.self) +
            ": it returns at once on an older phase, before the copies of this stage have landed (a stale stage)";
    }
    Diagnostic& d = diags_.report(DiagId::MbarrierWaitPhase, e.op->range,
                                  {std::to_string(parity), std::to_string(index), bars, why});
    if (armed) d.labels.push_back(Label{armed->event->op->range, "arms the phase" + iterationOf(m, *armed)});
    if (previous) d.labels.push_back(Label{previous->event->op->range, "previous wait on mbarrier " + std::to_string(index) +
                                                                          iterationOf(m, *previous)});
    if (needed >= 0) cx.facts.emplace_back("parity needed", std::to_string(needed));
    d.counterexample = std::move(cx);
    d.notes.push_back("with S mbarriers in a ring, stage kt % S is filled in phase kt / S of its mbarrier: wait with "
                      "mbarrier_wait(" + bars + ", kt % S, (kt / S) % 2)");
  }

  // ------------------------------------------------------------ arrivals (AG2057)

  void checkArrival(const MbEvent& e) {
    MbWindow w = encoder_->window(e, depth_);
    const z3::expr k = *w.self.index;
    const z3::expr N = countOf(w, e, k);
    const z3::expr mine = bv(e.arrivals);
    Latest latest = latestWait(w, e, k);
    z3::expr bad = ctx_->bool_val(false);
    for (const auto& [i, isLatest] : latest.candidates)
      bad = bad || (isLatest && z3::ugt(arrivalsAfter(w, i + 1, e, k) + mine, N));
    bad = bad || (latest.none && w.complete && z3::ugt(arrivalsAfter(w, 0, e, k) + mine, N));
    Answer ans = solve(w, w.self.present && bad);
    if (ans.result == Result::Unknown)
      return cannotProve(e, "this " + std::string(opWord(e)) + " arrives on a phase that has not completed", ans.reason);
    if (ans.result == Result::Holds) {
      Answer c = solve(w, w.self.present && latest.none && !w.complete, Want::Answer);
      incomplete(e, "this " + std::string(opWord(e)) + " arrives on a phase that has not completed", c,
                 "the previous wait on its mbarrier is more iterations back than the checker looks (" +
                     std::to_string(depth_) + ")");
      return;
    }
    const z3::model& m = *ans.model;
    int64_t index = eval(m, k), count = eval(m, N);
    const MbInstance* earlier = nullptr;
    for (const MbInstance& h : w.history)
      if (h.event->isArrival() && sameBars(h, e) && truth(m, hits(h, k))) earlier = &h;
    std::string why = "its current phase already has all " + std::to_string(count) + " of its arrivals" +
                      (earlier ? " (the " + std::string(opWord(*earlier->event)) + at(*earlier) + iterationOf(m, *earlier) + ")" : "") +
                      " and no mbarrier_wait on it came between" + iterationOf(m, w.self) +
                      "; the copies of the two phases would complete one phase together";
    Diagnostic& d = diags_.report(DiagId::MbarrierOverrun, e.op->range,
                                  {opWord(e), std::to_string(index), name(e.bars, "bars"), why});
    if (earlier) d.labels.push_back(Label{earlier->event->op->range, "armed the phase" + iterationOf(m, *earlier)});
    Counterexample cx = baseCounterexample(w, m);
    cx.facts.emplace_back("stage", std::to_string(index));
    d.counterexample = std::move(cx);
    d.notes.push_back("wait on the mbarrier before arming it again: with S mbarriers, issue at most S - 1 stages ahead");
  }

  // ------------------------------------------------------------ visibility (AG2050, AG2051)

  // The symbolic element of e's buffer a visibility query asks about. An axis
  // that every access of the buffer in the window covers whole (offset 0,
  // extent the buffer's: the rows and columns of a stage) is 0, not a
  // variable: any element there is covered by all of them or by none, so the
  // query is the same and the solver has one coordinate to search, not three.
  std::vector<z3::expr> elementVars(const MbEvent& e, const MbWindow& w) {
    const std::vector<int64_t>& shape = fn_.typeOf(e.buffer).shape;
    auto whole = [&](const MbInstance& i, size_t d) {
      uint64_t lo = 1;
      return d < i.lo.size() && i.lo[d].is_numeral_u64(lo) && lo == 0 && d < i.extent.size() && i.extent[d] == shape[d];
    };
    std::vector<z3::expr> out;
    for (size_t d = 0; d < shape.size(); ++d) {
      bool everyWhole = whole(w.self, d);
      for (const MbInstance& h : w.history)
        if (h.event->buffer == e.buffer && h.event->kind != K::Init) everyWhole = everyWhole && whole(h, d);
      out.push_back(everyWhole ? ctx_->bv_val(0, 32) : ctx_->bv_const(("element" + std::to_string(d)).c_str(), 32));
    }
    return out;
  }

  std::string elementText(const MbEvent& e, const std::vector<int64_t>& element) const {
    std::string s = name(e.buffer, "shared") + "[";
    for (size_t d = 0; d < element.size(); ++d) s += (d ? ", " : "") + std::to_string(element[d]);
    return s + "]";
  }

  // A copy_bulk whose mbarrier no wait has followed yet, writing an element this access touches.
  void checkInFlight(const MbEvent& e) {
    if (e.buffer == ir::kNoValue) return;
    MbWindow w = encoder_->window(e, depth_);
    std::vector<z3::expr> element = elementVars(e, w);
    z3::expr touched = w.self.present && w.self.covers(element);
    z3::expr bad = ctx_->bool_val(false), writtenInWindow = ctx_->bool_val(false);
    std::vector<std::pair<size_t, z3::expr>> candidates;
    for (size_t i = 0; i < w.history.size(); ++i) {
      const MbInstance& c = w.history[i];
      if ((c.event->kind == K::Copy || c.event->kind == K::Write) && c.event->buffer == e.buffer)
        writtenInWindow = writtenInWindow || (c.present && c.covers(element));
      if (c.event->kind != K::Copy || c.event->buffer != e.buffer) continue;
      z3::expr waited = ctx_->bool_val(false);
      for (size_t j = i + 1; j < w.history.size(); ++j) {
        const MbInstance& h = w.history[j];
        if (h.event->kind == K::Wait && h.event->bars == c.event->bars) waited = waited || hits(h, *c.index);
      }
      z3::expr inFlight = c.present && c.covers(element) && !waited;
      candidates.emplace_back(i, inFlight);
      bad = bad || inFlight;
    }
    Answer ans = solve(w, touched && bad);
    std::string what = e.kind == K::Copy ? "every earlier copy_bulk into the elements of this one has completed"
                                         : "the copy_bulk that fills '" + name(e.buffer, "shared") +
                                               "' has completed before this " + opWord(e);
    if (ans.result == Result::Unknown) return cannotProve(e, what, ans.reason);
    if (ans.result == Result::Holds) {
      Answer c = solve(w, touched && !writtenInWindow && !w.complete, Want::Answer);
      incomplete(e, what, c,
                 "the copy that last wrote the element is more iterations back than the checker looks (" +
                     std::to_string(depth_) + ")");
      return;
    }
    const z3::model& m = *ans.model;
    std::vector<int64_t> elem, lo;
    for (size_t d = 0; d < element.size(); ++d) {
      elem.push_back(eval(m, element[d]));
      lo.push_back(eval(m, w.self.lo[d]));
    }
    const MbInstance* copy = nullptr;
    for (const auto& [i, inFlight] : candidates)
      if (truth(m, inFlight)) copy = &w.history[i];
    if (!copy) return;
    int64_t stage = eval(m, *copy->index);
    std::string bars = name(copy->event->bars, "bars");
    std::string elemText = elementText(e, elem);
    Counterexample cx = baseCounterexample(w, m);
    std::string noWait = "no mbarrier_wait on mbarrier " + std::to_string(stage) + " of '" + bars +
                         "' lies between the copy_bulk" + at(*copy) + when(m, *copy) + " and this ";
    Diagnostic* d = nullptr;
    if (e.kind == K::Copy) {
      d = &diags_.report(DiagId::BulkOverwrite, e.op->range,
                         {name(e.buffer, "shared"), "an earlier copy_bulk into the same elements may still be in flight",
                          noWait + "copy" + iterationOf(m, w.self)});
      cx.facts.emplace_back("element", elemText);
    } else {
      Toucher t = lowestToucher(fn_, e, elem, lo);
      bool write = e.kind == K::Write;
      d = &diags_.report(DiagId::BulkReadBeforeWait, e.op->range,
                         {name(e.buffer, "shared"), write ? "written" : "read", noWait + (write ? "write" : "read")});
      setToucher(cx, t);
      cx.facts.emplace_back("element", elemText);
      cx.facts.emplace_back(write ? "this write" : "this read", describeThread(t.thread) + (write ? " writes " : " reads ") +
                                                                    elemText + iterationOf(m, w.self) + " (value " +
                                                                    std::to_string(t.value) + ")");
    }
    cx.facts.emplace_back("the copy", "copy_bulk" + at(*copy) + when(m, *copy) + " writes " + elemText +
                                          " and completes on mbarrier " + std::to_string(stage));
    cx.facts.emplace_back("stage", std::to_string(stage));
    d->labels.push_back(Label{copy->event->op->range, "this copy_bulk writes " + elemText + when(m, *copy) +
                                                          "; it completes on mbarrier " + std::to_string(stage)});
    d->counterexample = std::move(cx);
    d->notes.push_back("wait on mbarrier " + std::to_string(stage) + " of '" + bars + "' (mbarrier_wait with the parity "
                       "of the phase the copy completes) before this " + (e.kind == K::Copy ? "copy" : "access") +
                       "; in a pipelined loop iteration kt waits on stage kt % S with parity (kt / S) % 2");
  }

  // A thread's read or write of an element this copy overwrites, with no barrier() in between.
  void checkOverwrite(const MbEvent& e) {
    if (e.buffer == ir::kNoValue) return;
    MbWindow w = encoder_->window(e, depth_);
    std::vector<z3::expr> element = elementVars(e, w);
    z3::expr bad = ctx_->bool_val(false), anyBarrier = ctx_->bool_val(false);
    std::vector<std::pair<size_t, z3::expr>> candidates;
    for (size_t i = 0; i < w.history.size(); ++i) {
      const MbInstance& h = w.history[i];
      if (h.event->kind == K::Barrier) anyBarrier = anyBarrier || h.present;
      if ((h.event->kind != K::Read && h.event->kind != K::Write) || h.event->buffer != e.buffer) continue;
      z3::expr ordered = ctx_->bool_val(false);
      for (size_t j = i + 1; j < w.history.size(); ++j) {
        const MbInstance& b = w.history[j];
        if (b.event->kind == K::Barrier) ordered = ordered || b.present;
        // A consumer release: every thread arrives after its reads, and a wait observes that phase.
        if (b.event->kind == K::Arrive)
          for (size_t x = j + 1; x < w.history.size(); ++x) {
            const MbInstance& wt = w.history[x];
            if (wt.event->kind == K::Wait && wt.event->bars == b.event->bars)
              ordered = ordered || (b.present && wt.present && *wt.index == *b.index);
          }
      }
      z3::expr unordered = h.present && h.covers(element) && !ordered;
      candidates.emplace_back(i, unordered);
      bad = bad || unordered;
    }
    z3::expr written = w.self.present && w.self.covers(element);
    Answer ans = solve(w, written && bad);
    std::string what = "no thread still reads the elements this copy_bulk overwrites";
    if (ans.result == Result::Unknown) return cannotProve(e, what, ans.reason);
    if (ans.result == Result::Holds) {
      Answer c = solve(w, w.self.present && !anyBarrier && !w.complete, Want::Answer);
      incomplete(e, what, c, "no barrier() in the last " + std::to_string(depth_) +
                                 " iterations orders older reads before it");
      return;
    }
    const z3::model& m = *ans.model;
    std::vector<int64_t> elem, lo;
    const MbInstance* reader = nullptr;
    for (const auto& [i, unordered] : candidates)
      if (truth(m, unordered)) reader = &w.history[i];
    if (!reader) return;
    for (size_t d = 0; d < element.size(); ++d) {
      elem.push_back(eval(m, element[d]));
      lo.push_back(eval(m, reader->lo[d]));
    }
    Toucher t = lowestToucher(fn_, *reader->event, elem, lo);
    bool write = reader->event->kind == K::Write;
    std::string elemText = elementText(e, elem);
    Diagnostic& d = diags_.report(
        DiagId::BulkOverwrite, e.op->range,
        {name(e.buffer, "shared"), write ? "a thread's store into it may not have completed" : "another thread may still read it",
         "no barrier() lies between the " + std::string(opWord(*reader->event)) + at(*reader) + iterationOf(m, *reader) +
             " and this copy" + iterationOf(m, w.self)});
    d.labels.push_back(Label{reader->event->op->range, describeThread(t.thread) + (write ? " writes " : " reads ") + elemText +
                                                           iterationOf(m, *reader) + " here"});
    Counterexample cx = baseCounterexample(w, m);
    setToucher(cx, t);
    cx.facts.emplace_back("element", elemText);
    cx.facts.emplace_back(write ? "the write" : "the read", describeThread(t.thread) + (write ? " writes " : " reads ") +
                                                               elemText + iterationOf(m, *reader) + " (value " +
                                                               std::to_string(t.value) + ")");
    cx.facts.emplace_back("the copy", "copy_bulk" + iterationOf(m, w.self) + " overwrites " + elemText);
    d.counterexample = std::move(cx);
    d.notes.push_back("insert barrier() between the " + std::string(opWord(*reader->event)) + at(*reader) +
                      " and this copy_bulk: it is issued by one thread and nothing else orders it after the other "
                      "threads' accesses");
  }

  const ir::Function& fn_;
  DiagnosticSink& diags_;
  const SourceFile* file_;
  const Options& options_;
  MbEvents events_;
  std::unique_ptr<z3::context> ownContext_;  // only when check() gave none
  z3::context* ctx_ = nullptr;
  std::unique_ptr<MbEncoder> encoder_;
  std::set<const Op*> reportedCannot_;
  std::set<std::pair<ir::ValueId, int>> reportedInit_;
  // The finding about to be reported is reported once per key in the whole
  // function, whichever share meets it first (checkMbarriers merges the shares).
  void once(std::string key) {
    origins_.resize(diags_.diagnostics().size(), Origin{currentEvent_, {}});
    origins_.push_back(Origin{currentEvent_, std::move(key)});
  }

  Share share_;
  std::vector<Origin> origins_;
  size_t currentEvent_ = kBeforeEvents;
  int64_t depth_ = 2;
  bool widen_ = false;
  SolverBudget budget_{options_};
};

}  // namespace

void checkMbarriers(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options) {
  std::optional<MbEvents> events = collectMbEvents(fn);
  if (!events) return;
  // Many events: two shares (alternate events), each with its own context and
  // findings, on two threads (or in turn without Options::parallel), merged as
  // one pass over the events would have made them. Which share checks an event
  // depends only on its place in the program, so the answers and
  // counterexamples are the same on every run, threads or not.
  const size_t parts = events->events.size() >= kEventsWorthAShare ? 2 : 1;
  std::vector<DiagnosticSink> sinks(parts);
  std::vector<std::vector<MbarrierChecker::Origin>> origins(parts);
  // The second share counts its queries in a profile of its own (a profile is not thread-safe).
  Profile secondProfile;
  Options secondOptions = options;
  if (options.profile) secondOptions.profile = &secondProfile;
  auto runShare = [&](size_t part) {
    MbarrierChecker checker(fn, sinks[part], file, part == 0 ? options : secondOptions, *events, Share{part, parts});
    checker.run();
    origins[part] = checker.origins();
  };
  if (parts == 2) {
    std::future<void> second = std::async(options.parallel ? std::launch::async : std::launch::deferred, runShare, size_t{1});
    runShare(0);
    second.get();
    if (options.profile && !secondProfile.phases.empty()) {
      Profile::Phase& into = options.profile->currentPhase();
      const Profile::Phase& from = secondProfile.phases.front();
      into.queries += from.queries;
      into.unknown += from.unknown;
      into.solverMs += from.solverMs;
      into.units += from.units;
    }
  } else {
    runShare(0);
  }
  struct Found {
    size_t event, part, order;
  };
  std::vector<Found> found;
  for (size_t part = 0; part < parts; ++part)
    for (size_t i = 0; i < sinks[part].diagnostics().size(); ++i) found.push_back({origins[part][i].event, part, i});
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.event < b.event; });
  std::set<std::string> reported;
  for (const Found& f : found) {
    const std::string& key = origins[f.part][f.order].onceKey;
    if (!key.empty() && !reported.insert(key).second) continue;
    diags.append({sinks[f.part].diagnostics()[f.order]});
  }
}

}  // namespace argus::checker
