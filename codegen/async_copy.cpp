// Asynchronous copies: CopyAsync, CommitGroup, WaitGroup (ir/ir.h).
//
// Each thread copies its chunks (ir/async.h: vec consecutive elements of the
// last axis, 16 bytes or a whole shorter row) with one cp.async each. Chunks
// past the tensor's edge read fewer bytes (src-size) and are zero-filled.
//
// cp.async needs the global source and the shared destination of every chunk
// aligned to the chunk size. Whether the global side is depends on run-time
// values (the tensor's base pointer, its row length, the view's origin), so the
// copy takes a uniform branch: the cp.async path when everything is aligned,
// else a synchronous per-element copy (predicated ld.global + st.shared) that
// is correct for any alignment. Synchronous writes are complete at once, which
// is what wait_group promises anyway.
#include "codegen/async_copy.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/InlineAsm.h>

#include "codegen/lowering.h"
#include "ir/async.h"

namespace argus::codegen {

using ir::DType;

std::string cpAsyncText(int64_t chunkBytes) {
  const char* cache = chunkBytes == 16 ? "cg" : "ca";  // .cg (bypass L1) takes only 16-byte chunks
  return std::string("@$3 cp.async.") + cache + ".shared.global [$0], [$1], " + std::to_string(chunkBytes) + ", $2;";
}

std::string cpAsyncWholeChunkText(int64_t chunkBytes) {
  const char* cache = chunkBytes == 16 ? "cg" : "ca";
  return std::string("cp.async.") + cache + ".shared.global [$0], [$1], " + std::to_string(chunkBytes) + ";";
}

namespace {
// The 32-bit shared-window address of a shared pointer.
llvm::Value* sharedWindowAddress(llvm::IRBuilderBase& b, llvm::Value* dst) {
  return b.CreateTrunc(b.CreatePtrToInt(dst, b.getInt64Ty()), b.getInt32Ty());
}
}  // namespace

void emitCpAsyncWholeChunk(llvm::IRBuilderBase& b, llvm::Value* dst, llvm::Value* src, int64_t chunkBytes) {
  auto* fnTy = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), src->getType()}, false);
  auto* asmValue = llvm::InlineAsm::get(fnTy, cpAsyncWholeChunkText(chunkBytes), "r,l,~{memory}", true);
  b.CreateCall(fnTy, asmValue, {sharedWindowAddress(b, dst), src});
}

void emitCpAsync(llvm::IRBuilderBase& b, llvm::Value* dst, llvm::Value* src, llvm::Value* srcBytes, llvm::Value* pred,
                 int64_t chunkBytes) {
  llvm::Value* dst32 = sharedWindowAddress(b, dst);
  auto* fnTy = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), src->getType(), b.getInt32Ty(), b.getInt1Ty()},
                                       false);
  auto* asmValue = llvm::InlineAsm::get(fnTy, cpAsyncText(chunkBytes), "r,l,r,b,~{memory}", /*hasSideEffects=*/true);
  b.CreateCall(fnTy, asmValue, {dst32, src, srcBytes, pred});
}

void emitCpAsyncCommitGroup(llvm::IRBuilderBase& b) {
  auto* fnTy = llvm::FunctionType::get(b.getVoidTy(), false);
  b.CreateCall(fnTy, llvm::InlineAsm::get(fnTy, "cp.async.commit_group;", "~{memory}", true));
}

void emitCpAsyncWaitGroup(llvm::IRBuilderBase& b, int64_t n) {
  auto* fnTy = llvm::FunctionType::get(b.getVoidTy(), false);
  std::string text = "cp.async.wait_group " + std::to_string(n < 0 ? 0 : n) + ";";
  b.CreateCall(fnTy, llvm::InlineAsm::get(fnTy, text, "~{memory}", true));
}

namespace {

// Base coordinate j of view coordinate `coord` (as memory.cpp computes it).
llvm::Value* baseCoordinateOf(llvm::IRBuilderBase& b, const Lowered& view, const std::vector<llvm::Value*>& coord,
                              size_t j) {
  size_t lead = view.offsets.size() - coord.size();
  if (j < lead) return view.offsets[j];
  return b.CreateAdd(view.offsets[j], coord[j - lead]);
}

llvm::Value* isMultipleOf(llvm::IRBuilderBase& b, llvm::Value* x, int64_t power) {
  llvm::Value* low = b.CreateAnd(x, llvm::ConstantInt::get(x->getType(), static_cast<uint64_t>(power - 1)));
  return b.CreateICmpEQ(low, llvm::ConstantInt::get(x->getType(), 0));
}

}  // namespace

bool swizzleKeepsChunksWhole(const ir::Swizzle& swizzle, int64_t vec) {
  if (swizzle.hasPanels() && swizzle.panelCols % vec != 0) return false;
  return swizzle.bits == 0 || (int64_t{1} << swizzle.base) % vec == 0;
}

llvm::Value* KernelLowering::asyncCopyAligned(const Lowered& dst, const Lowered& src, DType t, int64_t chunkBytes) {
  int64_t vec = chunkBytes / dtypeBytes(t);
  std::vector<llvm::Value*> origin(src.tileShape.size(), b_.getInt32(0));
  llvm::Value* base = b_.CreatePtrToInt(src.base, b_.getInt64Ty());
  llvm::Value* ok = isMultipleOf(b_, base, chunkBytes);
  ok = b_.CreateAnd(ok, isMultipleOf(b_, viewElementIndex(src, origin), vec));
  if (src.strides.size() >= 2) ok = b_.CreateAnd(ok, isMultipleOf(b_, src.strides[src.strides.size() - 2], vec));
  ok = b_.CreateAnd(ok, isMultipleOf(b_, viewElementIndex(dst, origin), vec));
  if (dst.strides.size() >= 2) ok = b_.CreateAnd(ok, isMultipleOf(b_, dst.strides[dst.strides.size() - 2], vec));
  return ok;
}

void KernelLowering::emitAsyncChunks(const Lowered& dst, const Lowered& src, DType t, const EmittedLayout& chunks,
                                     int64_t vec, bool tileInside) {
  const int64_t bytes = dtypeBytes(t);
  llvm::Value* pred = chunks.isOwner ? chunks.isOwner : b_.getTrue();
  for (int64_t v = 0; v < chunks.map.numValues(); ++v) {
    std::vector<llvm::Value*> coord = tileCoord(chunks, v);
    coord.back() = b_.CreateMul(coord.back(), b_.getInt32(static_cast<uint32_t>(vec)));
    llvm::Value* dstPtr = swizzledSharedAddress(dst, t, viewElementIndex(dst, coord));
    if (tileInside && !chunks.isOwner) {
      // Every chunk is whole and inside: no bounds, sizes or predicates to compute.
      emitCpAsyncWholeChunk(b_, dstPtr, globalAddress(src.base, t, viewElementIndex(src, coord)), vec * bytes);
      continue;
    }
    // Source bytes inside the tensor: 0 when a leading coordinate is outside,
    // else what is left of the row, at most the chunk.
    size_t last = src.offsets.size() - 1;
    llvm::Value* leadingInside = b_.getTrue();
    for (size_t j = 0; j < last; ++j)
      leadingInside = b_.CreateAnd(leadingInside, b_.CreateICmpULT(baseCoordinateOf(b_, src, coord, j), src.extents[j]));
    llvm::Value* column = baseCoordinateOf(b_, src, coord, last);
    llvm::Value* left = b_.CreateSub(src.extents[last], column);
    left = b_.CreateSelect(b_.CreateICmpSLT(left, b_.getInt32(0)), b_.getInt32(0), left);
    left = b_.CreateSelect(b_.CreateICmpSGT(left, b_.getInt32(static_cast<uint32_t>(vec))),
                           b_.getInt32(static_cast<uint32_t>(vec)), left);
    left = b_.CreateSelect(b_.CreateICmpSLT(column, b_.getInt32(0)), b_.getInt32(0), left);
    llvm::Value* srcBytes = b_.CreateSelect(leadingInside, b_.CreateMul(left, b_.getInt32(static_cast<uint32_t>(bytes))),
                                            b_.getInt32(0));
    // A chunk that reads nothing points at the tensor's base, never past its end.
    llvm::Value* srcPtr = globalAddress(src.base, t, viewElementIndex(src, coord));
    srcPtr = b_.CreateSelect(b_.CreateICmpEQ(srcBytes, b_.getInt32(0)), src.base, srcPtr);
    emitCpAsync(b_, dstPtr, srcPtr, srcBytes, pred, vec * bytes);
  }
}

void KernelLowering::emitSyncFallback(const Lowered& dst, const Lowered& src, DType t, const EmittedLayout& chunks,
                                      int64_t vec, bool rolled) {
  llvm::Value* zero = constant(t, 0, 0.0);
  auto copyElement = [&](const std::vector<llvm::Value*>& coord) {
    llvm::Value* value = predicatedGlobalLoad(globalAddress(src.base, t, viewElementIndex(src, coord)), t,
                                              viewInBounds(src, coord), zero);
    predicatedStore(ir::MemSpace::Shared, swizzledSharedAddress(dst, t, viewElementIndex(dst, coord)), t, value,
                    chunks.isOwner);
  };
  std::vector<std::vector<int64_t>> steps;
  const int64_t elements = chunks.map.numValues() * vec;
  if (!rolled || elements == 1 || (vec & (vec - 1)) != 0 || !valueBitSteps(chunks.map, steps)) {
    for (int64_t v = 0; v < chunks.map.numValues(); ++v) {
      std::vector<llvm::Value*> coord = tileCoord(chunks, v);
      llvm::Value* first = b_.CreateMul(coord.back(), b_.getInt32(static_cast<uint32_t>(vec)));
      for (int64_t e = 0; e < vec; ++e) {
        coord.back() = e == 0 ? first : b_.CreateAdd(first, b_.getInt32(static_cast<uint32_t>(e)));
        copyElement(coord);
      }
    }
    return;
  }
  // Every element of the thread's chunks in one loop that stays a loop: this path
  // runs only for unaligned tensors, and unrolled it was most of the kernel's IR
  // (attention.ag: 128 loads per thread for q alone), which O3 and the backend
  // paid for on every compile. Element i is element i % vec of value i / vec, whose
  // coordinate is the sum of its index bits' steps (valueBitSteps).
  llvm::BasicBlock* before = b_.GetInsertBlock();
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "copy_async.element", kernel_);
  llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx_, "copy_async.elements_done", kernel_);
  b_.CreateBr(body);
  b_.SetInsertPoint(body);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt32Ty(), 2);
  i->addIncoming(b_.getInt32(0), before);
  int vecBits = 0;
  while ((int64_t{1} << vecBits) < vec) ++vecBits;
  llvm::Value* v = b_.CreateLShr(i, b_.getInt32(static_cast<uint32_t>(vecBits)));
  std::vector<llvm::Value*> coord = chunks.threadCoord;
  for (size_t bit = 0; bit < steps.size(); ++bit) {
    llvm::Value* set = b_.CreateAnd(b_.CreateLShr(v, b_.getInt32(static_cast<uint32_t>(bit))), b_.getInt32(1));
    for (size_t d = 0; d < coord.size(); ++d)
      if (steps[bit][d] != 0)
        coord[d] = b_.CreateAdd(coord[d], b_.CreateMul(set, b_.getInt32(static_cast<uint32_t>(steps[bit][d]))));
  }
  coord.back() = b_.CreateAdd(b_.CreateMul(coord.back(), b_.getInt32(static_cast<uint32_t>(vec))),
                              b_.CreateAnd(i, b_.getInt32(static_cast<uint32_t>(vec - 1))));
  copyElement(coord);
  llvm::Value* next = b_.CreateAdd(i, b_.getInt32(1));
  i->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* back =
      b_.CreateCondBr(b_.CreateICmpULT(next, b_.getInt32(static_cast<uint32_t>(elements))), body, after);
  llvm::MDNode* noUnroll = llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.disable"));
  llvm::MDNode* loopId = llvm::MDNode::getDistinct(ctx_, {nullptr, noUnroll});
  loopId->replaceOperandWith(0, loopId);
  back->setMetadata(llvm::LLVMContext::MD_loop, loopId);
  b_.SetInsertPoint(after);
}

bool KernelLowering::lowerCopyAsync(const ir::Op& op) {
  const ir::CopyAsyncOp copy(op);
  const Lowered& dst = values_[copy.dst()];
  const Lowered& src = values_[copy.src()];
  if (dst.kind != Lowered::Kind::View || src.kind != Lowered::Kind::View || dst.space != ir::MemSpace::Shared ||
      src.space != ir::MemSpace::Global || dst.offsets.empty() || src.offsets.empty())
    return internalError(op.range, "copy_async needs a shared destination view and a global source view");
  const ir::Type& type = fn_.typeOf(copy.dst());
  if (!dtypeSupported(type.dtype)) return unsupported(op, std::string("copy_async of ") + ir::dtypeName(type.dtype));
  const int64_t vec = ir::asyncCopyVectorElements(type.dtype, type.shape);
  const int64_t chunkBytes = vec * dtypeBytes(type.dtype);
  const EmittedLayout* chunks = layoutFor(ir::asyncCopyChunkLayout(type.dtype, type.shape), op.range);
  if (!chunks) return false;
  bool chunksStayWhole = swizzleKeepsChunksWhole(dst.swizzle, vec);
  bool cpAsyncSize = chunkBytes == 4 || chunkBytes == 8 || chunkBytes == 16;
  if (!chunksStayWhole || !cpAsyncSize) {
    emitSyncFallback(dst, src, type.dtype, *chunks, vec, /*rolled=*/false);
    return true;
  }
  // Three uniform paths: a tile wholly inside its tensor copies whole chunks with no
  // per-chunk arithmetic (the common case, and the main loop's cost); a tile at an
  // edge zero-fills; an unaligned one copies element by element.
  llvm::Value* aligned = asyncCopyAligned(dst, src, type.dtype, chunkBytes);
  llvm::BasicBlock* inside = llvm::BasicBlock::Create(ctx_, "copy_async.inside", kernel_);
  llvm::BasicBlock* edge = llvm::BasicBlock::Create(ctx_, "copy_async.edge", kernel_);
  llvm::BasicBlock* slow = llvm::BasicBlock::Create(ctx_, "copy_async.unaligned", kernel_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "copy_async.done", kernel_);
  llvm::BasicBlock* checkInside = llvm::BasicBlock::Create(ctx_, "copy_async.aligned", kernel_);
  b_.CreateCondBr(aligned, checkInside, slow);
  b_.SetInsertPoint(checkInside);
  b_.CreateCondBr(tileInside(src), inside, edge);
  b_.SetInsertPoint(inside);
  emitAsyncChunks(dst, src, type.dtype, *chunks, vec, /*tileInside=*/true);
  b_.CreateBr(done);
  b_.SetInsertPoint(edge);
  emitAsyncChunks(dst, src, type.dtype, *chunks, vec, /*tileInside=*/false);
  b_.CreateBr(done);
  b_.SetInsertPoint(slow);
  emitSyncFallback(dst, src, type.dtype, *chunks, vec, /*rolled=*/true);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return true;
}

bool KernelLowering::lowerCommitGroup(const ir::Op&) {
  emitCpAsyncCommitGroup(b_);
  return true;
}

bool KernelLowering::lowerWaitGroup(const ir::Op& op) {
  const int64_t pending = ir::WaitGroupOp(op).pending();
  if (pending < 0) return internalError(op.range, "wait_group with a negative count");
  emitCpAsyncWaitGroup(b_, pending);
  return true;
}

}  // namespace argus::codegen
