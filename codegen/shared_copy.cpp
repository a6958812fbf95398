// copy(dst, src) from a global view into a shared one, in 16-byte vectors.
//
// Sema writes copy as store(dst, load(src)) with the tile in the canonical
// layout: one element per lane along the last axis, which lowered as it stands
// is a predicated 2- or 4-byte load and shared store per element. When that
// tile is used by nothing else, codegen lowers the pair as one copy instead:
// each thread moves its 16-byte chunks (ir/async.h's chunks, the ones
// copy_async uses) with one vector load and one vector shared store, on a
// uniform branch taken when the view lies inside its tensor and every chunk is
// aligned; otherwise the per-element copy runs (bounds, zero fill, any
// alignment). The copy is synchronous either way, as the program says: the
// values are in shared memory when the next statement runs.
#include <functional>

#include "codegen/async_copy.h"
#include "codegen/lowering.h"
#include "ir/async.h"

namespace argus::codegen {

int KernelLowering::useCountOf(ir::ValueId id) {
  if (useCounts_.empty()) {
    useCounts_.assign(fn_.values.size(), 0);
    std::function<void(const ir::Block&)> count = [&](const ir::Block& block) {
      for (const auto& inner : block.ops) {
        for (ir::ValueId v : inner->operands) ++useCounts_[v];
        for (const ir::Block& region : inner->regions) count(region);
      }
    };
    count(fn_.body);
  }
  return id < useCounts_.size() ? useCounts_[id] : 0;
}

bool KernelLowering::fusesIntoSharedCopy(const ir::Op& load, const ir::Op& store) {
  if (load.kind != ir::OpKind::Load || load.operands.size() != 1 || load.results.size() != 1) return false;
  if (store.kind != ir::OpKind::Store || store.operands.size() != 2) return false;
  const ir::StoreOp storeOp(store);
  if (storeOp.value() != load.results[0]) return false;
  const ir::Type& src = fn_.typeOf(ir::LoadOp(load).view());
  const ir::Type& dst = fn_.typeOf(storeOp.view());
  const ir::Type& tile = fn_.typeOf(load.results[0]);
  if (src.space != ir::MemSpace::Global || dst.space != ir::MemSpace::Shared || src.shape != dst.shape) return false;
  if (tile.layout.kind != ir::LayoutKind::Blocked || tile.layout.reducedMask != 0 || !dtypeSupported(tile.dtype))
    return false;
  if (dtypeBytes(tile.dtype) < 1 || ir::asyncCopyVectorElements(tile.dtype, src.shape) * dtypeBytes(tile.dtype) != 16)
    return false;
  return useCountOf(load.results[0]) == 1;
}

bool KernelLowering::lowerSharedCopy(const ir::Op& load, const ir::Op& store) {
  // `load` and `store` passed fusesIntoSharedCopy: a Load and the Store of its tile.
  const ir::ValueId from = ir::LoadOp(load).view(), to = ir::StoreOp(store).view();
  for (ir::ValueId id : {from, to})
    if (id >= values_.size() || values_[id].kind != Lowered::Kind::View)
      return internalError(store.range, "copy between values that are not views");
  retireWgmmaBefore(store);  // it writes shared memory
  const Lowered& src = values_[from];
  const Lowered& dst = values_[to];
  const ir::DType t = fn_.typeOf(load.results[0]).dtype;
  const std::vector<int64_t>& shape = fn_.typeOf(from).shape;
  const int64_t vec = ir::asyncCopyVectorElements(t, shape);
  const EmittedLayout* chunks = layoutFor(ir::asyncCopyChunkLayout(t, shape), store.range);
  if (!chunks) return false;
  if (!swizzleKeepsChunksWhole(dst.swizzle, vec)) {
    emitSyncFallback(dst, src, t, *chunks, vec, /*rolled=*/false);
    return true;
  }
  llvm::BasicBlock* vectors = llvm::BasicBlock::Create(ctx_, "copy.vectors", kernel_);
  llvm::BasicBlock* elements = llvm::BasicBlock::Create(ctx_, "copy.elements", kernel_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "copy.done", kernel_);
  b_.CreateCondBr(b_.CreateAnd(asyncCopyAligned(dst, src, t, 16), tileInside(src)), vectors, elements);
  b_.SetInsertPoint(vectors);
  llvm::Type* chunkType = llvm::FixedVectorType::get(b_.getInt32Ty(), 4);
  for (int64_t v = 0; v < chunks->map.numValues(); ++v) {
    std::vector<llvm::Value*> coord = tileCoord(*chunks, v);
    coord.back() = b_.CreateMul(coord.back(), b_.getInt32(static_cast<uint32_t>(vec)));
    auto* value = b_.CreateLoad(chunkType, globalAddress(src.base, t, viewElementIndex(src, coord)));
    value->setAlignment(llvm::Align(16));
    llvm::Value* target = swizzledSharedAddress(dst, t, viewElementIndex(dst, coord));
    if (chunks->isOwner) {
      // Replicas (more threads than chunks) load but leave the store to the chunk's owner.
      llvm::BasicBlock* owner = llvm::BasicBlock::Create(ctx_, "copy.owner", kernel_);
      llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx_, "copy.next", kernel_);
      b_.CreateCondBr(chunks->isOwner, owner, next);
      b_.SetInsertPoint(owner);
      b_.CreateStore(value, target)->setAlignment(llvm::Align(16));
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
    } else {
      b_.CreateStore(value, target)->setAlignment(llvm::Align(16));
    }
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(elements);
  emitSyncFallback(dst, src, t, *chunks, vec, /*rolled=*/false);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return true;
}

}  // namespace argus::codegen
