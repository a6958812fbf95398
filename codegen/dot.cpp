// Dot on shared-memory operands, one accumulator element per value:
//   acc[m, n] = fma(f32(a[m, k]), f32(b[k, n]), acc[m, n])  for k = 0, 1, ..., K-1
// as a real loop over k (LLVM unrolls it as it sees fit). Accumulation is in
// f32; an f16/bf16/f64 accumulator is converted on entry and rounded on exit.
#include <llvm/IR/Constants.h>

#include "codegen/lowering.h"
#include "ir/dot_layout.h"

namespace argus::codegen {

using ir::DType;

namespace {

// What the op that kept a dot's accumulator out of the tensor cores' layout is, in the
// user's words (ir::accumulatorLayoutObstacle).
std::string obstacleWhat(const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::Reduce: case ir::OpKind::ReduceAll: return "a reduction";
    case ir::OpKind::Reshape: return "a reshape";
    case ir::OpKind::Broadcast: return "a broadcast";
    case ir::OpKind::ConvertLayout: return "a change of layout";
    case ir::OpKind::Dot: return "another dot, as its a or b operand";
    default: return "an operation that keeps its own layout";
  }
}

}  // namespace

bool KernelLowering::lowerDot(const ir::Op& op) {
  const ir::DotOp dot(op);
  const Lowered& a = values_[dot.a()];
  const Lowered& b = values_[dot.b()];
  const ir::Type& aType = fn_.typeOf(dot.a());
  const ir::Type& accType = fn_.typeOf(dot.acc());
  const bool transB = ir::DotOp(op).transB();
  if (accType.layout.wgmma && !aType.isTile()) return lowerWgmmaDot(op);
  // A register `a` (attention's P @ V) runs on wgmma where b is an N-major tile wgmma reads;
  // otherwise, as a wgmma accumulator's values lie as in mma(warps=(4*W, 1)), mma.sync
  // computes the product in place.
  int swizzleBytes = 0;
  if (accType.layout.wgmma && arch_ == "sm_90a" && registerAWgmmaProblem(op, &swizzleBytes).empty())
    return lowerRegisterAWgmmaDot(op, swizzleBytes);
  if (aType.isTile()) {
    if (canUseTensorCores(op)) return lowerMmaDot(op);
    return unsupported(op, "dot with a register operand that tensor cores cannot take",
                       "the operand b must be a 16-bit shared view whose rows are 16-byte aligned");
  }
  if (a.kind != Lowered::Kind::View || b.kind != Lowered::Kind::View || a.space != ir::MemSpace::Shared ||
      b.space != ir::MemSpace::Shared)
    return unsupported(op, "dot on operands that are not shared-memory views",
                       "copy the operands into shared(...) buffers first");
  if (!dtypeSupported(aType.dtype)) return unsupported(op, std::string("dot on ") + ir::dtypeName(aType.dtype));
  if (canUseTensorCores(op)) return lowerMmaDot(op);
  // A 16-bit dot that tensor cores could have run says why it did not (AG5021): where a
  // tensor-core layout fits the dot, what its accumulator also flows into.
  if (aType.dtype == DType::BF16 || aType.dtype == DType::F16) {
    const ir::Op* obstacle = ir::accumulatorLayoutObstacle(fn_, op, arch_);
    const std::string why =
        obstacle ? "its accumulator also flows into " + obstacleWhat(*obstacle) +
                       ", which keeps the accumulator in the default layout; give the accumulator a tensor-core "
                       "layout yourself (zeros(..., layout=" +
                       (arch_ == "sm_90a" ? "wgmma(warpgroups=...)" : "mma(warps=(WM, WN))") +
                       ")), whose reductions and broadcasts stay in it"
                 : tensorCoreProblem(op);
    Diagnostic& d = diags_.report(DiagId::DotOnFmas, op.range, {ir::dtypeName(aType.dtype), why});
    if (obstacle) d.labels.push_back({obstacle->range, "the accumulator's values reach " + obstacleWhat(*obstacle) + " here"});
  }
  if (aType.shape.size() != 2 || accType.shape.size() != 2) return internalError(op.range, "dot operands are not rank 2");
  const EmittedLayout* layout = layoutFor(accType.layout, op.range);
  if (!layout) return false;
  std::vector<llvm::Value*> acc = elementsOf(dot.acc(), static_cast<size_t>(layout->map.numValues()));
  if (acc.empty()) return internalError(op.range, "dot accumulator has the wrong number of values");
  for (llvm::Value*& x : acc) x = emitCast(accType.dtype, DType::F32, x);
  std::vector<std::vector<llvm::Value*>> coords;
  for (int64_t v = 0; v < layout->map.numValues(); ++v) coords.push_back(tileCoord(*layout, v));

  const int64_t K = aType.shape[1];
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "dot.k", kernel_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "dot.done", kernel_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* k = b_.CreatePHI(b_.getInt32Ty(), 2, "k");
  k->addIncoming(b_.getInt32(0), preheader);
  std::vector<llvm::PHINode*> phis;
  for (llvm::Value* x : acc) {
    llvm::PHINode* phi = b_.CreatePHI(b_.getFloatTy(), 2, "acc");
    phi->addIncoming(x, preheader);
    phis.push_back(phi);
  }
  std::vector<llvm::Value*> next;
  for (size_t v = 0; v < phis.size(); ++v) {
    auto* aLoad = b_.CreateLoad(memType(aType.dtype), sharedAddress(a.base, aType.dtype, viewElementIndex(a, {coords[v][0], k})));
    auto* bLoad = b_.CreateLoad(memType(aType.dtype), sharedAddress(b.base, aType.dtype, viewElementIndex(b, transB ? std::vector<llvm::Value*>{coords[v][1], k} : std::vector<llvm::Value*>{k, coords[v][1]})));
    aLoad->setAlignment(llvm::Align(static_cast<uint64_t>(dtypeBytes(aType.dtype))));
    bLoad->setAlignment(llvm::Align(static_cast<uint64_t>(dtypeBytes(aType.dtype))));
    llvm::Value* x = emitCast(aType.dtype, DType::F32, fromMemory(aLoad, aType.dtype));
    llvm::Value* y = emitCast(aType.dtype, DType::F32, fromMemory(bLoad, aType.dtype));
    next.push_back(b_.CreateIntrinsic(llvm::Intrinsic::fma, {b_.getFloatTy()}, {x, y, phis[v]}));
  }
  llvm::Value* kNext = b_.CreateAdd(k, b_.getInt32(1), "", true, true);
  b_.CreateCondBr(b_.CreateICmpSLT(kNext, b_.getInt32(static_cast<uint32_t>(K))), loop, exit);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  k->addIncoming(kNext, latch);
  for (size_t v = 0; v < phis.size(); ++v) phis[v]->addIncoming(next[v], latch);
  b_.SetInsertPoint(exit);
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  for (llvm::Value* x : next) r.values.push_back(emitCast(DType::F32, accType.dtype, x));
  return true;
}

}  // namespace argus::codegen
