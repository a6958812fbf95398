// The pipelining policy (see pipeline.h for the shape of the result).
//
// Why one barrier per iteration is enough. In steady iteration j every thread
// runs, in this order:
//   wait_group(S-2)  ->  barrier  ->  issue the copy of iteration j+S-1  ->  compute on stage j % S
// * Read after copy (RAW): the compute of iteration j reads stage j % S, written
//   by the copy of iteration j. Each thread's wait retires its own share of that
//   copy (see the group arithmetic below); the barrier that follows makes every
//   thread's share visible to every other thread before anyone computes.
// * Copy after read (WAR): the copy issued in iteration j writes stage
//   (j+S-1) % S = (j-1) % S, which the compute of iteration j-1 read. Every
//   thread finished iteration j-1 before it reached this barrier, so no thread
//   can overwrite a stage another thread is still reading. For j = 0 the stage
//   written is S-1, which the prologue did not touch and no iteration read.
// The barrier therefore has to sit after the wait (for RAW) and before the
// issue (for WAR), and one serves both. The epilogue's wait_group(0) + barrier
// do the same for whatever uses shared memory after the loop (and for the next
// run of the loop when it is nested in another loop).
//
// Group arithmetic. Every prologue step and every steady iteration commits
// exactly one group, even when its copy is skipped because it would start past
// n, so group g holds the copy of iteration g: prologue step p commits group p
// (iteration p), steady iteration i commits group S-1+i (iteration i+S-1). When
// steady iteration j reaches its wait, S-1+j groups are committed (groups
// 0 .. S-2+j); wait_group(S-2) leaves at most S-2 of them pending, and groups
// retire in order, so groups 0 .. j are complete: group j, the copy of
// iteration j, is retired, and the S-2 groups after it (iterations j+1 ..
// j+S-2) may still be in flight. That overlap is the point of the pipeline.
#include "ir/ops.h"
#include "ir/pipeline.h"
#include "ir/pipeline_internal.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace argus::ir {

namespace {

using detail::LoopPlan;

// Rewrites one loop whose plan has no problems.
class Rewriter {
 public:
  Rewriter(Function& fn, Op& loop, const LoopPlan& plan, std::vector<PipelineProblem>* notes)
      : fn_(fn), loop_(loop), plan_(plan), stages_(ForOp(loop).stages()), ahead_(stages_ - 1), range_(loop.range),
        notes_(notes) {}

  // Returns the ops that go before and after the loop in its block, and those that go
  // before the top-level loop around it (a bulk loop's barriers, when it has one).
  void run(std::vector<std::unique_ptr<Op>>& before, std::vector<std::unique_ptr<Op>>& after,
           std::vector<std::unique_ptr<Op>>& hoisted) {
    for (ValueId b : plan_.buffers) {
      staged_.insert(b);
      std::vector<int64_t>& shape = fn_.values[b].type.shape;
      shape.insert(shape.begin(), stages_);
    }
    specialize_ = plan_.bulk && ForOp(loop_).specialize();
    if (const Op* blocker = specialize_ ? statementTheProducerMayNotRun() : nullptr) {
      specialize_ = false;  // still a correct pipeline, without a producer warpgroup; say so
      if (notes_)
        notes_->push_back(PipelineProblem{PipelineProblem::Kind::SpecializeIgnored, blocker->range, loop_.range,
                                          kNoValue, stages_});
    }
    // Multicast copies share stages across the cluster, which only the free barriers of a
    // producer warpgroup can track; without one, every block copies its whole tile.
    for (const Op* copy : plan_.copies) multicast_ = multicast_ || (specialize_ && CopyBulkOp(*copy).multicast());
    outer_ = const_cast<Op*>(plan_.outer);  // the pass owns the function being rewritten
    if (plan_.bulk) buildMbarriers(outer_ ? hoisted : before);
    if (outer_) carryIterationCount(hoisted);
    if (plan_.bulk && stages_ >= 3) markCarriedWgmmaDot();
    buildPrologue(before);
    buildSteadyBody();
    Block epilogue;
    Builder b(fn_, &epilogue);
    if (!plan_.bulk) b.create(OpKind::WaitGroup, {}, {}, range_, pendingGroups(0));
    if (specialize_ && inFlight_) releaseLastStage(b);
    // Every thread is done with the stages before anything after the loop; a specialized
    // ring needs no barrier for that: its free barriers hold the producer back (and a
    // block-wide barrier here cost a persistent GEMM 2% on the H200: bench/results).
    if (!specialize_) b.create(OpKind::Barrier, {}, {}, range_);
    after = std::move(epilogue.ops);
    ForAttrs(loop_.attrs).stages(0);
  }

 private:
  static Attrs pendingGroups(int64_t pending) {
    Attrs a;
    WaitGroupAttrs(a).pending(pending);
    return a;
  }
  static Attrs arrivalsAttrs(int64_t arrivals) {
    Attrs a;
    MbarrierInitAttrs(a).arrivals(arrivals);
    return a;
  }
  static Attrs binaryAttrs(BinaryKind k) {
    Attrs a;
    BinaryAttrs(a).binaryKind(k);
    return a;
  }
  static Attrs compareAttrs(CmpKind k) {
    Attrs a;
    CompareAttrs(a).cmpKind(k);
    return a;
  }

  ValueId i32(Builder& b, int64_t v) { return b.constInt(v, DType::I32, range_); }

  // The attrs of a free-stage barrier's init and arrivals: released by the whole cluster when
  // the loop multicasts (kMbarrierClusterRelease).
  Attrs freeBarrierInitAttrs(int64_t arrivals) const {
    Attrs a = arrivalsAttrs(arrivals);
    MbarrierInitAttrs(a).clusterRelease(multicast_);
    return a;
  }
  Attrs freeBarrierArriveAttrs() const {
    Attrs a;
    MbarrierArriveAttrs(a).clusterRelease(multicast_);
    return a;
  }

  // A top-level wgmma dot whose accumulator is an iteration argument and whose
  // result is yielded back to it, used by nothing else: give it a stage of slack.
  void markCarriedWgmmaDot() {
    Block& body = loop_.regions[0];
    const Op* yield = body.ops.empty() ? nullptr : body.ops.back().get();
    if (!yield || yield->kind != OpKind::Yield) return;
    std::unordered_map<ValueId, int> uses;
    countUses(body, uses);
    for (auto& op : body.ops) {
      if (op->kind != OpKind::Dot || op->operands.size() != 3) continue;
      const DotOp dot(*op);
      if (!fn_.typeOf(dot.acc()).layout.wgmma) continue;
      ValueId acc = dot.acc(), result = op->results[0];
      auto arg = std::find(body.args.begin() + 1, body.args.end(), acc);
      if (arg == body.args.end() || uses[acc] != 1 || uses[result] != 1) continue;
      size_t index = static_cast<size_t>(arg - body.args.begin() - 1);
      if (index >= yield->operands.size() || yield->operands[index] != result) continue;
      DotAttrs(op->attrs).wgmmaInFlight(true);
      ahead_ = stages_ - 2;
      inFlight_ = true;
      return;
    }
  }

  // One mbarrier per stage, each completing a phase when its one expect_tx
  // arrival and its copies' bytes are in.
  void buildMbarriers(std::vector<std::unique_ptr<Op>>& out) {
    Block setup;
    Builder b(fn_, &setup);
    Type barsType = Type::shared(DType::U64, {stages_});
    bars_ = b.make(OpKind::AllocShared, {}, barsType, range_);
    fn_.values[bars_].name = "pipeline_mbarriers";
    for (int64_t s = 0; s < stages_; ++s) b.create(OpKind::MbarrierInit, {bars_, i32(b, s)}, {}, range_, arrivalsAttrs(1));
    if (specialize_) {  // a stage is free again once every thread has arrived after reading it
      freeBars_ = b.make(OpKind::AllocShared, {}, barsType, range_);
      fn_.values[freeBars_].name = "pipeline_free_stages";
      for (int64_t s = 0; s < stages_; ++s)
        b.create(OpKind::MbarrierInit, {freeBars_, i32(b, s)}, {}, range_, freeBarrierInitAttrs(fn_.numThreads()));
      fn_.producerWarps = 4;
    }
    Attrs afterInit;
    BarrierAttrs(afterInit).afterMbarrierInit(true);
    b.create(OpKind::Barrier, {}, {}, range_, afterInit);
    for (const Op* copy : plan_.copies) {  // copy_bulk ops: a bulk plan has no other kind
      const Type& t = fn_.typeOf(CopyBulkOp(*copy).dst());
      bytesPerStage_ += t.numElements() * std::max(1, dtypeBits(t.dtype) / 8);
    }
    for (auto& op : setup.ops) out.push_back(std::move(op));
  }

  // The copies of iteration `iteration` into stage `stage`: the slice cloned
  // with the loop variable replaced, then the copy_async ops.
  void emitCopies(Builder& b, ValueId iteration, ValueId stage, ValueId global) {
    const Block& body = loop_.regions[0];
    std::unordered_map<ValueId, ValueId> map{{body.args[0], iteration}};
    auto mapped = [&](ValueId v) {
      auto it = map.find(v);
      return it == map.end() ? v : it->second;
    };
    for (const auto& op : body.ops) {
      if (!plan_.slice.count(op.get())) continue;
      std::vector<ValueId> operands;
      for (ValueId v : op->operands) operands.push_back(mapped(v));
      if (op->kind == OpKind::View && staged_.count(mapped(ViewOp(*op).base())))
        operands.insert(operands.begin() + 1, stage);  // the stage's index, before the offsets
      std::vector<Type> types;
      for (ValueId r : op->results) types.push_back(fn_.typeOf(r));
      Op& clone = b.create(op->kind, std::move(operands), std::move(types), op->range, op->attrs);
      for (size_t i = 0; i < op->results.size(); ++i) {
        map[op->results[i]] = clone.results[i];
        fn_.values[clone.results[i]].name = fn_.values[op->results[i]].name;
      }
    }
    if (specialize_) waitForFreeStage(b, global, stage);
    if (plan_.bulk) {
      Attrs bytes;
      MbarrierExpectTxAttrs(bytes).bytes(bytesPerStage_);
      b.create(OpKind::MbarrierExpectTx, {bars_, stage}, {}, range_, bytes);
    }
    for (const Op* copy : plan_.copies) {
      std::vector<ValueId> operands;
      for (ValueId v : copy->operands) operands.push_back(mapped(v));
      if (plan_.bulk) {
        operands.push_back(bars_);
        operands.push_back(stage);
      }
      Attrs attrs = copy->attrs;
      if (!multicast_) CopyBulkAttrs(attrs).multicast(false);
      b.create(copy->kind, std::move(operands), {}, copy->range, attrs);
    }
  }

  // The producer warpgroup also runs the kernel's statements before the loop, with
  // thread ids past the block's: allowed only where that is harmless (no stores, no
  // shared memory, no cross-warp reductions). Otherwise the loop is not specialized.
  // Returns the first statement it may not run (null: none).
  // The producer warpgroup runs, of the statements before the loop, the scalars and views it
  // may need for its copies (and the barrier after the mbarriers' init); the block's own warps
  // run everything (codegen/hopper_specialize.cpp). So a statement there may compute tiles,
  // copy, store or synchronize, but a scalar the producer cannot compute, or control flow,
  // keeps the loop from being specialized.
  // In a persistent kernel the statements of the loop over tiles before the pipelined loop
  // count too (the producer computes each tile's indices there).
  const Op* statementTheProducerMayNotRun() const {
    for (const auto& op : fn_.body.ops) {
      if (op.get() == &loop_) return nullptr;
      if (op.get() == plan_.outer) break;
      if (!producerMayRun(*op)) return op.get();
    }
    if (!plan_.outer) return nullptr;
    for (const auto& op : plan_.outer->regions[0].ops) {
      if (op.get() == &loop_) return nullptr;
      if (!producerMayRun(*op)) return op.get();
    }
    return nullptr;
  }

  bool producerMayRun(const Op& op) const {
    if (isArithmetic(op.kind)) return true;
    switch (op.kind) {
      case OpKind::AllocShared: case OpKind::View: case OpKind::TagSet: case OpKind::Assert:
        return true;
      case OpKind::Load:  // a scalar only from a tensor (one element)
        return !(fn_.typeOf(LoadOp(op).view()).space != MemSpace::Global && fn_.typeOf(op.results[0]).isScalar());
      case OpKind::ReduceAll:  // a scalar only from one element, no scratch
        return fn_.typeOf(ReduceAllOp(op).x()).numElements() == 1;
      case OpKind::If:
        return isScalarIf(fn_, op);
      default:
        if (!op.regions.empty()) return false;
        for (ValueId r : op.results)
          if (fn_.typeOf(r).isScalar()) return false;
        return true;
    }
  }

  // A bulk loop inside the kernel's loop over tiles: its barriers' phases continue from
  // one run to the next, so the outer loop carries how many iterations ran before
  // (`base`, from 0; + n after each run) and stages and parities count from it.
  void carryIterationCount(std::vector<std::unique_ptr<Op>>& hoisted) {
    Block setup;
    Builder b(fn_, &setup);
    ValueId zero = i32(b, 0);
    for (auto& op : setup.ops) hoisted.push_back(std::move(op));
    outer_->operands.push_back(zero);
    Block& outerBody = outer_->regions[0];
    Builder inner(fn_, &outerBody);
    base_ = inner.addBlockArg(outerBody, Type::scalar(DType::I32), "pipeline_iterations", range_);
    ValueId result = static_cast<ValueId>(fn_.values.size());
    Value v;
    v.type = Type::scalar(DType::I32);
    v.def = outer_;
    v.resultIndex = static_cast<uint32_t>(outer_->results.size());
    v.range = range_;
    fn_.values.push_back(v);
    outer_->results.push_back(result);
    // The yield passes base + n on: built before it, at the end of the outer body.
    std::unique_ptr<Op> yield = std::move(outerBody.ops.back());
    outerBody.ops.pop_back();
    ValueId next = inner.make(OpKind::Binary, {base_, ForOp(loop_).upperBound()}, Type::scalar(DType::I32), range_,
                              binaryAttrs(BinaryKind::Add));
    yield->operands.push_back(next);
    outerBody.ops.push_back(std::move(yield));
  }

  // The iteration's index across every run of the loop (the local one without an outer loop).
  ValueId globalIndex(Builder& b, ValueId local) {
    if (base_ == kNoValue) return local;
    return b.make(OpKind::Binary, {base_, local}, Type::scalar(DType::I32), range_, binaryAttrs(BinaryKind::Add));
  }

  // After a loop whose last wgmma group stayed in flight: its stage is released once the
  // loop's end has retired the group (codegen waits there), so a later run can refill it.
  void releaseLastStage(Builder& b) {
    ValueId n = ForOp(loop_).upperBound();
    ValueId ran = b.make(OpKind::Compare, {n, i32(b, 1)}, Type::scalar(DType::Bool), range_, compareAttrs(CmpKind::Ge));
    emitIf(b, ran, [&](Builder& in) {
      ValueId last = globalIndex(in, binary(in, BinaryKind::Sub, n, 1));
      in.create(OpKind::MbarrierArrive, {freeBars_, binary(in, BinaryKind::Rem, last, stages_)}, {}, range_,
                freeBarrierArriveAttrs());
    });
  }

  ValueId binary(Builder& b, BinaryKind kind, ValueId x, int64_t y) {
    return b.make(OpKind::Binary, {x, i32(b, y)}, Type::scalar(DType::I32), range_, binaryAttrs(kind));
  }

  // `if body: ...` with an empty else (both regions end in yield); returns the then-builder.
  Op& emitIf(Builder& b, ValueId cond, const std::function<void(Builder&)>& body) {
    Op& guard = b.create(OpKind::If, {cond}, {}, range_);
    Builder inner(fn_, &guard.regions[0]);
    body(inner);
    inner.create(OpKind::Yield, {}, {}, range_);
    inner.setBlock(&guard.regions[1]);
    inner.create(OpKind::Yield, {}, {}, range_);
    return guard;
  }

  // Specialized pipelines: iteration p >= S refills the stage iteration p - S read, once
  // every thread has released it (phase p / S - 1 of that stage's free barrier).
  void waitForFreeStage(Builder& b, ValueId iteration, ValueId stage) {
    if (std::optional<int64_t> p = constantInt(fn_, iteration); p && *p < stages_) return;  // a first use
    ValueId reuse = b.make(OpKind::Compare, {iteration, i32(b, stages_)}, Type::scalar(DType::Bool), range_, compareAttrs(CmpKind::Ge));
    emitIf(b, reuse, [&](Builder& in) {
      ValueId round = binary(in, BinaryKind::Sub, binary(in, BinaryKind::Div, iteration, stages_), 1);
      in.create(OpKind::MbarrierWait, {freeBars_, stage, binary(in, BinaryKind::Rem, round, 2)}, {}, range_);
    });
  }

  // Specialized pipelines, at the end of iteration j: every thread releases the stage it
  // read, or, while its wgmma group is still in flight, the stage of iteration j - 1.
  void releaseStage(Builder& b, ValueId j, ValueId global) {
    if (!inFlight_) {
      b.create(OpKind::MbarrierArrive, {freeBars_, binary(b, BinaryKind::Rem, global, stages_)}, {}, range_,
               freeBarrierArriveAttrs());
      return;
    }
    ValueId hasPrevious = b.make(OpKind::Compare, {j, i32(b, 1)}, Type::scalar(DType::Bool), range_, compareAttrs(CmpKind::Ge));
    emitIf(b, hasPrevious, [&](Builder& in) {
      ValueId previous = binary(in, BinaryKind::Rem, binary(in, BinaryKind::Add, global, stages_ - 1), stages_);
      in.create(OpKind::MbarrierArrive, {freeBars_, previous}, {}, range_, freeBarrierArriveAttrs());
    });
  }

  // `if cond: <copies of iteration, stage>` (both regions end in yield).
  void emitGuardedCopies(Builder& b, ValueId cond, ValueId iteration, bool stageFromIteration,
                         ValueId stage) {
    Op& guard = b.create(OpKind::If, {cond}, {}, range_);
    if (specialize_) IfAttrs(guard.attrs).producer(true);
    Builder inner(fn_, &guard.regions[0]);
    ValueId global = globalIndex(inner, iteration);
    if (stageFromIteration || base_ != kNoValue) stage = binary(inner, BinaryKind::Rem, global, stages_);
    emitCopies(inner, iteration, stage, global);
    inner.create(OpKind::Yield, {}, {}, range_);
    inner.setBlock(&guard.regions[1]);
    inner.create(OpKind::Yield, {}, {}, range_);
  }

  ValueId less(Builder& b, ValueId x, ValueId y) {
    return b.make(OpKind::Compare, {x, y}, Type::scalar(DType::Bool), range_, compareAttrs(CmpKind::Lt));
  }

  // Iterations 0 .. S-2 into stages 0 .. S-2, each guarded by p < n and
  // committed as its own group (folded when n is a constant).
  void buildPrologue(std::vector<std::unique_ptr<Op>>& out) {
    Block prologue;
    Builder b(fn_, &prologue);
    ValueId n = ForOp(loop_).upperBound();
    const std::optional<int64_t> nConstant = constantInt(fn_, n);
    const bool nKnown = nConstant.has_value();
    for (int64_t p = 0; p < ahead_; ++p) {
      if (!nKnown || p < *nConstant) {
        ValueId iteration = i32(b, p);
        if (nKnown && base_ == kNoValue && !specialize_) emitCopies(b, iteration, iteration, iteration);  // stage p
        else emitGuardedCopies(b, nKnown ? b.constBool(true, range_) : less(b, iteration, n), iteration, false, iteration);
      }
      if (!plan_.bulk) b.create(OpKind::CommitGroup, {}, {}, range_);
    }
    for (auto& op : prologue.ops) out.push_back(std::move(op));
  }

  // Views of a staged buffer in the body read stage `stage`.
  void addStage(Block& block, ValueId stage) {
    for (auto& op : block.ops) {
      if (op->kind == OpKind::View && !op->operands.empty() && staged_.count(ViewOp(*op).base()))
        op->operands.insert(op->operands.begin() + 1, stage);
      for (Block& region : op->regions) addStage(region, stage);
    }
  }

  static void countUses(const Block& block, std::unordered_map<ValueId, int>& uses) {
    for (const auto& op : block.ops) {
      for (ValueId v : op->operands) ++uses[v];
      for (const Block& region : op->regions) countUses(region, uses);
    }
  }

  void buildSteadyBody() {
    Block& body = loop_.regions[0];
    ValueId j = body.args[0];
    Block steady;
    steady.args = body.args;
    Builder b(fn_, &steady);
    if (!plan_.bulk) b.create(OpKind::WaitGroup, {}, {}, range_, pendingGroups(stages_ - 2));
    if (!specialize_) b.create(OpKind::Barrier, {}, {}, range_);
    ValueId ahead = b.make(OpKind::Binary, {j, i32(b, ahead_)}, Type::scalar(DType::I32), range_,
                           binaryAttrs(BinaryKind::Add));
    emitGuardedCopies(b, less(b, ahead, ForOp(loop_).upperBound()), ahead, true, kNoValue);
    if (!plan_.bulk) b.create(OpKind::CommitGroup, {}, {}, range_);
    ValueId global = globalIndex(b, j);
    ValueId stage = binary(b, BinaryKind::Rem, global, stages_);
    fn_.values[stage].name = "stage";
    if (plan_.bulk) {
      ValueId round = binary(b, BinaryKind::Div, global, stages_);
      ValueId parity = b.make(OpKind::Binary, {round, i32(b, 2)}, Type::scalar(DType::I32), range_,
                              binaryAttrs(BinaryKind::Rem));
      fn_.values[parity].name = "parity";
      b.create(OpKind::MbarrierWait, {bars_, stage, parity}, {}, range_);
    }

    // The rest of the body, reading stage j % S.
    std::unordered_set<const Op*> copies(plan_.copies.begin(), plan_.copies.end());
    size_t firstMoved = steady.ops.size();
    for (auto& op : body.ops)
      if (!copies.count(op.get())) steady.ops.push_back(std::move(op));
    std::vector<std::unique_ptr<Op>> moved(std::make_move_iterator(steady.ops.begin() + firstMoved),
                                           std::make_move_iterator(steady.ops.end()));
    steady.ops.resize(firstMoved);
    Block rest;
    rest.ops = std::move(moved);
    addStage(rest, stage);

    // The slice stays only where the rest of the body still uses it.
    std::unordered_map<ValueId, int> uses;
    countUses(rest, uses);
    for (size_t i = rest.ops.size(); i-- > 0;) {
      Op* op = rest.ops[i].get();
      if (!plan_.slice.count(op)) continue;
      bool dead = std::all_of(op->results.begin(), op->results.end(), [&](ValueId r) { return uses[r] == 0; });
      if (!dead) continue;
      for (ValueId v : op->operands) --uses[v];
      for (ValueId r : op->results) fn_.values[r].def = nullptr;
      rest.ops.erase(rest.ops.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (auto& op : rest.ops) steady.ops.push_back(std::move(op));
    if (specialize_) {  // the release goes before the yield
      std::unique_ptr<Op> yield = std::move(steady.ops.back());
      steady.ops.pop_back();
      Builder tail(fn_, &steady);
      releaseStage(tail, j, global);
      steady.ops.push_back(std::move(yield));
    }
    body = std::move(steady);
  }

  Function& fn_;
  Op& loop_;
  const LoopPlan& plan_;
  int64_t stages_;
  int64_t ahead_;  // how many iterations ahead the copies run: S-1, or S-2 with a wgmma in flight
  SourceRange range_;
  std::unordered_set<ValueId> staged_;
  ValueId bars_ = kNoValue;     // bulk loops: the stages' mbarriers
  ValueId freeBars_ = kNoValue; // specialized bulk loops: a stage's readers all released it
  bool specialize_ = false;     // specialize=True on a copy_bulk loop (ir/pipeline.h)
  bool multicast_ = false;      // specialized, with multicast copies: stages are freed cluster-wide
  std::vector<PipelineProblem>* notes_;  // where a request the rewrite could not honour goes
  Op* outer_ = nullptr;         // the top-level loop around a bulk loop, if any
  ValueId base_ = kNoValue;     // with an outer loop: iterations of earlier runs (carried by it)
  bool inFlight_ = false;       // the body's wgmma dot stays in flight for one iteration
  int64_t bytesPerStage_ = 0;   // bulk loops: what one iteration's copies write
};

// Rewrites the pipelined loops of `block`; ops that belong before the top-level loop
// around them go to `hoisted` (inserted by the caller before the op that holds `block`).
void pipelineBlock(Function& fn, Block& block, std::vector<PipelineProblem>& problems,
                   std::vector<std::unique_ptr<Op>>& hoisted, std::vector<PipelineProblem>* notes) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    std::vector<std::unique_ptr<Op>> fromRegions;
    for (Block& region : block.ops[i]->regions) pipelineBlock(fn, region, problems, fromRegions, notes);
    const size_t lifted = fromRegions.size();
    block.ops.insert(block.ops.begin() + static_cast<std::ptrdiff_t>(i),
                     std::make_move_iterator(fromRegions.begin()), std::make_move_iterator(fromRegions.end()));
    i += lifted;
    Op& op = *block.ops[i];
    if (op.kind != OpKind::For || ForOp(op).stages() <= 0) continue;
    LoopPlan plan;
    std::vector<PipelineProblem> found = detail::analyzePipelinedLoop(fn, op, plan);
    if (!found.empty()) {
      problems.insert(problems.end(), found.begin(), found.end());
      continue;
    }
    std::vector<std::unique_ptr<Op>> before, after;
    Rewriter(fn, op, plan, notes).run(before, after, hoisted);
    size_t count = before.size(), tail = after.size();
    block.ops.insert(block.ops.begin() + static_cast<std::ptrdiff_t>(i + 1),
                     std::make_move_iterator(after.begin()), std::make_move_iterator(after.end()));
    block.ops.insert(block.ops.begin() + static_cast<std::ptrdiff_t>(i),
                     std::make_move_iterator(before.begin()), std::make_move_iterator(before.end()));
    i += count + tail;
  }
}

}  // namespace

bool isScalarIf(const Function& fn, const Op& op) {
  if (op.kind != OpKind::If || op.regions.size() != 2) return false;
  for (ValueId r : op.results)
    if (!fn.typeOf(r).isScalar()) return false;
  for (const Block& region : op.regions)
    for (const auto& inner : region.ops) {
      if (inner->kind == OpKind::Yield) continue;
      if (inner->kind == OpKind::If) {
        if (!isScalarIf(fn, *inner)) return false;
        continue;
      }
      if (!isArithmetic(inner->kind)) return false;
      for (ValueId r : inner->results)
        if (!fn.typeOf(r).isScalar()) return false;
    }
  return true;
}

std::vector<PipelineProblem> findPipeliningProblems(const Function& fn, const Op& forOp) {
  LoopPlan plan;
  return detail::analyzePipelinedLoop(fn, forOp, plan);
}

namespace {

bool hasPipelinedLoop(const Block& block) {
  for (const auto& op : block.ops) {
    if (auto loop = as<ForOp>(*op); loop && loop->stages() > 0) return true;
    for (const Block& region : op->regions)
      if (hasPipelinedLoop(region)) return true;
  }
  return false;
}

}  // namespace

std::vector<PipelineProblem> applyPipelining(Function& fn, std::vector<PipelineProblem>* notes) {
  std::vector<PipelineProblem> problems;
  std::unique_ptr<Function> written = hasPipelinedLoop(fn.body) ? cloneFunction(fn) : nullptr;
  std::vector<std::unique_ptr<Op>> hoisted;  // stays empty: the body has no loop around it
  pipelineBlock(fn, fn.body, problems, hoisted, notes);
  if (problems.empty()) fn.asWritten = std::move(written);
  return problems;
}

std::vector<PipelineProblem> applyPipelining(Module& module) {
  std::vector<PipelineProblem> problems;
  for (auto& fn : module.functions) {
    if (!fn) continue;
    std::vector<PipelineProblem> found = applyPipelining(*fn);
    problems.insert(problems.end(), found.begin(), found.end());
  }
  return problems;
}

}  // namespace argus::ir
