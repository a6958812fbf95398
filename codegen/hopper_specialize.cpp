// Warp specialization of a copy_bulk pipeline (ir/pipeline.h, specialize=True).
//
// The launch has Function::producerWarps more warps than the IR's block. Up to
// the specialized loop every thread runs the kernel (ir/pipeline.cpp allows only
// harmless statements there). At the loop the block splits:
//   * the producer warpgroup's first warp runs only the loop's kIfProducer ifs
//     (waits for a free stage, expect_tx, the TMA copies; thread numThreads
//     issues them), for every iteration, and exits; its other warps exit at once;
//   * the block's own warps run the loop without those ifs, and, after it, the
//     rest of the kernel, synchronizing with a named barrier of their own
//     (barrier 1, numThreads threads), since the producer has exited.
// This is the IR's loop executed with the copies moved to another thread: every
// ordering between copies and reads goes through the mbarriers, and the IR's
// copies are one-thread ops whose issuing thread the IR leaves to codegen.
#include <algorithm>

#include "codegen/lowering.h"

namespace argus::codegen {

bool KernelLowering::isSpecializedLoop(const ir::Op& op) const {
  if (fn_.producerWarps <= 0 || op.kind != ir::OpKind::For || op.regions.empty()) return false;
  for (const auto& inner : op.regions[0].ops)
    if (inner->kind == ir::OpKind::If && (inner->attrs.i & ir::kIfProducer)) return true;
  return false;
}

bool KernelLowering::lowerSpecializedFor(const ir::Op& op) {
  const ir::Block& body = op.regions[0];
  const uint32_t blockThreads = static_cast<uint32_t>(fn_.numThreads());
  llvm::Value* tid = threadId();
  llvm::BasicBlock* producer = llvm::BasicBlock::Create(ctx_, "producer", kernel_);
  llvm::BasicBlock* issuer = llvm::BasicBlock::Create(ctx_, "producer.issue", kernel_);
  llvm::BasicBlock* idle = llvm::BasicBlock::Create(ctx_, "producer.idle", kernel_);
  llvm::BasicBlock* consumer = llvm::BasicBlock::Create(ctx_, "consumer", kernel_);
  b_.CreateCondBr(b_.CreateICmpUGE(tid, b_.getInt32(blockThreads)), producer, consumer);

  b_.SetInsertPoint(producer);
  b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateLShr(tid, b_.getInt32(5)), b_.getInt32(static_cast<uint32_t>(fn_.numWarps))),
                  issuer, idle);
  b_.SetInsertPoint(idle);
  b_.CreateRetVoid();

  // The producer's loop: the iteration's scalars and its producer ifs, nothing else.
  b_.SetInsertPoint(issuer);
  llvm::Value* lb = values_[op.operands[0]].values[0];
  llvm::Value* ub = values_[op.operands[1]].values[0];
  llvm::Value* step = values_[op.operands[2]].values[0];
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, "producer.header", kernel_);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "producer.body", kernel_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "producer.done", kernel_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(lb->getType(), 2, "producer.iv");
  iv->addIncoming(lb, preheader);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, ub), loop, done);
  b_.SetInsertPoint(loop);
  values_[body.args[0]].kind = Lowered::Kind::Scalar;
  values_[body.args[0]].values = {iv};
  electedThread_ = blockThreads;
  for (const auto& inner : body.ops) {
    const bool producerIf = inner->kind == ir::OpKind::If && (inner->attrs.i & ir::kIfProducer);
    const bool scalar = !inner->results.empty() && inner->regions.empty() &&
                        std::all_of(inner->results.begin(), inner->results.end(),
                                    [&](ir::ValueId r) { return fn_.typeOf(r).isScalar(); }) &&
                        std::all_of(inner->operands.begin(), inner->operands.end(), [&](ir::ValueId v) {
                          return values_[v].kind != Lowered::Kind::None;
                        });
    if ((producerIf || scalar) && !lowerOp(*inner)) return false;
  }
  electedThread_ = 0;
  llvm::Value* next = b_.CreateAdd(iv, step);
  b_.CreateBr(header);
  iv->addIncoming(next, b_.GetInsertBlock());
  b_.SetInsertPoint(done);
  b_.CreateRetVoid();

  // The block's loop, without the producer's ifs; the rest of the kernel is the block's alone.
  b_.SetInsertPoint(consumer);
  skipProducerIfs_ = true;
  bool ok = lowerFor(op);
  skipProducerIfs_ = false;
  consumersOnly_ = true;
  return ok;
}

}  // namespace argus::codegen
