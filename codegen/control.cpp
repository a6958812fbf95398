// Structured control flow. Conditions and bounds are block-uniform scalars, so
// every thread takes the same path and barriers inside regions stay aligned.
// Loop-carried values and If results become one phi per LLVM value (a tile
// contributes one per value index).
#include <llvm/IR/Constants.h>

#include "codegen/lowering.h"

namespace argus::codegen {

std::vector<llvm::Value*> KernelLowering::flatten(const std::vector<ir::ValueId>& ids, bool* ok) {
  std::vector<llvm::Value*> flat;
  for (ir::ValueId id : ids) {
    const Lowered& lv = values_[id];
    size_t count = valueCount(fn_.typeOf(id));
    if ((lv.kind != Lowered::Kind::Scalar && lv.kind != Lowered::Kind::Tile) || lv.values.size() != count) {
      *ok = false;
      return {};
    }
    flat.insert(flat.end(), lv.values.begin(), lv.values.end());
  }
  return flat;
}

void KernelLowering::unflatten(const std::vector<ir::ValueId>& ids, const std::vector<llvm::Value*>& flat) {
  size_t at = 0;
  for (ir::ValueId id : ids) {
    const ir::Type& t = fn_.typeOf(id);
    size_t count = valueCount(t);
    Lowered& lv = values_[id];
    lv.kind = t.isTile() ? Lowered::Kind::Tile : Lowered::Kind::Scalar;
    lv.values.assign(flat.begin() + static_cast<std::ptrdiff_t>(at), flat.begin() + static_cast<std::ptrdiff_t>(at + count));
    at += count;
  }
}

namespace {

const ir::Op* yieldOf(const ir::Block& region) {
  if (region.ops.empty() || region.ops.back()->kind != ir::OpKind::Yield) return nullptr;
  return region.ops.back().get();
}

bool isCarriable(const ir::Type& t) { return t.kind == ir::TypeKind::Scalar || t.kind == ir::TypeKind::Tile; }

}  // namespace

bool KernelLowering::lowerFor(const ir::Op& op) {
  const ir::ForOp loop(op);
  if (op.regions.size() != 1 || op.operands.size() < 3) return internalError(op.range, "malformed for");
  const ir::Block& body = op.regions[0];
  const ir::Op* yield = yieldOf(body);
  if (!yield || body.args.size() != op.operands.size() - 2) return internalError(op.range, "malformed for region");
  std::vector<ir::ValueId> inits(op.operands.begin() + 3, op.operands.end());
  for (ir::ValueId id : inits)
    if (!isCarriable(fn_.typeOf(id))) return unsupported(op, "loop-carried views, tensors or shared buffers");
  bool ok = true;
  std::vector<llvm::Value*> flatInit = flatten(inits, &ok);
  if (!ok) return internalError(op.range, "loop initial values were not lowered");
  ir::DType ivType = fn_.typeOf(loop.lowerBound()).dtype;
  llvm::Value* lb = values_[loop.lowerBound()].values[0];
  llvm::Value* ub = values_[loop.upperBound()].values[0];
  llvm::Value* step = values_[loop.step()].values[0];

  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, "for.header", kernel_);
  llvm::BasicBlock* bodyBlock = llvm::BasicBlock::Create(ctx_, "for.body", kernel_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "for.exit", kernel_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(lb->getType(), 2, "iv");
  iv->addIncoming(lb, preheader);
  std::vector<llvm::PHINode*> phis;
  std::vector<llvm::Value*> phiValues;
  for (llvm::Value* x : flatInit) {
    llvm::PHINode* phi = b_.CreatePHI(x->getType(), 2);
    phi->addIncoming(x, preheader);
    phis.push_back(phi);
    phiValues.push_back(phi);
  }
  llvm::Value* more = ir::isSigned(ivType) ? b_.CreateICmpSLT(iv, ub) : b_.CreateICmpULT(iv, ub);
  b_.CreateCondBr(more, bodyBlock, exit);

  b_.SetInsertPoint(bodyBlock);
  Lowered ivValue;
  ivValue.kind = Lowered::Kind::Scalar;
  ivValue.values = {iv};
  values_[body.args[0]] = ivValue;
  unflatten(std::vector<ir::ValueId>(body.args.begin() + 1, body.args.end()), phiValues);
  if (!lowerBlock(body)) return false;
  std::vector<llvm::Value*> flatNext = flatten(yield->operands, &ok);
  if (!ok || flatNext.size() != phis.size()) return internalError(op.range, "loop body yields the wrong values");
  llvm::Value* ivNext = b_.CreateAdd(iv, step);
  b_.CreateBr(header);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  iv->addIncoming(ivNext, latch);
  for (size_t i = 0; i < phis.size(); ++i) phis[i]->addIncoming(flatNext[i], latch);

  b_.SetInsertPoint(exit);
  unflatten(op.results, phiValues);
  retireInFlightWgmma(op);
  return true;
}

bool KernelLowering::lowerIf(const ir::Op& op) {
  if (op.regions.size() != 2 || op.operands.size() != 1) return internalError(op.range, "malformed if");
  if (skipProducerIfs_ && ir::IfOp(op).producer()) return true;  // the producer warp's (hopper_specialize.cpp)
  for (ir::ValueId id : op.results)
    if (!isCarriable(fn_.typeOf(id))) return unsupported(op, "if results that are views, tensors or shared buffers");
  llvm::Value* cond = values_[ir::IfOp(op).condition()].values[0];
  llvm::BasicBlock* thenBlock = llvm::BasicBlock::Create(ctx_, "if.then", kernel_);
  llvm::BasicBlock* elseBlock = llvm::BasicBlock::Create(ctx_, "if.else", kernel_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, "if.end", kernel_);
  b_.CreateCondBr(cond, thenBlock, elseBlock);

  std::vector<std::vector<llvm::Value*>> yielded;
  std::vector<llvm::BasicBlock*> ends;
  llvm::BasicBlock* starts[2] = {thenBlock, elseBlock};
  for (size_t r = 0; r < 2; ++r) {
    b_.SetInsertPoint(starts[r]);
    const ir::Op* yield = yieldOf(op.regions[r]);
    if (!yield) return internalError(op.range, "if region does not end in yield");
    if (!lowerBlock(op.regions[r])) return false;
    bool ok = true;
    yielded.push_back(flatten(yield->operands, &ok));
    if (!ok) return internalError(op.range, "if region yields values that were not lowered");
    b_.CreateBr(merge);
    ends.push_back(b_.GetInsertBlock());
  }
  if (yielded[0].size() != yielded[1].size()) return internalError(op.range, "if regions yield different values");
  b_.SetInsertPoint(merge);
  std::vector<llvm::Value*> results;
  for (size_t i = 0; i < yielded[0].size(); ++i) {
    llvm::PHINode* phi = b_.CreatePHI(yielded[0][i]->getType(), 2);
    phi->addIncoming(yielded[0][i], ends[0]);
    phi->addIncoming(yielded[1][i], ends[1]);
    results.push_back(phi);
  }
  unflatten(op.results, results);
  return true;
}

}  // namespace argus::codegen
