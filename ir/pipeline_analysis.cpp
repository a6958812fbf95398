// The analysis half of the pipelining policy (ir/pipeline.h): which copies lead a
// pipelined loop, what their views depend on, and what keeps a loop from being
// rewritten (PipelineProblem).
#include <algorithm>
#include <functional>
#include <unordered_set>

#include "ir/ops.h"
#include "ir/pipeline_internal.h"

namespace argus::ir::detail {

namespace {

// Ops that touch memory, synchronize, allocate or contain other ops, as ir/ops.def declares
// them: they end the leading run of a pipelined body (moving a copy above them would change
// what they see). The asynchronous copies that make up the run are the ops whose writes
// complete later (on a cp.async group or an mbarrier).
bool endsLeadingRun(OpKind k) {
  const OpInfo& info = opInfo(k);
  if (info.sync != SyncKind::None || info.has(kControl) || info.has(kTerminator) || info.has(kAllocates)) return true;
  if (info.effects.empty()) return false;
  return std::none_of(info.effects.begin(), info.effects.end(),
                      [](const EffectDecl& e) { return e.completion != Completion::AtOnce; });
}

// Ops the pass may recompute for another iteration: no memory access, scalar results.
bool isPureScalar(const Function& fn, const Op& op) {
  if (op.kind == OpKind::View) return true;
  return isArithmetic(op.kind) && op.results.size() == 1 && fn.typeOf(op.results[0]).isScalar();
}

bool isConstInt(const Function& fn, ValueId v, int64_t want) {
  return isInteger(fn.typeOf(v).dtype) && constantInt(fn, v) == want;
}

void forEachOp(const Block& block, const std::function<void(const Op&)>& visit) {
  for (const auto& op : block.ops) {
    visit(*op);
    for (const Block& region : op->regions) forEachOp(region, visit);
  }
}


bool isCopy(OpKind k) { return k == OpKind::CopyAsync || k == OpKind::CopyBulk; }
bool isExplicitSync(OpKind k) {
  return k == OpKind::Barrier || k == OpKind::CommitGroup || k == OpKind::WaitGroup || k == OpKind::MbarrierInit ||
         k == OpKind::MbarrierExpectTx || k == OpKind::MbarrierArrive || k == OpKind::MbarrierWait;
}

// The plain top-level For whose body holds `loop` directly (a persistent kernel's
// loop over tiles), or null.
const Op* topLevelLoopAround(const Function& fn, const Op& loop) {
  for (const auto& op : fn.body.ops) {
    if (op->kind != OpKind::For || ForOp(*op).stages() != 0) continue;
    for (const auto& inner : op->regions[0].ops)
      if (inner.get() == &loop) return op.get();
  }
  return nullptr;
}

// True when `target` is nested in a For of `block` (at any depth).
bool insideLoop(const Block& block, const Op& target, bool inLoop = false) {
  for (const auto& op : block.ops) {
    if (op.get() == &target) return inLoop;
    for (const Block& region : op->regions)
      if (insideLoop(region, target, inLoop || op->kind == OpKind::For)) return true;
  }
  return false;
}

class Analysis {
 public:
  Analysis(const Function& fn, const Op& loop) : fn_(fn), loop_(loop) {}

  std::vector<PipelineProblem> run(LoopPlan& plan) {
    const ForOp loop(loop_);
    if (loop.stages() < 2 || loop_.regions[0].args.empty() || !isConstInt(fn_, loop.lowerBound(), 0) ||
        !isConstInt(fn_, loop.step(), 1)) {
      problem(PipelineProblem::Kind::BadLoop, loop_.range, loop_.range);
      return std::move(problems_);
    }
    const Block& body = loop_.regions[0];
    const Op* stop = nullptr;
    for (const auto& op : body.ops) {
      if (isCopy(op->kind)) plan.copies.push_back(op.get());
      else if (endsLeadingRun(op->kind)) { stop = op.get(); break; }
    }
    if (plan.copies.empty()) {
      SourceRange where = stop && stop->kind != OpKind::Yield ? stop->range : loop_.range;
      problem(PipelineProblem::Kind::NoLeadingCopy, where, loop_.range);
      return std::move(problems_);
    }
    plan.bulk = plan.copies.front()->kind == OpKind::CopyBulk;
    for (const Op* copy : plan.copies)
      if (copy->kind != plan.copies.front()->kind) {
        problem(PipelineProblem::Kind::MixedCopies, copy->range, plan.copies.front()->range);
        break;
      }
    if (plan.bulk && insideLoop(fn_.body, loop_)) {
      plan.outer = topLevelLoopAround(fn_, loop_);
      if (!plan.outer) problem(PipelineProblem::Kind::BulkNested, loop_.range, loop_.range);
    }
    if (!plan.bulk && ForOp(loop_).specialize())
      problem(PipelineProblem::Kind::SpecializeNeedsBulk, plan.copies.front()->range, loop_.range);
    std::unordered_set<const Op*> leading(plan.copies.begin(), plan.copies.end());
    forEachOp(body, [&](const Op& op) {
      if (isCopy(op.kind) && !leading.count(&op))
        problem(PipelineProblem::Kind::LateCopy, op.range, plan.copies.front()->range);
      if (isExplicitSync(op.kind)) problem(PipelineProblem::Kind::ExplicitSync, op.range, loop_.range);
    });
    for (const Op* copy : plan.copies) checkDestination(*copy, plan);
    for (const Op* copy : plan.copies) collectSlice(*copy, plan);
    checkBufferUses(plan);
    std::stable_sort(problems_.begin(), problems_.end(), [](const PipelineProblem& a, const PipelineProblem& b) {
      return a.range.begin < b.range.begin;
    });
    return std::move(problems_);
  }

 private:
  void problem(PipelineProblem::Kind kind, SourceRange range, SourceRange related, ValueId value = kNoValue) {
    problems_.push_back(PipelineProblem{kind, range, related, value, ForOp(loop_).stages()});
  }

  // The destination must be a view of a whole shared buffer: offsets all 0, same shape.
  void checkDestination(const Op& copy, LoopPlan& plan) {
    ValueId buffer = kNoValue;
    bool whole = false;
    const Op* view = nullptr;
    if (!copy.operands.empty()) {  // a copy_async or a copy_bulk (isCopy)
      const ValueId dst = copy.kind == OpKind::CopyBulk ? CopyBulkOp(copy).dst() : CopyAsyncOp(copy).dst();
      view = fn_.values[dst].def;
    }
    if (view && view->kind == OpKind::View && !view->operands.empty()) {
      buffer = ViewOp(*view).base();
      const Op* alloc = fn_.values[buffer].def;
      const Type& bufferType = fn_.typeOf(buffer);
      whole = alloc && alloc->kind == OpKind::AllocShared &&
              fn_.typeOf(view->results[0]).shape == bufferType.shape;
      for (size_t i = 1; i < view->operands.size(); ++i) whole = whole && isConstInt(fn_, view->operands[i], 0);
    }
    if (!whole) {
      problem(PipelineProblem::Kind::PartialBuffer, copy.range, view ? view->range : copy.range, buffer);
      plan.buffers.push_back(kNoValue);
      return;
    }
    for (size_t i = 0; i < plan.buffers.size(); ++i)
      if (plan.buffers[i] == buffer) {
        problem(PipelineProblem::Kind::BufferCopiedTwice, copy.range, plan.copies[i]->range, buffer);
        plan.buffers.push_back(kNoValue);
        return;
      }
    plan.buffers.push_back(buffer);
  }

  // Everything the copy's views are computed from, back to values defined
  // outside the loop or the loop variable.
  void collectSlice(const Op& copy, LoopPlan& plan) {
    const Block& body = loop_.regions[0];
    std::vector<ValueId> work(copy.operands.begin(), copy.operands.end());
    while (!work.empty()) {
      ValueId v = work.back();
      work.pop_back();
      if (v == body.args[0] || !visited_.insert(v).second) continue;
      if (std::find(body.args.begin() + 1, body.args.end(), v) != body.args.end()) {
        problem(PipelineProblem::Kind::SourceNotComputable, copy.range, fn_.values[v].range, v);
        continue;
      }
      const Op* def = fn_.values[v].def;
      bool inBody = def && std::any_of(body.ops.begin(), body.ops.end(),
                                       [&](const std::unique_ptr<Op>& op) { return op.get() == def; });
      if (!inBody) continue;  // defined before the loop: the same in every iteration
      if (!isPureScalar(fn_, *def)) {
        problem(PipelineProblem::Kind::SourceNotComputable, def->range, copy.range, v);
        continue;
      }
      plan.slice.insert(def);
      work.insert(work.end(), def->operands.begin(), def->operands.end());
    }
  }

  // A staged buffer lives only in this loop: its views elsewhere would not know the stage.
  void checkBufferUses(const LoopPlan& plan) {
    std::unordered_set<ValueId> staged;
    for (ValueId b : plan.buffers)
      if (b != kNoValue) staged.insert(b);
    std::unordered_set<ValueId> reported;
    std::function<void(const Block&, bool)> walk = [&](const Block& block, bool inside) {
      for (const auto& op : block.ops) {
        if (!inside)
          for (ValueId v : op->operands)
            if (staged.count(v) && reported.insert(v).second)
              problem(PipelineProblem::Kind::BufferUsedOutside, op->range, loop_.range, v);
        for (const Block& region : op->regions) walk(region, inside || op.get() == &loop_);
      }
    };
    walk(fn_.body, false);
  }

  const Function& fn_;
  const Op& loop_;
  std::vector<PipelineProblem> problems_;
  std::unordered_set<ValueId> visited_;  // values already looked at
};

}  // namespace

std::vector<PipelineProblem> analyzePipelinedLoop(const Function& fn, const Op& loop, LoopPlan& plan) {
  return Analysis(fn, loop).run(plan);
}

}  // namespace argus::ir::detail
