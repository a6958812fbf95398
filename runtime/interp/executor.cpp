// Control flow and register computation of the block executor.
#include "runtime/interp/executor.h"

namespace argus::interp::detail {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

const TileMap& LayoutCache::get(const ir::Layout& layout) {
  std::string key = ir::layoutStr(layout);  // names kind, parent, warps and reduced axes
  auto it = maps_.find(key);
  if (it != maps_.end()) return *it->second;
  auto map = std::make_unique<TileMap>();
  map->dist = ir::Distribution::of(layout, numWarps_);
  map->shape = layout.shape();
  map->valuesPerThread = map->dist.valuesPerThread;
  map->numThreads = numWarps_ * 32;
  size_t rank = map->shape.size();
  size_t count = static_cast<size_t>(map->numThreads * map->valuesPerThread);
  map->coords.resize(count * rank);
  map->linear.resize(count);
  map->primary.resize(static_cast<size_t>(map->numThreads));
  for (int64_t t = 0; t < map->numThreads; ++t) {
    map->primary[static_cast<size_t>(t)] = map->dist.isPrimaryOwner(t);
    for (int64_t v = 0; v < map->valuesPerThread; ++v) {
      std::vector<int64_t> c = map->dist.coordinate(t, v);
      size_t slot = static_cast<size_t>(t * map->valuesPerThread + v);
      int64_t lin = 0;
      for (size_t d = 0; d < rank; ++d) {
        map->coords[slot * rank + d] = c[d];
        lin = lin * map->shape[d] + c[d];
      }
      map->linear[slot] = lin;
    }
  }
  const TileMap& ref = *map;
  maps_.emplace(std::move(key), std::move(map));
  return ref;
}

BlockExecutor::BlockExecutor(const ir::Function& fn, const RunOptions& opts, LayoutCache& layouts, BlockContext ctx)
    : fn_(fn), opts_(opts), layouts_(layouts), ctx_(ctx), numThreads_(fn.numThreads()), values_(fn.values.size()) {}

std::string BlockExecutor::describeThread(int64_t thread) {
  return "thread " + std::to_string(thread) + " (warp " + std::to_string(thread / 32) + ", lane " +
         std::to_string(thread % 32) + ")";
}

std::string BlockExecutor::describeCoord(const int64_t* c, size_t rank) {
  std::string s = "(";
  for (size_t d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(c[d]);
  return s + ")";
}

void BlockExecutor::fail(DiagId id, const Op& op, std::vector<std::string> args, std::optional<int64_t> thread,
                         std::optional<int64_t> otherThread, std::vector<Label> labels) const {
  RunError e;
  e.id = id;
  e.message = formatDiagMessage(id, args);
  e.arguments = std::move(args);
  e.range = op.range;
  e.block = ctx_.linearBlock;
  e.thread = thread;
  e.otherThread = otherThread;
  e.labels = std::move(labels);
  throw Fault{std::move(e)};
}

void BlockExecutor::run(const std::vector<RtValue>& params) {
  for (size_t i = 0; i < fn_.body.args.size() && i < params.size(); ++i) values_[fn_.body.args[i]] = params[i];
  execBlock(fn_.body);
  finishAsyncCopies();
  finishBulkCopies();
}

void BlockExecutor::execBlock(const ir::Block& block) {
  for (const auto& op : block.ops) exec(*op);
}

void BlockExecutor::exec(const Op& op) {
  if (opts_.maxOpsPerBlock && ++opsExecuted_ > opts_.maxOpsPerBlock)
    fail(DiagId::RunOpLimit, op, {std::to_string(ctx_.linearBlock), std::to_string(opts_.maxOpsPerBlock)});
  switch (op.kind) {
    case OpKind::Const: {
      RtValue& r = values_[op.results[0]];
      r.kind = ir::TypeKind::Scalar;
      const ir::ConstOp constant(op);
      r.scalar = num::constant(typeOf(op.results[0]).dtype, constant.intValue(), constant.floatValue());
      return;
    }
    case OpKind::ProgramId:
    case OpKind::NumPrograms: {
      RtValue& r = values_[op.results[0]];
      r.kind = ir::TypeKind::Scalar;
      const auto axis = static_cast<size_t>(ir::gridAxisOf(op));
      r.scalar.i = num::normalizeInt(ir::DType::I32, op.kind == OpKind::ProgramId ? ctx_.blockId[axis] : ctx_.grid[axis]);
      return;
    }
    case OpKind::Binary: case OpKind::Compare: case OpKind::Unary: case OpKind::Fma:
    case OpKind::Select: case OpKind::Cast: case OpKind::Splat: case OpKind::Iota:
      return execElementwise(op);
    case OpKind::Broadcast: return execBroadcast(op);
    case OpKind::ConvertLayout:
    case OpKind::Reshape: {  // row-major order is the same in both shapes
      const ValueId x = op.kind == OpKind::Reshape ? ir::ReshapeOp(op).x() : ir::ConvertLayoutOp(op).x();
      values_[op.results[0]] = scatter(gather(value(x), typeOf(x)), typeOf(op.results[0]));
      return;
    }
    case OpKind::Reduce: case OpKind::ReduceAll: return execReduce(op);
    case OpKind::AllocShared: return execAllocShared(op);
    case OpKind::View: return execView(op);
    case OpKind::Load: return execLoad(op);
    case OpKind::Store: return execStore(op);
    case OpKind::Dot: return execDot(op);
    case OpKind::Barrier: ++epoch_; return;
    case OpKind::CopyAsync: return execCopyAsync(op);
    case OpKind::CommitGroup: return execCommitGroup();
    case OpKind::WaitGroup: return execWaitGroup(op);
    case OpKind::MbarrierInit: return execMbarrierInit(op);
    case OpKind::MbarrierExpectTx: return execMbarrierExpectTx(op);
    case OpKind::MbarrierArrive: return execMbarrierArrive(op);
    case OpKind::MbarrierWait: return execMbarrierWait(op);
    case OpKind::CopyBulk: return execCopyBulk(op);
    case OpKind::For: return execFor(op);
    case OpKind::If: return execIf(op);
    case OpKind::Yield:
      yielded_.clear();
      for (ValueId v : op.operands) yielded_.push_back(values_[v]);
      return;
    // Tags are the checker's: a tagged tile is its operand, an assertion does nothing.
    case OpKind::TagSet: values_[op.results[0]] = values_[ir::TagSetOp(op).tile()]; return;
    case OpKind::Assert: return;
  }
}

void BlockExecutor::execFor(const Op& op) {
  const ir::ForOp loop(op);
  const Type& ivType = typeOf(loop.lowerBound());
  Elem iv = value(loop.lowerBound()).scalar, ub = value(loop.upperBound()).scalar, step = value(loop.step()).scalar;
  bool negativeOrZero = ir::isSigned(ivType.dtype) ? step.i <= 0 : step.i == 0;
  if (negativeOrZero)
    fail(DiagId::RunNonPositiveStep, op, {num::format(ivType.dtype, step)});
  std::vector<RtValue> iters;
  for (size_t i = 3; i < op.operands.size(); ++i) iters.push_back(values_[op.operands[i]]);
  const ir::Block& body = op.regions[0];
  while (num::compare(ir::CmpKind::Lt, ivType.dtype, iv, ub)) {
    RtValue& ivValue = values_[body.args[0]];
    ivValue.kind = ir::TypeKind::Scalar;
    ivValue.scalar = iv;
    for (size_t i = 0; i < iters.size(); ++i) values_[body.args[1 + i]] = std::move(iters[i]);
    execBlock(body);
    iters = std::move(yielded_);
    yielded_.clear();
    // Stop rather than wrap: iv + step past the dtype's range is past ub.
    Elem next;
    std::string ignored;
    num::binary(ir::BinaryKind::Add, ivType.dtype, iv, step, next, ignored);
    if (!num::compare(ir::CmpKind::Gt, ivType.dtype, next, iv)) break;
    iv = next;
  }
  for (size_t i = 0; i < op.results.size() && i < iters.size(); ++i) values_[op.results[i]] = std::move(iters[i]);
}

void BlockExecutor::execIf(const Op& op) {
  bool cond = value(ir::IfOp(op).condition()).scalar.i != 0;
  execBlock(op.regions[cond ? 0 : 1]);
  std::vector<RtValue> results = std::move(yielded_);
  yielded_.clear();
  for (size_t i = 0; i < op.results.size() && i < results.size(); ++i) values_[op.results[i]] = std::move(results[i]);
}

void BlockExecutor::execElementwise(const Op& op) {
  const Type& rt = typeOf(op.results[0]);
  RtValue r;
  r.kind = rt.kind;
  size_t count = 1;
  const TileMap* map = nullptr;
  if (rt.isTile()) {
    map = &layouts_.get(rt.layout);
    count = static_cast<size_t>(numThreads_ * map->valuesPerThread);
    r.tile.resize(count);
  }
  auto operand = [&](size_t k, size_t i) -> const Elem& {
    const RtValue& v = values_[op.operands[k]];
    return v.kind == ir::TypeKind::Tile ? v.tile[i] : v.scalar;
  };
  ir::DType opType = op.operands.empty() ? rt.dtype : typeOf(op.operands.back()).dtype;
  num::ElemFault fault;
  for (size_t i = 0; i < count; ++i) {
    Elem& out = rt.isTile() ? r.tile[i] : r.scalar;
    switch (op.kind) {
      case OpKind::Binary:
        if (!num::binary(ir::BinaryOp(op).binaryKind(), rt.dtype, operand(0, i), operand(1, i), out, fault)) {
          if (!map) {  // a scalar: every thread computes the same
            fault.args.emplace_back();
            fail(fault.id, op, std::move(fault.args));
          }
          int64_t t = static_cast<int64_t>(i) / map->valuesPerThread;
          fault.args.push_back(" at element " + describeCoord(map->coords.data() + i * map->rank(), map->rank()) +
                               " (" + describeThread(t) + ", value " +
                               std::to_string(static_cast<int64_t>(i) % map->valuesPerThread) + ")");
          fail(fault.id, op, std::move(fault.args), t);
        }
        break;
      case OpKind::Compare:
        out = Elem{};
        out.i = num::compare(ir::CompareOp(op).cmpKind(), typeOf(ir::CompareOp(op).lhs()).dtype, operand(0, i), operand(1, i));
        break;
      case OpKind::Unary: out = num::unary(ir::UnaryOp(op).unaryKind(), rt.dtype, operand(0, i)); break;
      case OpKind::Fma: out = num::fma(rt.dtype, operand(0, i), operand(1, i), operand(2, i)); break;
      case OpKind::Select: out = operand(0, i).i ? operand(1, i) : operand(2, i); break;
      case OpKind::Cast: out = num::cast(opType, rt.dtype, operand(0, i)); break;
      case OpKind::Splat: out = values_[ir::SplatOp(op).scalar()].scalar; break;
      case OpKind::Iota:
        out = Elem{};
        out.i = map->coords[i * map->rank() + static_cast<size_t>(ir::IotaOp(op).axis())];
        break;
      default: break;
    }
  }
  values_[op.results[0]] = std::move(r);
}

// Element c of a (P, R') tile is element c with the axes of R \ R' zeroed of the
// (P, R) operand, which the same thread already holds.
void BlockExecutor::execBroadcast(const Op& op) {
  const ir::BroadcastOp broadcast(op);
  const Type& from = typeOf(broadcast.x());
  const Type& to = typeOf(op.results[0]);
  const TileMap& src = layouts_.get(from.layout);
  const TileMap& dst = layouts_.get(to.layout);
  const RtValue& x = value(broadcast.x());
  RtValue r;
  r.kind = ir::TypeKind::Tile;
  r.tile.resize(static_cast<size_t>(numThreads_ * dst.valuesPerThread));
  std::vector<int64_t> c(dst.rank());
  for (int64_t t = 0; t < numThreads_; ++t)
    for (int64_t v = 0; v < dst.valuesPerThread; ++v) {
      const int64_t* dc = dst.coord(t, v);
      for (size_t d = 0; d < c.size(); ++d) c[d] = from.layout.isReduced(d) ? 0 : dc[d];
      int64_t sv = src.dist.valueIndexOf(t, c);
      if (sv < 0)
        fail(DiagId::RunInternalError, op,
             {fn_.name, "the source element " + describeCoord(c.data(), c.size()) + " of a broadcast is not held by " +
                            describeThread(t) + ", which holds its result element " + describeCoord(dc, c.size())},
             t);
      r.tile[static_cast<size_t>(t * dst.valuesPerThread + v)] = x.tile[static_cast<size_t>(t * src.valuesPerThread + sv)];
    }
  values_[op.results[0]] = std::move(r);
}

std::vector<Elem> BlockExecutor::gather(const RtValue& v, const Type& t) {
  const TileMap& map = layouts_.get(t.layout);
  int64_t total = 1;
  for (int64_t e : map.shape) total *= e;
  std::vector<Elem> logical(static_cast<size_t>(total));
  for (int64_t th = 0; th < numThreads_; ++th) {
    if (!map.primary[static_cast<size_t>(th)]) continue;
    for (int64_t k = 0; k < map.valuesPerThread; ++k) {
      size_t slot = static_cast<size_t>(th * map.valuesPerThread + k);
      logical[static_cast<size_t>(map.linear[slot])] = v.tile[slot];
    }
  }
  return logical;
}

RtValue BlockExecutor::scatter(const std::vector<Elem>& logical, const Type& t) {
  const TileMap& map = layouts_.get(t.layout);
  RtValue r;
  r.kind = ir::TypeKind::Tile;
  r.tile.resize(map.linear.size());
  for (size_t slot = 0; slot < map.linear.size(); ++slot) r.tile[slot] = logical[static_cast<size_t>(map.linear[slot])];
  return r;
}

// Reductions are computed on the logical tile in ascending index order (the GPU
// combines in another order; floating-point sums may differ in the last bits).
void BlockExecutor::execReduce(const Op& op) {
  const ValueId input = op.kind == OpKind::ReduceAll ? ir::ReduceAllOp(op).x() : ir::ReduceOp(op).x();
  const Type& xt = typeOf(input);
  std::vector<Elem> x = gather(value(input), xt);
  ir::DType dt = xt.dtype;
  if (op.kind == OpKind::ReduceAll) {
    RtValue r;
    r.kind = ir::TypeKind::Scalar;
    r.scalar = x[0];
    for (size_t i = 1; i < x.size(); ++i) r.scalar = num::reduceStep(ir::reduceKindOf(op), dt, r.scalar, x[i]);
    values_[op.results[0]] = std::move(r);
    return;
  }
  const auto axis = static_cast<size_t>(ir::ReduceOp(op).axis());
  const std::vector<int64_t>& shape = xt.shape;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  int64_t extent = shape[axis];
  int64_t outer = static_cast<int64_t>(x.size()) / (extent * inner);
  std::vector<Elem> out(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      Elem acc = x[static_cast<size_t>(o * extent * inner + in)];
      for (int64_t k = 1; k < extent; ++k)
        acc = num::reduceStep(ir::reduceKindOf(op), dt, acc, x[static_cast<size_t>((o * extent + k) * inner + in)]);
      out[static_cast<size_t>(o * inner + in)] = acc;
    }
  values_[op.results[0]] = scatter(out, typeOf(op.results[0]));
}

}  // namespace argus::interp::detail
