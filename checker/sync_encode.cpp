// Z3 encoding of a pair of shared-memory accesses. All extents of register
// tiles are powers of two, so the distribution's / and % by constants are bit
// slices that Z3 simplifies away.
#include "checker/sync_encode.h"
#include "checker/layout_encode.h"
#include "checker/scalar_semantics.h"
#include "checker/operands_first.h"

#include <algorithm>

#include "ir/async.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::BinaryKind;
using ir::CmpKind;
using ir::OpKind;

namespace {

bool isI32(const ir::Type& t) { return t.kind == ir::TypeKind::Scalar && t.dtype == ir::DType::I32; }

}  // namespace

// A value the encoding does not interpret: one unknown constant per instance of
// the scope that defines it (shared by both sides when they run in the same
// iterations of its enclosing loops).
z3::expr PairEncoder::opaque(Side& side, ir::ValueId id) {
  std::string name = "v" + std::to_string(id);
  if (id < fa_.valueLoops.size())
    for (int loop : fa_.valueLoops[id]) name += "@" + iterationOf(side, loop).to_string();
  return ctx_.bv_const(name.c_str(), 32);
}

z3::expr PairEncoder::scalar(Side& side, ir::ValueId id) {
  if (auto it = side.memo.find(id); it != side.memo.end()) return it->second;
  // Arithmetic chains, operands first (checker/operands_first.h); other
  // recursion (selects, loop bounds) stops at kMaxEncodingDepth: the value is
  // then unknown, which can only make a query unprovable, never wrong.
  std::vector<ir::ValueId> chain = operandsFirst(
      id, [&](ir::ValueId v) { return binaryOperands(fn_, v); }, [&](ir::ValueId v) { return side.memo.count(v) > 0; });
  for (size_t i = 0; i + 1 < chain.size(); ++i) scalar(side, chain[i]);
  if (encodingDepth_ >= kMaxEncodingDepth) return opaque(side, id);
  ++encodingDepth_;
  z3::expr result = scalarTerm(side, id);
  --encodingDepth_;
  return result;
}

z3::expr PairEncoder::scalarTerm(Side& side, ir::ValueId id) {
  z3::expr result = bv(0);
  const ir::Value* value = id < fn_.values.size() ? &fn_.values[id] : nullptr;
  const ir::Op* def = value ? value->def : nullptr;
  if (!value || !isI32(value->type)) {
    result = opaque(side, id);
  } else if (!def) {
    // A block argument: a loop's induction variable, or a parameter / carried value.
    bool found = false;
    for (size_t l = 0; l < fa_.loops.size() && !found; ++l) {
      const ir::Op* loop = fa_.loops[l].op;
      if (!loop->regions.empty() && !loop->regions[0].args.empty() && loop->regions[0].args[0] == id) {
        iterationOf(side, static_cast<int>(l));
        result = side.inductionValue.at(static_cast<int>(l));
        found = true;
      }
    }
    if (!found) {
      result = opaque(side, id);
      for (const ir::Param& p : fn_.params)
        if (p.value == id && p.kind == ir::ParamKind::Size) {
          constraints_.push_back(result >= 0);
          preferSizes(result <= 64, result <= 4096);
        }
    }
  } else {
    auto operand = [&](size_t i) { return scalar(side, def->operands[i]); };
    switch (def->kind) {
      case OpKind::Const: result = bv(ir::ConstOp(*def).intValue()); break;
      case OpKind::ProgramId:
      case OpKind::NumPrograms: {
        int64_t axis = ir::gridAxisOf(*def);
        z3::expr pid = ctx_.bv_const(("program_id" + std::to_string(axis)).c_str(), 32);
        z3::expr num = ctx_.bv_const(("num_programs" + std::to_string(axis)).c_str(), 32);
        constraints_.push_back(pid >= 0 && num >= 1 && pid < num);
        preferSizes(num <= 2, num <= 8);
        result = def->kind == OpKind::ProgramId ? pid : num;
        break;
      }
      case OpKind::Binary: {
        if (def->operands.size() != 2) { result = opaque(side, id); break; }
        z3::expr x = operand(0), y = operand(1);
        if (auto r = encodeI32Binary(ir::BinaryOp(*def).binaryKind(), x, y)) result = *r;
        else result = opaque(side, id);
        break;
      }
      case OpKind::Select: {
        const ir::Op* cond = nullptr;
        if (def->operands.size() == 3) {
          const ir::ValueId condition = ir::SelectOp(*def).condition();
          if (condition < fn_.values.size()) cond = fn_.values[condition].def;
        }
        if (!cond || cond->kind != OpKind::Compare || cond->operands.size() != 2 ||
            !isI32(fn_.values[ir::CompareOp(*cond).lhs()].type)) {
          result = opaque(side, id);
          break;
        }
        const ir::CompareOp cmp(*cond);
        z3::expr x = scalar(side, cmp.lhs()), y = scalar(side, cmp.rhs());
        const z3::expr c = encodeI32Compare(cmp.cmpKind(), x, y);
        result = z3::ite(c, operand(1), operand(2));
        break;
      }
      default: result = opaque(side, id); break;
    }
  }
  side.memo.emplace(id, result);
  return result;
}

// The iteration index j of `loop` on this side (fresh when not fixed by the
// pair's relation), with iv = lb + step * j < ub, computed without overflow.
z3::expr PairEncoder::iterationOf(Side& side, int loop) {
  if (auto it = side.iteration.find(loop); it != side.iteration.end()) {
    if (!side.inductionValue.count(loop)) {
      // Fixed by the relation; its bounds are still to be stated on this side.
      z3::expr j = it->second;
      // A placeholder while the bounds are encoded: they may name loop-carried
      // values whose instance key asks for this loop's iteration again.
      side.inductionValue.emplace(loop, bv(0));
      const ir::Op* op = fa_.loops[static_cast<size_t>(loop)].op;
      if (op->operands.size() < 3) {
        side.inductionValue.erase(loop);
        side.inductionValue.emplace(loop, opaque(side, op->regions.empty() || op->regions[0].args.empty()
                                                             ? ir::kNoValue : op->regions[0].args[0]));
        return it->second;
      }
      const ir::ForOp forOp(*op);  // fa_.loops holds For ops (sync_walk.cpp)
      z3::expr lb = scalar(side, forOp.lowerBound()), ub = scalar(side, forOp.upperBound()),
               step = scalar(side, forOp.step());
      z3::expr iv64 = z3::sext(lb, 32) + z3::sext(step, 32) * z3::zext(j, 32);
      // Every iteration count fits in 32 bits, and j + 1 (the next iteration) never wraps.
      constraints_.push_back(z3::ult(j, ctx_.bv_val(static_cast<uint64_t>(0xFFFFFFFFu), 32)));
      constraints_.push_back(step > 0 && iv64 < z3::sext(ub, 32));
      side.inductionValue.erase(loop);
      side.inductionValue.emplace(loop, iv64.extract(31, 0));
      side.hasNextIteration.emplace(loop, iv64 + z3::sext(step, 32) < z3::sext(ub, 32));
    }
    return it->second;
  }
  z3::expr j = ctx_.bv_const(("j" + std::to_string(loop) + side.suffix).c_str(), 32);
  preferIterations(z3::ult(j, bv(1)), z3::ult(j, bv(4)));
  side.iteration.emplace(loop, j);
  return iterationOf(side, loop);
}

void PairEncoder::encodeAccess(Side& side, const Access& access) {
  const ir::Distribution dist = ir::Distribution::of(access.layout, fn_.numWarps);
  z3::expr t = ctx_.bv_const(("thread" + side.suffix).c_str(), 32);
  z3::expr v = ctx_.bv_const(("value" + side.suffix).c_str(), 32);
  side.thread = t;
  side.value = v;
  constraints_.push_back(z3::ult(t, bv(fn_.numThreads())) && z3::ult(v, bv(dist.valuesPerThread)));
  // The distribution's mixed radix (ir/types.h), digit by digit.
  EncodedDistribution encoded = encodeDistribution(ctx_, access.layout, dist, t, v, /*withPrimaryOwner=*/true);
  std::vector<z3::expr>& c = encoded.coordinate;
  const size_t rank = c.size();
  if (access.isWrite()) {
    // Only the primary owner stores: no replica bits, lane/warp 0 on reduced axes.
    for (const z3::expr& condition : encoded.primaryOwner) constraints_.push_back(condition);
  }
  // The element of the view this access touches.
  const ir::Op* viewOp = fn_.values[access.view].def;
  const std::vector<int64_t>& viewShape = fn_.values[access.view].type.shape;
  std::vector<z3::expr> tileCoord;
  if (access.role == AccessRole::Load || access.role == AccessRole::Store) {
    tileCoord = c;
  } else if (access.role == AccessRole::AsyncCopy && !c.empty()) {
    // c is a chunk; the copy writes its `vec` elements along the last axis.
    int64_t vec = ir::asyncCopyVectorElements(fn_.values[access.view].type.dtype, viewShape);
    z3::expr e = ctx_.bv_const(("element" + side.suffix).c_str(), 32);
    constraints_.push_back(z3::ult(e, bv(vec)));
    tileCoord = c;
    tileCoord.back() = c.back() * bv(vec) + e;
  } else if (rank == 2 && viewShape.size() == 2) {
    z3::expr kk = ctx_.bv_const(("k" + side.suffix).c_str(), 32);
    side.k = kk;
    int64_t extent = access.role == AccessRole::DotB ? viewShape[0] : viewShape[1];
    constraints_.push_back(z3::ult(kk, bv(extent)));
    if (access.role == AccessRole::DotA) tileCoord = {c[0], kk};
    else if (access.role == AccessRole::DotBTransposed) tileCoord = {c[1], kk};
    else tileCoord = {kk, c[1]};
  }
  const std::vector<int64_t>& bufferShape = fn_.values[access.buffer].type.shape;
  size_t r = bufferShape.size(), tk = tileCoord.size();
  side.coords.clear();
  for (size_t d = 0; d < r; ++d) {
    z3::expr offset = d + 1 < viewOp->operands.size() ? scalar(side, viewOp->operands[d + 1]) : bv(0);
    z3::expr x = d + tk >= r && tk <= r ? offset + tileCoord[d + tk - r] : offset;
    // Views of shared memory stay in bounds (sema and the interpreter check it).
    constraints_.push_back(x >= 0 && x < bv(bufferShape[d]));
    side.coords.push_back(x);
  }
}

z3::expr PairEncoder::encode(const Pending& earlier, int later, Side& first, Side& second) {
  constraints_.clear();
  iterationsTight_.clear();
  iterationsLoose_.clear();
  sizesTight_.clear();
  sizesLoose_.clear();
  const Access& a = fa_.accesses[static_cast<size_t>(earlier.access)];
  const Access& b = fa_.accesses[static_cast<size_t>(later)];
  first.suffix = "_1";
  second.suffix = "_2";
  // Relate the iterations of the loops both accesses are in. Past `instance`,
  // each side's loops run in instances the other side is not in.
  size_t instance = 0;
  for (size_t d = 0; d < a.loops.size() && d < b.loops.size() && a.loops[d] == b.loops[d]; ++d) {
    int loop = a.loops[d];
    IterRelation rel = d < earlier.relation.size() ? earlier.relation[d] : IterRelation::Same;
    if (rel == IterRelation::Same) {
      z3::expr j = ctx_.bv_const(("j" + std::to_string(loop)).c_str(), 32);
      preferIterations(z3::ult(j, bv(1)), z3::ult(j, bv(4)));
      first.iteration.emplace(loop, j);
      second.iteration.emplace(loop, j);
      instance = d + 1;
      continue;
    }
    instance = d + 1;
    z3::expr j1 = ctx_.bv_const(("j" + std::to_string(loop) + "_1").c_str(), 32);
    z3::expr j2 = rel == IterRelation::Next ? j1 + bv(earlier.distance)
                                            : ctx_.bv_const(("j" + std::to_string(loop) + "_2").c_str(), 32);
    if (rel == IterRelation::Later) constraints_.push_back(z3::ult(j1, j2));
    preferIterations(z3::ult(j1, bv(1)) && z3::ult(j2, bv(2)), z3::ult(j1, bv(4)) && z3::ult(j2, bv(8)));
    first.iteration.emplace(loop, j1);
    second.iteration.emplace(loop, j2);
    break;
  }
  for (int loop : a.loops) iterationOf(first, loop);
  for (int loop : b.loops) iterationOf(second, loop);
  for (const auto& [loop, k] : earlier.beforeLast) {
    const ir::Op* op = fa_.loops[static_cast<size_t>(loop)].op;
    auto j = first.iteration.find(loop);
    if (op->operands.size() < 3 || j == first.iteration.end()) continue;
    const ir::ForOp forOp(*op);
    z3::expr lb = z3::sext(scalar(first, forOp.lowerBound()), 32), ub = z3::sext(scalar(first, forOp.upperBound()), 32),
             step = z3::sext(scalar(first, forOp.step()), 32);
    z3::expr last = lb + step * (z3::zext(j->second, 32) + ctx_.bv_val(k, 64));
    constraints_.push_back(last < ub && !(last + step < ub));
  }
  // No barrier() lies between the two accesses: the earlier one runs in the
  // last iteration of each of its own loops that has a barrier in its body,
  // and the later one in the first iteration of each of its own such loops.
  for (const IterationPin& pin : earlier.pins) {
    if (std::find(b.loops.begin(), b.loops.end(), pin.loop) == b.loops.end()) continue;
    z3::expr j = iterationOf(second, pin.loop);
    constraints_.push_back(pin.atLeast ? z3::uge(j, bv(pin.iteration)) : j == bv(pin.iteration));
  }
  for (size_t d = instance; d < a.loops.size() && !earlier.acrossBarriers; ++d) {
    int loop = a.loops[d];
    auto next = first.hasNextIteration.find(loop);
    if (fa_.loops[static_cast<size_t>(loop)].definiteBarrier && next != first.hasNextIteration.end())
      constraints_.push_back(!next->second);
  }
  for (size_t d = instance; d < b.loops.size() && !earlier.acrossBarriers; ++d) {
    int loop = b.loops[d];
    if (fa_.loops[static_cast<size_t>(loop)].definiteBarrier) constraints_.push_back(second.iteration.at(loop) == 0);
  }
  encodeAccess(first, a);
  encodeAccess(second, b);
  z3::expr all = earlier.sameThreadToo ? ctx_.bool_val(true) : *first.thread != *second.thread;
  for (size_t d = 0; d < first.coords.size() && d < second.coords.size(); ++d)
    all = all && first.coords[d] == second.coords[d];
  for (const z3::expr& c : constraints_) all = all && c;
  return all;
}

PairEncoder::Answer PairEncoder::solve(const Pending& earlier, int later, Side& first, Side& second,
                                       SolverBudget& budget) {
  z3::expr formula = encode(earlier, later, first, second);
  z3::solver solver(ctx_, "QF_BV");
  budget.limit(solver);
  solver.add(withoutDivisions(ctx_, formula));
  Answer answer;
  answer.result = budget.check(solver);
  if (answer.result == z3::unknown) answer.reason = budget.unknownReason(solver);
  if (answer.result != z3::sat) return answer;
  answer.model = solver.get_model();
  for (int tier = 0; tier < kPreferenceTiers; ++tier) {
    solver.push();
    for (const z3::expr& small : preferences(tier)) solver.add(small);
    bool found = budget.check(solver) == z3::sat;
    if (found) answer.model = solver.get_model();
    solver.pop();
    if (found) break;
  }
  return answer;
}

}  // namespace argus::checker
