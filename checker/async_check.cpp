// The async-copy completion check.
//
// A walk over the function keeps the copy_async instances still "in flight" at
// each program point: how many commit_group()s ran since each was issued, and
// whether a wait_group() has retired its group (wait_group(n) retires a copy
// once at least n + 1 commits followed it: its own group's and n newer ones). A
// barrier() makes retired copies visible to every thread: they leave the state.
// Control flow is uniform, so the counts are the same in every thread.
//
// Every read of a shared buffer (load, dot operands), every store into it and
// every further copy_async into it meets every copy into that buffer still in
// the state: one Z3 query "some thread reads an element the
// copy writes" (any thread while the copy is not retired, another thread once
// it is). A model is a counterexample (AG2005); an undecided query is AG2004.
//
// Loops are walked iteration by iteration: walk w starts from the state left by
// walk w - 1 (copies issued in the loop move one iteration further back), and
// the reads it meets are pinned to iteration w. After kExact walks the walk
// runs pinned to "iteration >= kExact" from the union of the states it sees
// until that union stops growing (commit counts saturate, distant iterations
// become "any earlier iteration"), so every iteration is covered.
#include "checker/async_check.h"
#include "checker/report_text.h"

#include <z3++.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "checker/solver_budget.h"
#include "checker/sync_encode.h"
#include "checker/sync_walk.h"
#include "ir/ops.h"

namespace argus::checker {

namespace {

using ir::Block;
using ir::Op;
using ir::OpKind;

struct InFlight {
  Pending copy;       // the AsyncCopy access and how its iterations relate to the current point
  int64_t commits = 0;  // commit_group()s since the copy was issued (saturating)
  bool retired = false;
  bool operator==(const InFlight&) const = default;
};
using State = std::vector<InFlight>;

void addUnique(State& state, const InFlight& item) {
  if (std::find(state.begin(), state.end(), item) == state.end()) state.push_back(item);
}

int64_t valueOf(const z3::model& model, const z3::expr& e) {
  z3::expr v = model.eval(e, true);
  uint64_t bits = 0;
  if (!v.is_numeral() || !v.is_numeral_u64(bits)) return 0;
  return static_cast<int32_t>(static_cast<uint32_t>(bits));
}

// Where a statement that fixes the read goes: the start of the read's line,
// when the read starts a statement there (only indentation and an assignment
// target before it, and the previous line does not continue onto it).
std::optional<std::pair<uint32_t, std::string>> statementStart(const SourceFile* file, SourceRange read) {
  if (!file) return std::nullopt;
  LineCol lc = file->lineCol(read.begin);
  std::string_view line = file->lineText(lc.line);
  std::string_view before = line.substr(0, std::min<size_t>(lc.column - 1, line.size()));
  for (char c : before)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ' ' || c == '=' || c == ',')) return std::nullopt;
  if (lc.line > 1) {
    std::string_view prev = file->lineText(lc.line - 1);
    while (!prev.empty() && (prev.back() == ' ' || prev.back() == '\t')) prev.remove_suffix(1);
    if (!prev.empty() && (prev.back() == '\\' || prev.back() == ',' || prev.back() == '(' || prev.back() == '['))
      return std::nullopt;
  }
  size_t indent = 0;
  while (indent < line.size() && line[indent] == ' ') ++indent;
  return std::make_pair(file->offsetOf(lc.line, 1), std::string(line.substr(0, indent)));
}

class AsyncChecker {
 public:
  AsyncChecker(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options)
      : fn_(fn), diags_(diags), file_(file), options_(options) {}

  void run() {
    bool hasCopies = false;
    int64_t maxWait = 0;
    forEach(fn_.body, [&](const Op& op) {
      hasCopies = hasCopies || op.kind == OpKind::CopyAsync;
      if (auto wait = ir::as<ir::WaitGroupOp>(op)) maxWait = std::max(maxWait, wait->pending());
    });
    if (!hasCopies) return;
    commitCap_ = maxWait + 3;
    exactWalks_ = std::max<int64_t>(3, maxWait + 3);
    fa_ = collectAccesses(fn_);
    for (size_t i = 0; i < fa_.accesses.size(); ++i) accessesOf_[fa_.accesses[i].op].push_back(static_cast<int>(i));
    for (size_t i = 0; i < fa_.loops.size(); ++i) loopOf_[fa_.loops[i].op] = static_cast<int>(i);
    block(fn_.body, {});
  }

 private:
  template <typename F>
  static void forEach(const Block& b, F&& f) {
    for (const auto& op : b.ops) {
      f(*op);
      for (const Block& region : op->regions) forEach(region, f);
    }
  }

  State block(const Block& b, State state) {
    for (const auto& op : b.ops) visit(*op, state);
    return state;
  }

  // What an op does to the copies in flight follows from what ir/ops.def declares: its sync
  // kind (commit, wait, barrier) and its shared-memory accesses (sync_walk.cpp collects them).
  void visit(const Op& op, State& state) {
    switch (ir::opInfo(op.kind).sync) {
      case ir::SyncKind::AsyncCommit: {
        State next;
        for (InFlight item : state) {
          item.commits = std::min(item.commits + 1, commitCap_);
          addUnique(next, item);
        }
        state = std::move(next);
        return;
      }
      case ir::SyncKind::AsyncWait: {
        const int64_t pending = ir::WaitGroupOp(op).pending();
        State next;
        for (InFlight item : state) {
          if (item.commits >= pending + 1) item.retired = true;
          addUnique(next, item);
        }
        state = std::move(next);
        return;
      }
      case ir::SyncKind::BlockBarrier:
        state.erase(std::remove_if(state.begin(), state.end(), [](const InFlight& i) { return i.retired; }), state.end());
        return;
      // mbarriers order TMA copies, which mbarrier_check.cpp follows; no cp.async group waits on them.
      case ir::SyncKind::MbarrierInit:
      case ir::SyncKind::MbarrierExpectTx:
      case ir::SyncKind::MbarrierArrive:
      case ir::SyncKind::MbarrierWait:
      case ir::SyncKind::None:
        break;
    }
    for (int a : accessesOf(op)) {
      if (fa_.accesses[static_cast<size_t>(a)].role == AccessRole::AsyncCopy) {
        // A copy into elements an earlier copy may still be writing: which lands last is a race
        // (a prologue that fills the stage the first iteration refills, a stage index one off).
        for (const InFlight& item : State(state))
          if (fa_.accesses[static_cast<size_t>(item.copy.access)].buffer == fa_.accesses[static_cast<size_t>(a)].buffer)
            query(item, a);
        InFlight item;
        item.copy.access = a;
        item.copy.relation.assign(fa_.accesses[static_cast<size_t>(a)].loops.size(), IterRelation::Same);
        addUnique(state, item);
        continue;
      }
      for (const InFlight& item : state)
        if (fa_.accesses[static_cast<size_t>(item.copy.access)].buffer == fa_.accesses[static_cast<size_t>(a)].buffer)
          query(item, a);
    }
    if (op.kind == OpKind::If) {
      State joined;
      for (const Block& region : op.regions)
        for (const InFlight& item : block(region, state)) addUnique(joined, item);
      if (op.regions.size() < 2)
        for (const InFlight& item : state) addUnique(joined, item);
      state = std::move(joined);
      return;
    }
    if (op.kind == OpKind::For) return walkLoop(op, state);
    for (const Block& region : op.regions) state = block(region, state);
  }

  std::vector<int> accessesOf(const Op& op) const {
    auto it = accessesOf_.find(&op);
    return it == accessesOf_.end() ? std::vector<int>{} : it->second;
  }

  // What the end of one iteration leaves for the start of the next: copies
  // issued in this loop's current iteration move one iteration back.
  State carry(const State& end, int loop, size_t depth) const {
    State out;
    for (InFlight item : end) {
      const Access& a = fa_.accesses[static_cast<size_t>(item.copy.access)];
      std::vector<IterRelation>& rel = item.copy.relation;
      bool inThisInstance = a.loops.size() > depth && a.loops[depth] == loop;
      for (size_t d = 0; d < depth && inThisInstance; ++d) inThisInstance = rel[d] == IterRelation::Same;
      if (inThisInstance) {
        if (rel[depth] == IterRelation::Same) {
          rel[depth] = IterRelation::Next;
          item.copy.distance = 1;
        } else if (rel[depth] == IterRelation::Next) {
          if (++item.copy.distance > exactWalks_) {
            rel[depth] = IterRelation::Later;
            item.copy.distance = 1;
          }
        }
      }
      addUnique(out, item);
    }
    return out;
  }

  void walkLoop(const Op& op, State& state) {
    auto it = loopOf_.find(&op);
    if (it == loopOf_.end() || op.regions.empty()) return;
    const int loop = it->second;
    const size_t depth = fa_.loops[static_cast<size_t>(loop)].enclosing.size();
    State result = state;  // the loop may run zero times
    State entry = state;
    constexpr int kMaxSteadyRounds = 16;
    for (int64_t w = 0;; ++w) {
      bool steady = w >= exactWalks_;
      pins_.push_back(IterationPin{loop, std::min(w, exactWalks_), steady});
      State end = block(op.regions[0], entry);
      pins_.pop_back();
      for (const InFlight& item : end) addUnique(result, item);
      State carried = carry(end, loop, depth);
      if (!steady) {
        entry = std::move(carried);
        continue;
      }
      bool grew = false;
      for (const InFlight& item : carried)
        if (std::find(entry.begin(), entry.end(), item) == entry.end()) {
          entry.push_back(item);
          grew = true;
        }
      if (!grew) break;
      if (w > exactWalks_ + kMaxSteadyRounds) {
        cannotProve(op, "the copies in flight around the loop at " + sourcePosition(file_, op.range) +
                            " do not settle into a repeating pattern");
        break;
      }
    }
    // After the loop, a copy issued in the current iteration of a walk ran in
    // the last iteration (or `distance` iterations before it).
    for (InFlight& item : result) {
      const Access& a = fa_.accesses[static_cast<size_t>(item.copy.access)];
      const std::vector<IterRelation>& rel = item.copy.relation;
      bool inThisInstance = a.loops.size() > depth && a.loops[depth] == loop;
      for (size_t d = 0; d < depth && inThisInstance; ++d) inThisInstance = rel[d] == IterRelation::Same;
      if (!inThisInstance || rel[depth] == IterRelation::Later) continue;
      item.copy.beforeLast.emplace_back(loop, rel[depth] == IterRelation::Same ? 0 : item.copy.distance);
    }
    State unique;
    for (const InFlight& item : result) addUnique(unique, item);
    state = std::move(unique);
  }

  void query(const InFlight& item, int read) {
    const Access& copy = fa_.accesses[static_cast<size_t>(item.copy.access)];
    const Access& reader = fa_.accesses[static_cast<size_t>(read)];
    auto pairKey = std::make_pair(reader.op, copy.buffer);  // one report per read and buffer
    if (reported_.count(pairKey)) return;
    Pending earlier = item.copy;
    earlier.acrossBarriers = true;
    earlier.sameThreadToo = !item.retired;
    earlier.pins = pins_;
    auto key = std::make_tuple(earlier.access, read, earlier.relation, earlier.distance, earlier.sameThreadToo,
                               pinKey(earlier.pins));
    if (!asked_.insert(key).second) return;
    if (budget_.spent()) {
      reported_.insert(pairKey);
      cannotProveRead(copy, reader, budget_.spentReason());
      return;
    }
    try {
      if (!ctx_) ctx_ = &SolverBudget::contextFor(options_, ownContext_);
      PairEncoder encoder(*ctx_, fn_, fa_);
      Side first, second;
      PairEncoder::Answer answer = encoder.solve(earlier, read, first, second, budget_);
      if (answer.result == z3::unsat) return;
      reported_.insert(pairKey);
      if (!answer.model) {
        cannotProveRead(copy, reader, "the solver gave up (" + answer.reason + ")");
        return;
      }
      report(item, copy, reader, *answer.model, first, second);
    } catch (const z3::exception& e) {
      reported_.insert(pairKey);
      cannotProveRead(copy, reader, std::string("the solver failed: ") + e.msg());
    }
  }

  static std::vector<std::tuple<int, int64_t, bool>> pinKey(const std::vector<IterationPin>& pins) {
    std::vector<std::tuple<int, int64_t, bool>> out;
    for (const IterationPin& p : pins) out.emplace_back(p.loop, p.iteration, p.atLeast);
    return out;
  }

  std::string bufferName(ir::ValueId buffer) const {
    const std::string& name = fn_.values[buffer].name;
    return name.empty() ? "shared" : name;
  }

  std::string loopName(int loop) const {
    const Op* op = fa_.loops[static_cast<size_t>(loop)].op;
    if (!op->regions.empty() && !op->regions[0].args.empty()) {
      const std::string& name = fn_.values[op->regions[0].args[0]].name;
      if (!name.empty()) return name;
    }
    return "the loop at " + sourcePosition(file_, op->range);
  }

  std::vector<std::pair<std::string, int64_t>> iterations(const Access& access, const z3::model& model,
                                                          const Side& side) const {
    std::vector<std::pair<std::string, int64_t>> out;
    for (int loop : access.loops) {
      auto it = side.inductionValue.find(loop);
      if (it != side.inductionValue.end()) out.emplace_back(loopName(loop), valueOf(model, it->second));
    }
    return out;
  }

  static std::string iterationText(const std::vector<std::pair<std::string, int64_t>>& its) {
    std::string s;
    for (const auto& [name, v] : its) s += (s.empty() ? "" : ", ") + name + " = " + std::to_string(v);
    return s.empty() ? s : " in iteration " + s;
  }

  std::string element(const Access& access, const z3::model& model, const Side& side) const {
    std::string s = bufferName(access.buffer) + "[";
    for (size_t d = 0; d < side.coords.size(); ++d) s += (d ? ", " : "") + std::to_string(valueOf(model, side.coords[d]));
    return s + "]";
  }

  void report(const InFlight& item, const Access& copy, const Access& reader, const z3::model& model, Side& first,
              Side& second) {
    int64_t copier = first.thread ? valueOf(model, *first.thread) : 0;
    int64_t readerThread = second.thread ? valueOf(model, *second.thread) : 0;
    int64_t value = second.value ? valueOf(model, *second.value) : 0;
    std::string elem = element(reader, model, second);
    auto copyIts = iterations(copy, model, first), readIts = iterations(reader, model, second);
    const bool write = reader.isWrite();
    std::string why = item.retired ? "its wait_group() is not followed by a barrier(), so this thread may not see "
                                     "another thread's copy yet"
                                   : "no wait_group() has waited for it";
    if (write) why = item.retired ? "the copy landed in another thread's wait_group(), and no barrier() orders it before this write"
                                  : "no wait_group() has waited for it, so it may land after this write";
    Diagnostic& d = diags_.report(write ? DiagId::AsyncWriteBeforeComplete : DiagId::AsyncReadBeforeComplete,
                                  reader.op->range, {bufferName(copy.buffer), why});
    d.labels.push_back(Label{copy.op->range, describeThread(copier) + " copies " + element(copy, model, first) +
                                                 iterationText(copyIts) + " here"});
    Counterexample cx;
    cx.thread = readerThread;
    cx.warp = readerThread / 32;
    cx.lane = readerThread % 32;
    cx.value = value;
    cx.iteration = readIts;
    cx.facts.emplace_back("element", elem);
    cx.facts.emplace_back(write ? "this write" : "this read", describeThread(readerThread) + (write ? " writes " : " reads ") +
                                                                  elem + iterationText(readIts) + " (value " +
                                                                  std::to_string(value) + ")");
    cx.facts.emplace_back("the copy", describeThread(copier) + " issues the copy_async of " + elem +
                                          iterationText(copyIts) + " at " + sourcePosition(file_, copy.op->range));
    std::string groups = item.commits == 0 ? "its group is not committed yet"
                         : std::to_string(item.commits - 1) + " newer group" + (item.commits == 2 ? "" : "s") +
                               " committed since its own";
    if (item.commits >= commitCap_) groups = "at least " + groups;
    cx.facts.emplace_back("groups", groups);
    if (!item.retired) {
      std::string need = item.commits == 0 ? "commit_group() and wait_group(0)"
                                           : "wait_group(" + std::to_string(item.commits - 1) + ")";
      cx.facts.emplace_back("wait needed", need);
      d.notes.push_back("add " + need + " and then barrier() before this " + (write ? "write: " : "read: ") + groups +
                        ", and wait_group(n) waits until at most n groups are pending");
      if (auto at = statementStart(file_, reader.op->range)) {
        std::string text;
        if (item.commits == 0) text += at->second + "commit_group()\n" + at->second + "wait_group(0)\n";
        else text += at->second + "wait_group(" + std::to_string(item.commits - 1) + ")\n";
        d.fixits.push_back(FixIt{{at->first, at->first}, text + at->second + "barrier()\n",
                                 "insert " + need + " and barrier() before this statement"});
      }
    } else {
      d.notes.push_back(std::string("add barrier() between the wait_group() and this ") + (write ? "write" : "read") +
                        ": a thread's wait_group() covers only the copies that thread issued");
      if (auto at = statementStart(file_, reader.op->range))
        d.fixits.push_back(FixIt{{at->first, at->first}, at->second + "barrier()\n", "insert barrier() before this statement"});
    }
    d.counterexample = std::move(cx);
  }

  void cannotProveRead(const Access& copy, const Access& reader, const std::string& reason) {
    std::string what = "the copy_async at " + sourcePosition(file_, copy.op->range) + " has completed and is visible before "
                       "this access to shared buffer '" + bufferName(copy.buffer) + "'";
    Diagnostic& d = diags_.report(DiagId::CheckerCannotProve, reader.op->range, {what, reason});
    d.labels.push_back(Label{copy.op->range, "the copy_async"});
    d.notes.push_back("wait_group(0) and barrier() before the read make it safe");
  }

  void cannotProve(const Op& loop, const std::string& reason) {
    if (!reportedLoops_.insert(&loop).second) return;
    diags_.report(DiagId::CheckerCannotProve, loop.range,
                  {"every copy_async in this loop completes before it is read", reason});
  }

  const ir::Function& fn_;
  DiagnosticSink& diags_;
  const SourceFile* file_;
  const Options& options_;
  FunctionAccesses fa_;
  std::unordered_map<const Op*, std::vector<int>> accessesOf_;
  std::unordered_map<const Op*, int> loopOf_;
  std::vector<IterationPin> pins_;
  int64_t commitCap_ = 3;
  int64_t exactWalks_ = 3;
  std::unique_ptr<z3::context> ownContext_;  // only when check() gave none
  z3::context* ctx_ = nullptr;
  SolverBudget budget_{options_};
  std::set<std::tuple<int, int, std::vector<IterRelation>, int64_t, bool, std::vector<std::tuple<int, int64_t, bool>>>>
      asked_;
  std::set<std::pair<const Op*, ir::ValueId>> reported_;
  std::set<const Op*> reportedLoops_;
};

}  // namespace

void checkAsyncCopies(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options) {
  AsyncChecker(fn, diags, file, options).run();
}

}  // namespace argus::checker
