// Warp specialization of a copy_bulk pipeline (ir/pipeline.h, specialize=True).
//
// The launch has Function::producerWarps more warps than the IR's block. The
// kernel splits at its start:
//   * the producer warpgroup runs, of the statements before the top-level loop
//     that holds the pipeline (the pipelined loop itself, or a persistent kernel's
//     loop over tiles around it), only the scalars and views (and one-element reads
//     of tensors, for tile indices) the copies need, the prologue's copies, and the
//     barrier after the mbarriers' init (bar.sync 0, with the block: it must see
//     them initialized; ir/pipeline.cpp allows no statement there whose scalar it
//     could not compute). At the loop its first warp runs the producer program:
//     the loops, their scalars, and the kIfProducer ifs (waits for a free stage,
//     expect_tx, the TMA copies; thread numThreads issues them); its other warps exit;
//   * the block's own warps run everything but those ifs, synchronizing with a
//     named barrier of their own (barrier 1, numThreads threads) but at the init.
// With two or more warpgroups in the block, setmaxnreg moves registers from the
// producer to them (consumerRegisters below).
// This is the IR executed with the copies moved to another thread: every ordering
// between copies and reads goes through the mbarriers, and the IR's copies are
// one-thread ops whose issuing thread the IR leaves to codegen.
#include <algorithm>
#include <functional>

#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen/lowering.h"
#include "ir/pipeline.h"

namespace argus::codegen {

namespace {

bool isProducerIf(const ir::Op& op) {
  auto branch = ir::as<ir::IfOp>(op);
  return branch && branch->producer();
}

bool holdsProducerIf(const ir::Block& block) {
  for (const auto& op : block.ops) {
    if (isProducerIf(*op)) return true;
    for (const ir::Block& region : op->regions)
      if (holdsProducerIf(region)) return true;
  }
  return false;
}

// setmaxnreg: the producer warpgroup, which only issues copies, gives registers back and
// the block's warpgroups take them (attention's causal variant needs them). With it in
// the kernel, ptxas gives every thread the launch's share, 65536 / threads rounded down to
// 8 (168 at 384 threads); the block's warpgroups then take exactly what the producer frees,
// as setmaxnreg.inc waits until the block's pool has it. 0: no reallocation (one warpgroup
// of the block: its share is already the most a thread may have).
constexpr int64_t kProducerRegisters = 40;
int64_t consumerRegisters(int64_t warpgroups) {
  if (warpgroups < 2) return 0;
  const int64_t threads = 128 * (warpgroups + 1);
  const int64_t share = std::min<int64_t>(65536 / threads / 8 * 8, 248);
  const int64_t perThread = (share * threads - 128 * kProducerRegisters) / (128 * warpgroups) / 8 * 8;
  return std::min<int64_t>(perThread, 240);
}

}  // namespace

bool KernelLowering::isSpecializedLoop(const ir::Op& op) const {
  return fn_.producerWarps > 0 && op.kind == ir::OpKind::For && !op.regions.empty() && holdsProducerIf(op.regions[0]);
}

// Ops the producer program computes besides its ifs and loops: scalars, shared buffers,
// views and one-element reads of global tensors, all from values it has.
bool KernelLowering::producerComputes(const ir::Op& op) const {
  for (ir::ValueId v : op.operands)
    if (values_[v].kind == Lowered::Kind::None) return false;
  auto scalarResults = [&] {
    return !op.results.empty() && std::all_of(op.results.begin(), op.results.end(),
                                              [&](ir::ValueId r) { return fn_.typeOf(r).isScalar(); });
  };
  if (ir::isArithmetic(op.kind)) return scalarResults();
  switch (op.kind) {
    case ir::OpKind::View: case ir::OpKind::AllocShared:
      return true;
    case ir::OpKind::Load:
      return fn_.typeOf(ir::LoadOp(op).view()).space == ir::MemSpace::Global &&
             fn_.typeOf(op.results[0]).numElements() == 1;
    case ir::OpKind::ReduceAll:
      return fn_.typeOf(ir::ReduceAllOp(op).x()).numElements() == 1;
    default:
      return false;
  }
}

bool KernelLowering::lowerProducerBlock(const ir::Block& block) {
  for (const auto& op : block.ops) {
    if (isProducerIf(*op) || ir::isScalarIf(fn_, *op)) {  // a scalar if: a tile index, say
      if (!lowerIf(*op)) return false;
    } else if (op->kind == ir::OpKind::For) {
      if (!lowerProducerFor(*op)) return false;
    } else if (producerComputes(*op)) {
      if (!lowerOp(*op)) return false;
    }
  }
  return true;
}

// A loop of the producer program: the same trip count, carrying only the scalars it has.
bool KernelLowering::lowerProducerFor(const ir::Op& op) {
  const ir::Block& body = op.regions[0];
  const ir::Op* yield = body.ops.empty() ? nullptr : body.ops.back().get();
  if (!yield || yield->kind != ir::OpKind::Yield) return internalError(op.range, "malformed for region");
  const ir::ForOp loopOp(op);
  llvm::Value* lb = values_[loopOp.lowerBound()].values[0];
  llvm::Value* ub = values_[loopOp.upperBound()].values[0];
  llvm::Value* step = values_[loopOp.step()].values[0];
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, "producer.header", kernel_);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "producer.body", kernel_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "producer.exit", kernel_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(lb->getType(), 2, "producer.iv");
  iv->addIncoming(lb, preheader);
  std::vector<std::pair<size_t, llvm::PHINode*>> carried;  // iter arg index, its phi
  for (size_t i = 3; i < op.operands.size(); ++i) {
    const Lowered& init = values_[op.operands[i]];
    if (init.kind != Lowered::Kind::Scalar || !fn_.typeOf(op.operands[i]).isScalar()) continue;
    llvm::PHINode* phi = b_.CreatePHI(init.values[0]->getType(), 2);
    phi->addIncoming(init.values[0], preheader);
    carried.push_back({i - 3, phi});
  }
  b_.CreateCondBr(b_.CreateICmpSLT(iv, ub), loop, exit);
  b_.SetInsertPoint(loop);
  values_[body.args[0]] = Lowered{};
  values_[body.args[0]].kind = Lowered::Kind::Scalar;
  values_[body.args[0]].values = {iv};
  for (const auto& [index, phi] : carried) {
    Lowered& arg = values_[body.args[index + 1]];
    arg.kind = Lowered::Kind::Scalar;
    arg.values = {phi};
  }
  if (!lowerProducerBlock(body)) return false;
  llvm::Value* next = b_.CreateAdd(iv, step);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  for (const auto& [index, phi] : carried) {
    const Lowered& y = values_[yield->operands[index]];
    if (y.kind != Lowered::Kind::Scalar) return internalError(op.range, "a producer loop's carried scalar was not computed");
    phi->addIncoming(y.values[0], latch);
  }
  b_.CreateBr(header);
  iv->addIncoming(next, latch);
  b_.SetInsertPoint(exit);
  for (const auto& [index, phi] : carried) {
    Lowered& result = values_[op.results[index]];
    result.kind = Lowered::Kind::Scalar;
    result.values = {phi};
  }
  return true;
}

bool KernelLowering::lowerSpecializedKernel() {
  const uint32_t blockThreads = static_cast<uint32_t>(fn_.numThreads());
  llvm::Value* tid = threadId();
  llvm::BasicBlock* producer = llvm::BasicBlock::Create(ctx_, "producer", kernel_);
  llvm::BasicBlock* consumer = llvm::BasicBlock::Create(ctx_, "consumer", kernel_);
  b_.CreateCondBr(b_.CreateICmpUGE(tid, b_.getInt32(blockThreads)), producer, consumer);

  // The producer warpgroup: the scalars and views it needs, the prologue's copies, the
  // barrier after the mbarriers' init; at the specialized loop its first warp runs the
  // producer program and the other three exit.
  const int64_t blockRegisters = consumerRegisters(fn_.numWarps / 4);
  b_.SetInsertPoint(producer);
  if (blockRegisters > 0)
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_setmaxnreg_dec_sync_aligned_u32, {},
                       {b_.getInt32(static_cast<uint32_t>(kProducerRegisters))});
  electedThread_ = blockThreads;
  bool ok = true, looped = false;
  for (const auto& op : fn_.body.ops) {
    if (!ok || looped) break;
    if (isSpecializedLoop(*op)) {
      llvm::BasicBlock* issuer = llvm::BasicBlock::Create(ctx_, "producer.issue", kernel_);
      llvm::BasicBlock* idle = llvm::BasicBlock::Create(ctx_, "producer.idle", kernel_);
      b_.CreateCondBr(
          b_.CreateICmpEQ(b_.CreateLShr(tid, b_.getInt32(5)), b_.getInt32(static_cast<uint32_t>(fn_.numWarps))),
          issuer, idle);
      b_.SetInsertPoint(idle);
      b_.CreateRetVoid();
      b_.SetInsertPoint(issuer);
      ok = lowerProducerFor(*op);
      looped = true;
    } else if (isProducerIf(*op) || ir::isScalarIf(fn_, *op)) {
      ok = lowerIf(*op);
    } else if (auto sync = ir::as<ir::BarrierOp>(*op); sync && sync->afterMbarrierInit()) {
      barrier(true);
    } else if (producerComputes(*op)) {
      ok = lowerOp(*op);
    }
  }
  electedThread_ = 0;
  if (!ok) return false;
  if (!looped) return internalError(fn_.range, "a warp-specialized kernel without its specialized loop");
  b_.CreateRetVoid();

  // The block's own warps: the whole kernel but the producer's ifs, synchronizing by
  // themselves (but for the barrier after the mbarriers' init).
  b_.SetInsertPoint(consumer);
  if (blockRegisters > 0)
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_setmaxnreg_inc_sync_aligned_u32, {},
                       {b_.getInt32(static_cast<uint32_t>(blockRegisters))});
  skipProducerIfs_ = true;
  consumersOnly_ = true;
  return lowerBlock(fn_.body);
}

}  // namespace argus::codegen
