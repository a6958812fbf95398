// Reductions and layout conversions: per-thread combine, butterfly shuffles
// over the lane bits that move the reduced coordinates, then across warps
// through the shared scratch array. Every scratch use starts with a barrier
// (so earlier readers are done) and puts one between its writes and reads.
//
// All threads that hold a result compute it with the same operations in the
// same order (butterfly partners combine commutatively, warps are combined in
// ascending order), so replicas agree bit for bit.
#include <bit>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen/lowering.h"

namespace argus::codegen {

using ir::DType;

llvm::Value* KernelLowering::combine(ir::ReduceKind kind, DType t, llvm::Value* a, llvm::Value* b) {
  // On bool: sum and max are "any" (or), min and prod are "all" (and), as in the interpreter.
  if (t == DType::Bool)
    return kind == ir::ReduceKind::Sum || kind == ir::ReduceKind::Max ? b_.CreateOr(a, b) : b_.CreateAnd(a, b);
  switch (kind) {
    case ir::ReduceKind::Sum: return emitBinary(ir::BinaryKind::Add, t, a, b);
    case ir::ReduceKind::Max: return emitBinary(ir::BinaryKind::Max, t, a, b);
    case ir::ReduceKind::Min: return emitBinary(ir::BinaryKind::Min, t, a, b);
    case ir::ReduceKind::Prod: return emitBinary(ir::BinaryKind::Mul, t, a, b);
  }
  return nullptr;
}

llvm::Value* KernelLowering::shuffleXor(llvm::Value* v, DType t, int laneMask) {
  llvm::Value* full = b_.getInt32(0xffffffffu);
  llvm::Value* mask = b_.getInt32(static_cast<uint32_t>(laneMask));
  llvm::Value* clamp = b_.getInt32(0x1f);
  llvm::Type* ty = v->getType();
  if (ty->isFloatTy())
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_f32, {}, {full, v, mask, clamp});
  unsigned bits = ty->getPrimitiveSizeInBits();
  llvm::Value* asInt = ty->isIntegerTy() ? v : b_.CreateBitCast(v, b_.getIntNTy(bits));
  auto shfl32 = [&](llvm::Value* x) {
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {}, {full, x, mask, clamp});
  };
  llvm::Value* result;
  if (bits == 64) {
    llvm::Value* lo = shfl32(b_.CreateTrunc(asInt, b_.getInt32Ty()));
    llvm::Value* hi = shfl32(b_.CreateTrunc(b_.CreateLShr(asInt, 32), b_.getInt32Ty()));
    result = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
  } else if (bits == 32) {
    result = shfl32(asInt);
  } else {
    result = b_.CreateTrunc(shfl32(b_.CreateZExt(asInt, b_.getInt32Ty())), b_.getIntNTy(bits));
  }
  (void)t;
  return ty->isIntegerTy() ? result : b_.CreateBitCast(result, ty);
}

llvm::Value* KernelLowering::linearTileIndex(const std::vector<llvm::Value*>& coord, const std::vector<int64_t>& shape) {
  llvm::Value* index = b_.getInt32(0);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 1) index = b_.CreateAdd(index, b_.CreateMul(coord[d], b_.getInt32(static_cast<uint32_t>(stride))));
    stride *= shape[d];
  }
  return index;
}

bool KernelLowering::lowerReduce(const ir::Op& op) {
  const ir::ReduceOp reduce(op);
  const ir::Type& in = fn_.typeOf(reduce.x());
  const ir::Type& out = fn_.typeOf(op.results[0]);
  const auto axis = static_cast<size_t>(ir::ReduceOp(op).axis());
  const Lowered& src = values_[reduce.x()];
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  if (in.layout.isReduced(axis)) {  // already extent 1: nothing to combine
    r.values = src.values;
    return true;
  }
  const EmittedLayout* inLayout = layoutFor(in.layout, op.range);
  const EmittedLayout* outLayout = layoutFor(out.layout, op.range);
  if (!inLayout || !outLayout) return false;
  const ir::Distribution& inDist = inLayout->map.dist;
  const ir::Distribution& outDist = outLayout->map.dist;
  if (src.values.size() != static_cast<size_t>(inDist.valuesPerThread))
    return internalError(op.range, "reduce operand has the wrong number of values");

  // 1. Within the thread: values that differ only in k[axis], in ascending k[axis].
  std::vector<llvm::Value*> partial(static_cast<size_t>(outDist.valuesPerThread), nullptr);
  for (int64_t v = 0; v < inDist.valuesPerThread; ++v) {
    std::vector<int64_t> c = inDist.coordinate(0, v);
    c[axis] = 0;
    int64_t target = outDist.valueIndexOf(0, c);
    if (target < 0) return internalError(op.range, "reduce result does not hold an element of its operand");
    llvm::Value*& acc = partial[static_cast<size_t>(target)];
    acc = acc ? combine(ir::reduceKindOf(op), in.dtype, acc, src.values[v]) : src.values[v];
  }
  // 2. Across the lanes that hold other coordinates of the axis.
  uint32_t laneBits = inLayout->map.laneBitsOf(static_cast<int>(axis));
  for (int bit = 0; bit < 5; ++bit) {
    if (!((laneBits >> bit) & 1u)) continue;
    for (llvm::Value*& x : partial) x = combine(ir::reduceKindOf(op), in.dtype, x, shuffleXor(x, in.dtype, 1 << bit));
  }
  // 3. Across the warps that hold other coordinates of the axis.
  uint32_t warpBits = inLayout->map.warpBitsOf(static_cast<int>(axis));
  if (warpBits != 0) {
    if (!scratch_) return internalError(op.range, "reduction scratch was not planned");
    int64_t numElements = 1;
    for (int64_t e : out.shape) numElements *= e;
    int numWarpSlots = 1 << std::popcount(warpBits);
    llvm::Value* warpSlot = gatherTidBits(warpBits);
    llvm::Value* writer = tidBitsAreZero(inLayout->map.ownerMask | laneBits);
    std::vector<llvm::Value*> elementIndex;
    for (int64_t v = 0; v < outDist.valuesPerThread; ++v)
      elementIndex.push_back(linearTileIndex(tileCoord(*outLayout, v), out.shape));
    barrier();
    llvm::Value* slotBase = b_.CreateMul(warpSlot, b_.getInt32(static_cast<uint32_t>(numElements)));
    for (size_t v = 0; v < partial.size(); ++v)
      predicatedStore(ir::MemSpace::Shared, scratchAddress(in.dtype, b_.CreateAdd(slotBase, elementIndex[v])), in.dtype,
                      partial[v], writer);
    barrier();
    for (size_t v = 0; v < partial.size(); ++v) {
      llvm::Value* acc = nullptr;
      for (int w = 0; w < numWarpSlots; ++w) {
        llvm::Value* slot = b_.CreateAdd(elementIndex[v], b_.getInt32(static_cast<uint32_t>(w * numElements)));
        auto* load = b_.CreateLoad(memType(in.dtype), scratchAddress(in.dtype, slot));
        llvm::Value* x = fromMemory(load, in.dtype);
        acc = acc ? combine(ir::reduceKindOf(op), in.dtype, acc, x) : x;
      }
      partial[v] = acc;
    }
  }
  r.values = std::move(partial);
  return true;
}

bool KernelLowering::lowerReduceAll(const ir::Op& op) {
  const ir::ReduceAllOp reduce(op);
  const ir::Type& in = fn_.typeOf(reduce.x());
  const EmittedLayout* layout = layoutFor(in.layout, op.range);
  if (!layout) return false;
  const Lowered& src = values_[reduce.x()];
  if (src.values.size() != static_cast<size_t>(layout->map.numValues()) || src.values.empty())
    return internalError(op.range, "reduce operand has the wrong number of values");
  llvm::Value* acc = nullptr;
  for (llvm::Value* x : src.values) acc = acc ? combine(ir::reduceKindOf(op), in.dtype, acc, x) : x;
  // Lanes and warps that move some coordinate; replicas hold the same elements and are skipped.
  for (int bit = 0; bit < 5 && bit < layout->map.numThreadBits; ++bit)
    if (layout->map.bits[bit].dim >= 0) acc = combine(ir::reduceKindOf(op), in.dtype, acc, shuffleXor(acc, in.dtype, 1 << bit));
  uint32_t replicaWarps = layout->map.replicaWarpBits();
  uint32_t allWarpBits = static_cast<uint32_t>(fn_.numThreads() - 1) & ~31u;
  if ((allWarpBits & ~replicaWarps) != 0) {
    if (!scratch_) return internalError(op.range, "reduction scratch was not planned");
    llvm::Value* warp = gatherTidBits(allWarpBits);
    barrier();
    predicatedStore(ir::MemSpace::Shared, scratchAddress(in.dtype, warp), in.dtype, acc, tidBitsAreZero(31));
    barrier();
    acc = nullptr;
    for (int64_t w = 0; w < fn_.numWarps; ++w) {
      if (((static_cast<uint32_t>(w) << 5) & replicaWarps) != 0) continue;
      auto* load = b_.CreateLoad(memType(in.dtype), scratchAddress(in.dtype, b_.getInt32(static_cast<uint32_t>(w))));
      llvm::Value* x = fromMemory(load, in.dtype);
      acc = acc ? combine(ir::reduceKindOf(op), in.dtype, acc, x) : x;
    }
  }
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Scalar;
  r.values = {acc};
  return true;
}

// True when both layouts hold every element under the same thread bits and
// value index (and the same owners), so converting is a no-op.
bool sameDistribution(const ThreadLayout& a, const ThreadLayout& b) {
  if (a.shape != b.shape || a.numValues() != b.numValues() || a.ownerMask != b.ownerMask) return false;
  for (size_t i = 0; i < a.bits.size() && i < b.bits.size(); ++i)
    if (a.bits[i].dim != b.bits[i].dim || a.bits[i].step != b.bits[i].step) return false;
  return a.bits.size() == b.bits.size() && a.valueCoord == b.valueCoord;
}

bool KernelLowering::lowerConvertLayout(const ir::Op& op) {
  // A convert_layout or a reshape (lowered alike): the tile it moves.
  const ir::ValueId x = op.kind == ir::OpKind::Reshape ? ir::ReshapeOp(op).x() : ir::ConvertLayoutOp(op).x();
  const ir::Type& in = fn_.typeOf(x);
  const ir::Type& out = fn_.typeOf(op.results[0]);
  const Lowered& src = values_[x];
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  if (in.layout == out.layout && in.shape == out.shape) {
    r.values = src.values;
    return true;
  }
  const EmittedLayout* from = layoutFor(in.layout, op.range);
  const EmittedLayout* to = layoutFor(out.layout, op.range);
  if (!from || !to) return false;
  if (sameDistribution(from->map, to->map)) {  // e.g. row statistics of two mma tiles of one warp grid
    r.values = src.values;
    return true;
  }
  if (!scratch_) return internalError(op.range, "layout scratch was not planned");
  if (src.values.size() != static_cast<size_t>(from->map.numValues()))
    return internalError(op.range, "convert_layout operand has the wrong number of values");
  barrier();
  for (int64_t v = 0; v < from->map.numValues(); ++v) {
    llvm::Value* index = linearTileIndex(tileCoord(*from, v), in.shape);
    predicatedStore(ir::MemSpace::Shared, scratchAddress(in.dtype, index), in.dtype, src.values[v], from->isOwner);
  }
  barrier();
  for (int64_t v = 0; v < to->map.numValues(); ++v) {
    llvm::Value* index = linearTileIndex(tileCoord(*to, v), out.shape);
    auto* load = b_.CreateLoad(memType(out.dtype), scratchAddress(out.dtype, index));
    r.values.push_back(fromMemory(load, out.dtype));
  }
  return true;
}

}  // namespace argus::codegen
