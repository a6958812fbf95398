// Hopper (sm_90a) lowering: mbarriers, TMA tile copies (CopyBulk) and wgmma.
//
// Every instruction is inline PTX (LLVM 19 has no intrinsics for wgmma, TMA or
// mbarrier.try_wait; TOOLCHAIN.md). The ops that one thread performs for the
// block (MbarrierInit, MbarrierExpectTx, CopyBulk) run on thread 0.
//
// wgmma operands are shared tiles whose rows are one swizzle span (32, 64 or 128
// bytes, buffer swizzle (b, 3, 3) for 16-bit types: the pattern TMA writes) or
// several, stored in column panels one span wide (ir::Swizzle): K-major A, and B
// K-major (dot's trans_b: B stored (N, K)) or MN-major (B stored (K, N), imm-trans-b
// = 1). A matrix descriptor names a warpgroup's 64 rows of A, or all N of B
// (ir/wgmma.h has the fields and the K steps). Buffers that wgmma or TMA use are
// 1024-byte aligned (kernel.cpp), so the pattern's phase is the address's.
#include <algorithm>
#include <functional>
#include <set>

#include <llvm/IR/InlineAsm.h>

#include "codegen/lowering.h"
#include "ir/ops.h"
#include "ir/bulk.h"
#include "ir/wgmma.h"

namespace argus::codegen {

using ir::DType;

namespace {

bool isSm90a(const std::string& arch) { return arch == "sm_90a"; }

// The mbarrier (bars, index) that an MbarrierInit, MbarrierExpectTx, MbarrierArrive or
// MbarrierWait op names.
std::pair<ir::ValueId, ir::ValueId> mbarrierOperands(const ir::Op& op) {
  if (auto init = ir::as<ir::MbarrierInitOp>(op)) return {init->bars(), init->index()};
  if (auto expectTx = ir::as<ir::MbarrierExpectTxOp>(op)) return {expectTx->bars(), expectTx->index()};
  if (auto arrive = ir::as<ir::MbarrierArriveOp>(op)) return {arrive->bars(), arrive->index()};
  const ir::MbarrierWaitOp wait(op);
  return {wait.bars(), wait.index()};
}

}  // namespace

llvm::Value* KernelLowering::inlinePtx(llvm::Type* result, const std::string& text, const std::string& constraints,
                                       const std::vector<llvm::Value*>& args, bool sideEffects) {
  std::vector<llvm::Type*> argTypes;
  for (llvm::Value* v : args) argTypes.push_back(v->getType());
  auto* fnTy = llvm::FunctionType::get(result, argTypes, false);
  return b_.CreateCall(fnTy, llvm::InlineAsm::get(fnTy, text, constraints, sideEffects), args);
}

llvm::Value* KernelLowering::sharedAddress32(llvm::Value* pointer) {
  return b_.CreateTrunc(b_.CreatePtrToInt(pointer, b_.getInt64Ty()), b_.getInt32Ty());
}

// The 32-bit shared address of mbarrier `index` of buffer `bars` (u64 each).
llvm::Value* KernelLowering::mbarrierAddress(ir::ValueId bars, ir::ValueId index) {
  llvm::Value* i = b_.CreateZExt(values_[index].values[0], b_.getInt64Ty());
  return sharedAddress32(b_.CreateGEP(b_.getInt64Ty(), values_[bars].base, i));
}

// Runs `body` on one thread: thread 0, or the producer's first thread in its loop.
void KernelLowering::onThreadZero(const std::function<void()>& body) {
  llvm::BasicBlock* then = llvm::BasicBlock::Create(ctx_, "elected", kernel_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "elected.done", kernel_);
  b_.CreateCondBr(b_.CreateICmpEQ(threadId(), b_.getInt32(electedThread_)), then, done);
  b_.SetInsertPoint(then);
  body();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

bool KernelLowering::requireSm90a(const ir::Op& op, const char* what) {
  if (isSm90a(arch_)) return true;
  diags_.report(DiagId::NeedsSm90a, op.range, {what, arch_});
  return false;
}

bool KernelLowering::lowerMbarrier(const ir::Op& op) {
  if (!requireSm90a(op, op.kind == ir::OpKind::MbarrierWait ? "mbarrier waits" : "mbarriers")) return false;
  const auto [bars, index] = mbarrierOperands(op);
  llvm::Value* bar = mbarrierAddress(bars, index);
  llvm::Type* voidTy = b_.getVoidTy();
  switch (op.kind) {
    case ir::OpKind::MbarrierInit: {
      // A barrier that every thread arrives on (MbarrierArrive) counts warps instead: each warp
      // arrives once, after all its lanes (see below).
      const ir::MbarrierInitOp init(op);
      int64_t count = init.arrivals();
      const bool perWarp = arrivesPerWarp(init.bars(), count);
      if (perWarp) count /= 32;
      if (clusterRelease(op)) {  // every block's warps arrive on it, one arrival per warp each
        if (!perWarp) return internalError(op.range, "a cluster-wide free-stage barrier not released by whole warps");
        count *= fn_.clusterSize;
      }
      onThreadZero([&] {
        inlinePtx(voidTy, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}",
                  {bar, b_.getInt32(static_cast<uint32_t>(count))}, true);
        // Makes the initialized barrier visible to the async proxy (TMA) too.
        inlinePtx(voidTy, "fence.mbarrier_init.release.cluster;", "~{memory}", {}, true);
      });
      return true;
    }
    case ir::OpKind::MbarrierExpectTx:
      onThreadZero([&] {
        inlinePtx(voidTy, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}",
                  {bar, b_.getInt32(static_cast<uint32_t>(ir::MbarrierExpectTxOp(op).bytes()))}, true);
      });
      return true;
    case ir::OpKind::MbarrierArrive:
      if (clusterRelease(op)) {
        // A stage that other blocks' multicast copies refill: lane r arrives on block r's barrier.
        // The arrival keeps mbarrier.arrive's default release at CTA scope: what it orders is
        // this block's reads of its own stage before the refill that block r issues once it has
        // seen every arrival (a .release.cluster arrival measured 25% slower on the H200).
        inlinePtx(voidTy,
                  "{\n.reg .pred lead;\n.reg .b32 lane, remote;\nbar.warp.sync -1;\nmov.u32 lane, %laneid;\n"
                  "setp.lt.u32 lead, lane, " + std::to_string(fn_.clusterSize) + ";\n"
                  "@lead mapa.shared::cluster.u32 remote, $0, lane;\n"
                  "@lead mbarrier.arrive.shared::cluster.b64 _, [remote];\n}",
                  "r,~{memory}", {bar}, true);
        return true;
      }
      // One arrival per warp, by lane 0 once every lane of the warp got here (bar.warp.sync
      // orders the lanes' earlier reads before it): 32 times fewer shared-memory atomics.
      inlinePtx(voidTy,
                "{\n.reg .pred lead;\n.reg .b32 lane;\nbar.warp.sync -1;\nmov.u32 lane, %laneid;\n"
                "setp.eq.u32 lead, lane, 0;\n@lead mbarrier.arrive.shared::cta.b64 _, [$0];\n}",
                "r,~{memory}", {bar}, true);
      return true;
    case ir::OpKind::MbarrierWait:
      inlinePtx(voidTy,
                "{\n.reg .pred p;\nwait_${:uid}:\n"
                "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n"
                "@!p bra wait_${:uid};\n}",
                "r,r,~{memory}", {bar, values_[ir::MbarrierWaitOp(op).parity()].values[0]}, true);
      return true;
    default: return internalError(op.range, "not an mbarrier op");
  }
}

// A free-stage barrier of a pipeline whose stages other blocks of the cluster refill.
bool KernelLowering::clusterRelease(const ir::Op& op) const {
  if (fn_.clusterSize <= 1) return false;
  return op.kind == ir::OpKind::MbarrierInit ? ir::MbarrierInitOp(op).clusterRelease()
                                              : ir::MbarrierArriveOp(op).clusterRelease();
}

// True when every MbarrierArrive on `bars` is the whole block's and `count`, its
// init count, is the block's threads: codegen then counts one arrival per warp.
bool KernelLowering::arrivesPerWarp(ir::ValueId bars, int64_t count) const {
  if (count != fn_.numThreads()) return false;
  bool arrived = false, other = false;
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& block) {
    for (const auto& op : block.ops) {
      if (!op->operands.empty()) {
        if (auto arrive = ir::as<ir::MbarrierArriveOp>(*op); arrive && arrive->bars() == bars) arrived = true;
        else if (auto expectTx = ir::as<ir::MbarrierExpectTxOp>(*op); expectTx && expectTx->bars() == bars)
          other = true;
      }
      if (op->kind == ir::OpKind::CopyBulk && op->operands.size() == 4 && ir::CopyBulkOp(*op).bars() == bars)
        other = true;
      for (const ir::Block& region : op->regions) walk(region);
    }
  };
  walk(fn_.body);
  return arrived && !other;
}

// True when some wgmma dot reads a shared buffer that ordinary stores or cp.async
// also write. wgmma reads shared memory through the async proxy, which does not see
// the generic proxy's writes without a fence.proxy.async by the writing thread; every
// write of the block reaches the dot through a barrier (the checker sees to that), so
// the fence goes before each barrier of such a kernel.
bool KernelLowering::needsAsyncProxyFence() const {
  if (asyncProxyFence_) return *asyncProxyFence_;
  std::set<ir::ValueId> wgmmaBuffers, genericWrites;
  auto bufferOf = [&](ir::ValueId view) {
    const ir::Op* def = fn_.values[view].def;
    return def && def->kind == ir::OpKind::View && !def->operands.empty() ? ir::ViewOp(*def).base() : ir::kNoValue;
  };
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& block) {
    for (const auto& op : block.ops) {
      if (op->kind == ir::OpKind::Dot && op->operands.size() == 3) {
        const ir::DotOp dot(*op);
        if (fn_.typeOf(dot.acc()).layout.wgmma) {
          wgmmaBuffers.insert(bufferOf(dot.a()));
          wgmmaBuffers.insert(bufferOf(dot.b()));
        }
      }
      if ((op->kind == ir::OpKind::Store || op->kind == ir::OpKind::CopyAsync) && !op->operands.empty())
        genericWrites.insert(
            bufferOf(op->kind == ir::OpKind::Store ? ir::StoreOp(*op).view() : ir::CopyAsyncOp(*op).dst()));
      for (const ir::Block& region : op->regions) walk(region);
    }
  };
  walk(fn_.body);
  bool needed = false;
  for (ir::ValueId b : wgmmaBuffers) needed = needed || (b != ir::kNoValue && genericWrites.count(b));
  asyncProxyFence_ = needed;
  return needed;
}

bool KernelLowering::lowerCopyBulk(const ir::Op& op) {
  const ir::CopyBulkOp copy(op);
  if (!requireSm90a(op, "copy_bulk (TMA copies)")) return false;
  if (op.operands.size() != 4) return internalError(op.range, "copy_bulk without its mbarrier (the pipeline pass did not run)");
  int map = ir::tensorMapIndex(fn_, tensorMaps_, op);
  if (map < 0 || static_cast<size_t>(map) >= tensorMapArgs_.size())
    return internalError(op.range, "copy_bulk reads a tensor map that was not declared");
  const Lowered& dst = values_[copy.dst()];
  const Lowered& src = values_[copy.src()];
  const ir::Type& dstType = fn_.typeOf(copy.dst());
  const int64_t rank = static_cast<int64_t>(src.offsets.size());
  if (rank < 1 || rank > 5) return unsupported(op, "copy_bulk of a tensor of rank " + std::to_string(rank));
  // The stage's origin: a whole number of swizzle periods into the buffer (sema and the
  // pipeline make destinations whole buffers or stages of them), so unswizzled.
  llvm::Value* origin = viewElementIndex(dst, std::vector<llvm::Value*>(dstType.shape.size(), b_.getInt32(0)));
  llvm::Value* dstAddr = sharedAddress32(b_.CreateGEP(memType(dstType.dtype), dst.base, origin));
  llvm::Value* bar = mbarrierAddress(copy.bars(), copy.index());
  llvm::Value* tmap = b_.CreatePtrToInt(tensorMapArgs_[static_cast<size_t>(map)], b_.getInt64Ty());
  std::string coords;
  std::vector<llvm::Value*> args{dstAddr, tmap, bar};
  std::string constraints = "r,l,r";
  for (int64_t d = rank; d-- > 0;) {  // innermost first
    coords += (coords.empty() ? "$" : ", $") + std::to_string(args.size());
    args.push_back(src.offsets[static_cast<size_t>(d)]);
    constraints += ",r";
  }
  std::string text = "cp.async.bulk.tensor." + std::to_string(rank) +
                     "d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {" + coords + "}], [$2];";
  if (multicast(op)) {
    // This block's slice of the tile (rows rank * R .. of its leading axis), into every block.
    const int64_t c = fn_.clusterSize, sliceRows = dstType.shape[0] / c;
    const int64_t sliceBytes = dstType.numElements() / c * std::max(1, ir::dtypeBits(dstType.dtype) / 8);
    llvm::Value* clusterRank = inlinePtx(b_.getInt32Ty(), "mov.u32 $0, %cluster_ctarank;", "=r", {}, false);
    args[0] = b_.CreateAdd(dstAddr, b_.CreateMul(clusterRank, b_.getInt32(static_cast<uint32_t>(sliceBytes))));
    const size_t leading = static_cast<size_t>(rank) - dstType.shape.size();  // the view's first axis
    const size_t arg = 3 + (static_cast<size_t>(rank) - 1 - leading);        // innermost first in args
    args[arg] = b_.CreateAdd(args[arg], b_.CreateMul(clusterRank, b_.getInt32(static_cast<uint32_t>(sliceRows))));
    args.push_back(b_.getInt16(static_cast<uint16_t>((1u << c) - 1)));
    constraints += ",h";
    text = "cp.async.bulk.tensor." + std::to_string(rank) +
           "d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [$0], [$1, {" + coords + "}], [$2], $" +
           std::to_string(args.size() - 1) + ";";
  }
  // A destination in column panels (ir::Swizzle): one box per panel, each a span of
  // columns further in the tensor and one panel further in the buffer.
  const ir::Swizzle& panels = dstType.swizzle;
  const int64_t panelCount = panels.hasPanels() ? panels.cols / panels.panelCols : 1;
  if (panelCount > 1 && multicast(op)) return unsupported(op, "a multicast copy_bulk into a buffer in panels");
  onThreadZero([&] {
    for (int64_t p = 0; p < panelCount; ++p) {
      std::vector<llvm::Value*> panelArgs = args;
      if (p > 0) {
        const int64_t panelBytes = panels.rows * panels.panelCols * std::max(1, ir::dtypeBits(dstType.dtype) / 8);
        panelArgs[0] = b_.CreateAdd(args[0], b_.getInt32(static_cast<uint32_t>(p * panelBytes)));
        panelArgs[3] = b_.CreateAdd(args[3], b_.getInt32(static_cast<uint32_t>(p * panels.panelCols)));
      }
      inlinePtx(b_.getVoidTy(), text, constraints + ",~{memory}", panelArgs, true);
    }
  });
  return true;
}

bool KernelLowering::multicast(const ir::Op& copy) const {
  return fn_.clusterSize > 1 && ir::CopyBulkOp(copy).multicast();
}

// A wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format") for an operand
// starting at `address` (32-bit shared): start address, leading byte offset (unused by
// swizzled K-major layouts: 1; between column panels for MN-major ones), stride byte
// offset (8 rows of one span), and the swizzle mode (1: 128 B, 2: 64 B, 3: 32 B).
llvm::Value* KernelLowering::wgmmaDescriptor(llvm::Value* address, const ir::WgmmaDescriptor& descriptor) {
  const uint64_t fixed = ir::wgmmaDescriptorFixedBits(descriptor);
  llvm::Value* start = b_.CreateZExt(
      b_.CreateLShr(b_.CreateAnd(address, b_.getInt32(ir::kWgmmaStartAddressMask)), b_.getInt32(4)), b_.getInt64Ty());
  return b_.CreateOr(start, b_.getInt64(fixed));
}

// The inline PTX of one wgmma.mma_async m64nNk16 into f32: the accumulator's `numValues`
// registers ($0.., in and out; their "=f," constraints go to *constraints), then the A
// and B operands as `operands` names them ($numValues.. in `operandCount` inline-asm
// operands), a scale-d operand right after them (0: D = A*B), and the immediates:
// scale-a, scale-b (1) and `transposes` (trans-a and trans-b, or trans-b alone for A in
// registers).
static std::string wgmmaAsm(int64_t n, ir::DType dtype, size_t numValues, const std::string& operands,
                            size_t operandCount, const std::string& transposes, std::string* constraints) {
  const char* ab = dtype == ir::DType::BF16 ? "bf16" : "f16";
  std::string regs;
  for (size_t i = 0; i < numValues; ++i) {
    regs += (i ? ", $" : "$") + std::to_string(i);
    *constraints += "=f,";
  }
  const std::string scale = "$" + std::to_string(numValues + operandCount);
  return "{\n.reg .pred p;\nsetp.ne.b32 p, " + scale + ", 0;\n" + "wgmma.mma_async.sync.aligned.m64n" +
         std::to_string(n) + "k16.f32." + ab + "." + ab + " {" + regs + "}, " + operands + ", p, 1, 1, " + transposes +
         ";\n}";
}

// Why this dot's operand `which` cannot feed wgmma ("" when it can, with *descriptor
// set): a 16-bit shared view that covers whole rows of a buffer whose row is one
// swizzle span (or several in panels); K-major, or for B without trans_b, MN-major.
std::string KernelLowering::wgmmaOperandProblem(const ir::Op& op, size_t which, ir::WgmmaDescriptor* descriptor) const {
  const ir::Op* view = fn_.values[op.operands[which]].def;
  const ir::Type* buffer = view && view->kind == ir::OpKind::View && !view->operands.empty()
                               ? &fn_.typeOf(ir::ViewOp(*view).base())
                               : nullptr;
  const ir::Type& operand = fn_.typeOf(op.operands[which]);
  const ir::DotOp dot(op);
  if (which == 1 && !dot.transB()) {
    const ir::Type& acc = fn_.typeOf(dot.acc());
    return ir::wgmmaMnMajorOperandProblem(operand, buffer, acc.shape.size() == 2 ? acc.shape[1] : -1, descriptor);
  }
  return ir::wgmmaOperandProblem(operand, buffer, which == 0 ? "a" : "b", descriptor);
}

bool KernelLowering::lowerWgmmaDot(const ir::Op& op) {
  const ir::DotOp dot(op);
  if (!requireSm90a(op, "wgmma")) return false;
  const ir::Type& aType = fn_.typeOf(dot.a());
  const ir::Type& accType = fn_.typeOf(dot.acc());
  if (accType.dtype != DType::F32) return unsupported(op, "a wgmma accumulator that is not f32");
  ir::WgmmaDescriptor aDescriptor, bDescriptor;
  for (auto [which, out] : {std::pair<size_t, ir::WgmmaDescriptor*>{0, &aDescriptor}, {1, &bDescriptor}}) {
    std::string problem = wgmmaOperandProblem(op, which, out);
    if (!problem.empty()) return unsupported(op, "this wgmma operand", problem);
  }
  if (fn_.typeOf(dot.b()).dtype != aType.dtype) return unsupported(op, "wgmma operands of different types");
  const int64_t n = accType.shape[1], k = aType.shape[1];
  const size_t numValues = static_cast<size_t>(n / 2);
  std::vector<llvm::Value*> acc = elementsOf(dot.acc(), numValues);
  if (acc.size() != numValues) return internalError(op.range, "wgmma accumulator has the wrong number of values");
  continueUnwaitedAccumulator(dot.acc());
  for (llvm::Value*& x : acc) x = emitCast(accType.dtype, DType::F32, x);

  const Lowered& a = values_[dot.a()];
  const Lowered& b = values_[dot.b()];
  // The view's first element, placed in the buffer's panels (the view starts at a whole
  // row of a whole swizzle atom, so the XOR leaves that element in place).
  auto originAddress = [&](const Lowered& view, const ir::Type& t) {
    llvm::Value* origin = viewElementIndex(view, std::vector<llvm::Value*>(t.shape.size(), b_.getInt32(0)));
    return sharedAddress32(b_.CreateGEP(memType(t.dtype), view.base, placeInPanels(view.swizzle, origin)));
  };
  llvm::Value* warpgroup = b_.CreateLShr(threadId(), b_.getInt32(7));
  llvm::Value* aRows = b_.CreateMul(warpgroup, b_.getInt32(static_cast<uint32_t>(aDescriptor.warpgroupBytes)));
  llvm::Value* aBase = b_.CreateAdd(originAddress(a, aType), aRows);
  llvm::Value* bBase = originAddress(b, fn_.typeOf(dot.b()));

  const size_t descA = numValues, descB = numValues + 1;
  std::string constraints;
  std::string text = wgmmaAsm(n, aType.dtype, numValues, "$" + std::to_string(descA) + ", $" + std::to_string(descB), 2,
                              bDescriptor.mnMajor ? "0, 1" : "0, 0", &constraints);
  constraints += "l,l,r";
  for (size_t i = 0; i < numValues; ++i) constraints += "," + std::to_string(i);
  llvm::Type* resultTy = llvm::StructType::get(ctx_, std::vector<llvm::Type*>(numValues, b_.getFloatTy()));

  inlinePtx(b_.getVoidTy(), "wgmma.fence.sync.aligned;", "~{memory}", {}, true);
  for (int64_t step = 0; step * ir::kWgmmaKStep < k; ++step) {
    llvm::Value* aStep = b_.getInt32(static_cast<uint32_t>(ir::wgmmaStepOffsetBytes(aDescriptor, step)));
    llvm::Value* bStep = b_.getInt32(static_cast<uint32_t>(ir::wgmmaStepOffsetBytes(bDescriptor, step)));
    std::vector<llvm::Value*> args{wgmmaDescriptor(b_.CreateAdd(aBase, aStep), aDescriptor),
                                   wgmmaDescriptor(b_.CreateAdd(bBase, bStep), bDescriptor), b_.getInt32(1)};
    args.insert(args.end(), acc.begin(), acc.end());
    llvm::Value* d = inlinePtx(resultTy, text, constraints, args, true);
    for (size_t i = 0; i < numValues; ++i) acc[i] = b_.CreateExtractValue(d, {static_cast<unsigned>(i)});
  }
  inlinePtx(b_.getVoidTy(), "wgmma.commit_group.sync.aligned;", "~{memory}", {}, true);
  ++wgmmaGroups_;
  // A dot the pipeline gave a stage of slack leaves its group in flight; the loop's
  // end waits for it (lowerFor).
  const bool slack = ir::DotOp(op).wgmmaInFlight();
  if (slack) acc = wgmmaWait(1, acc);
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  for (llvm::Value* x : acc) r.values.push_back(emitCast(DType::F32, accType.dtype, x));
  if (!slack) leaveWgmmaInFlight(op.results[0]);
  return true;
}

// Why dot(a, b, acc) with a register `a` cannot run as wgmma ("" when it can): attention's
// P @ V, with p in the accumulator's own layout (each warp's 16 rows are exactly the A
// fragment wgmma takes from registers) and b = V stored (K, N), N contiguous: an N-major
// operand whose rows (N = 32, 64 or 128 bytes) are one swizzle span. Its descriptor has the
// same bits as a K-major one of that span (SBO: 8 rows; one pattern wide, so LBO is unused);
// the instruction's imm-trans-b says N-major, and a K step of 16 advances 16 rows.
std::string KernelLowering::registerAWgmmaProblem(const ir::Op& op, int* swizzleBytes) const {
  const ir::DotOp dot(op);
  const ir::Type& aType = fn_.typeOf(dot.a());
  const ir::Type& bType = fn_.typeOf(dot.b());
  const ir::Type& accType = fn_.typeOf(dot.acc());
  if (ir::DotOp(op).transB()) return "b is read transposed";
  if (accType.dtype != DType::F32 || aType.dtype != bType.dtype ||
      (aType.dtype != DType::BF16 && aType.dtype != DType::F16))
    return "the operands are not both bf16 or both f16 into f32";
  const ir::Layout& al = aType.layout;
  if (!al.isMma() || al.warpsN != 1 || al.warpsM != accType.layout.warpsM || al.reducedMask != 0 ||
      aType.shape.size() != 2 || aType.shape[0] != accType.shape[0] || aType.shape[1] % 16 != 0)
    return "a is not in the accumulator's layout";
  const ir::Op* view = fn_.values[dot.b()].def;
  if (bType.kind != ir::TypeKind::View || bType.space != ir::MemSpace::Shared || !view ||
      view->kind != ir::OpKind::View)
    return "b is not a shared-memory view";
  const ir::Type& buffer = fn_.typeOf(ir::ViewOp(*view).base());
  const int bytes = ir::tmaSwizzleBytes(bType.swizzle, bType.dtype);
  if (bytes <= 0 || buffer.shape.back() * 2 != bytes || bType.shape.back() != buffer.shape.back() ||
      bType.shape[0] != aType.shape[1] || bType.shape.back() != accType.shape[1])
    return "b's rows are not exactly one swizzle span of the accumulator's width";
  *swizzleBytes = bytes;
  return {};
}

bool KernelLowering::lowerRegisterAWgmmaDot(const ir::Op& op, int swizzleBytes) {
  const ir::DotOp dot(op);
  if (!requireSm90a(op, "wgmma")) return false;
  const ir::Type& aType = fn_.typeOf(dot.a());
  const ir::Type& accType = fn_.typeOf(dot.acc());
  const int64_t n = accType.shape[1], k = aType.shape[1];
  const size_t numValues = static_cast<size_t>(n / 2);
  std::vector<llvm::Value*> acc = elementsOf(dot.acc(), numValues);
  std::vector<llvm::Value*> aValues = elementsOf(dot.a(), static_cast<size_t>(k / 2));
  if (acc.size() != numValues || aValues.size() != static_cast<size_t>(k / 2))
    return internalError(op.range, "wgmma operands have the wrong number of values");
  continueUnwaitedAccumulator(dot.acc());
  const Lowered& b = values_[dot.b()];
  const ir::Type& bType = fn_.typeOf(dot.b());
  llvm::Value* bOrigin = viewElementIndex(b, std::vector<llvm::Value*>(bType.shape.size(), b_.getInt32(0)));
  llvm::Value* bBase = sharedAddress32(b_.CreateGEP(memType(bType.dtype), b.base, bOrigin));

  const ir::WgmmaDescriptor bDescriptor = ir::wgmmaMnMajorDescriptorForSpan(swizzleBytes);
  const size_t a0 = numValues, descB = numValues + 4;
  std::string constraints;
  std::string text = wgmmaAsm(n, aType.dtype, numValues,
                              "{$" + std::to_string(a0) + ", $" + std::to_string(a0 + 1) + ", $" + std::to_string(a0 + 2) +
                                  ", $" + std::to_string(a0 + 3) + "}, $" + std::to_string(descB),
                              5, "1", &constraints);
  constraints += "r,r,r,r,l,r";
  for (size_t i = 0; i < numValues; ++i) constraints += "," + std::to_string(i);
  llvm::Type* resultTy = llvm::StructType::get(ctx_, std::vector<llvm::Type*>(numValues, b_.getFloatTy()));

  for (llvm::Value*& x : acc) x = emitCast(accType.dtype, DType::F32, x);
  // Every A fragment is packed before the fence: a register written between the fence and
  // a wgmma that reads it makes ptxas insert another fence there (C7519).
  std::vector<std::vector<llvm::Value*>> fragments;
  for (int64_t step = 0; step * ir::kWgmmaKStep < k; ++step)
    fragments.push_back(registerAFragment(aValues, aType.dtype, 0, 2 * step, k / 8));
  inlinePtx(b_.getVoidTy(), "wgmma.fence.sync.aligned;", "~{memory}", {}, true);
  for (int64_t step = 0; step * ir::kWgmmaKStep < k; ++step) {
    const std::vector<llvm::Value*>& fragment = fragments[static_cast<size_t>(step)];
    llvm::Value* rows = b_.getInt32(static_cast<uint32_t>(step * bDescriptor.kStepBytes));
    std::vector<llvm::Value*> args = fragment;
    args.push_back(wgmmaDescriptor(b_.CreateAdd(bBase, rows), bDescriptor));
    args.push_back(b_.getInt32(1));
    args.insert(args.end(), acc.begin(), acc.end());
    llvm::Value* d = inlinePtx(resultTy, text, constraints, args, true);
    for (size_t i = 0; i < numValues; ++i) acc[i] = b_.CreateExtractValue(d, {static_cast<unsigned>(i)});
  }
  inlinePtx(b_.getVoidTy(), "wgmma.commit_group.sync.aligned;", "~{memory}", {}, true);
  ++wgmmaGroups_;
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  for (llvm::Value* x : acc) r.values.push_back(emitCast(DType::F32, accType.dtype, x));
  leaveWgmmaInFlight(op.results[0]);
  return true;
}

// Lazy waits. A wgmma dot commits its group and leaves it in flight: its result's
// registers are written by the tensor cores until a wgmma.wait_group retires the group.
// Before each op, retireWgmmaBefore waits for exactly the groups whose results the op
// reads (wait_group N leaves the N newest groups in flight), so the work between a dot
// and the first use of its result (a softmax between the scores' dot and p @ v's, say)
// runs while the tensor cores work. A dot whose accumulator is an earlier dot's result
// continues that chain in flight. Ops that may write shared memory, synchronize or
// branch, and region boundaries, first retire every group.
void KernelLowering::leaveWgmmaInFlight(ir::ValueId result) {
  unwaitedWgmma_.push_back(UnwaitedWgmma{result, wgmmaGroups_ - 1});
}

// A dot whose accumulator is an unwaited dot's result continues its chain of wgmmas: that
// result is retired with this dot's group, as its own accumulator.
void KernelLowering::continueUnwaitedAccumulator(ir::ValueId acc) {
  unwaitedWgmma_.erase(std::remove_if(unwaitedWgmma_.begin(), unwaitedWgmma_.end(),
                                      [&](const UnwaitedWgmma& u) { return u.id == acc; }),
                       unwaitedWgmma_.end());
}

namespace {

// Ops that write no memory, neither synchronize nor branch nor allocate, as ir/ops.def declares
// them: wgmma groups may stay in flight across them (their operands still wait, see
// retireWgmmaBefore). Reductions and conversions use codegen's own scratch, never a dot's operand.
bool keepsWgmmaInFlight(ir::OpKind kind) {
  const ir::OpInfo& info = ir::opInfo(kind);
  if (info.sync != ir::SyncKind::None || info.has(ir::kControl) || info.has(ir::kTerminator) ||
      info.has(ir::kAllocates))
    return false;
  return std::none_of(info.effects.begin(), info.effects.end(),
                      [](const ir::EffectDecl& e) { return e.access == ir::MemoryAccess::Write; });
}

}  // namespace

void KernelLowering::retireWgmmaBefore(const ir::Op& op) {
  if (unwaitedWgmma_.empty()) return;
  if (!keepsWgmmaInFlight(op.kind) || !op.regions.empty()) {
    retireWgmmaThrough(wgmmaGroups_ - 1);
    return;
  }
  const bool wgmmaDot = op.kind == ir::OpKind::Dot && lowersToWgmma(op);
  int64_t through = -1;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    for (const UnwaitedWgmma& u : unwaitedWgmma_) {
      if (u.id != op.operands[i]) continue;
      // The accumulator of a wgmma dot, used nowhere else, continues the chain in flight.
      if (wgmmaDot && i == 2 && useCountOf(u.id) == 1) continue;
      through = std::max(through, u.group);
    }
  }
  if (through >= 0) retireWgmmaThrough(through);
}

// Waits until wgmma group `group` and every older one have retired.
void KernelLowering::retireWgmmaThrough(int64_t group) {
  wgmmaWait(static_cast<int>(wgmmaGroups_ - 1 - group), {});
}

bool KernelLowering::lowersToWgmma(const ir::Op& dot) const {
  if (dot.operands.size() != 3) return false;
  const ir::DotOp dotOp(dot);
  if (!fn_.typeOf(dotOp.acc()).layout.wgmma || arch_ != "sm_90a") return false;
  int swizzleBytes = 0;
  return !fn_.typeOf(dotOp.a()).isTile() || registerAWgmmaProblem(dot, &swizzleBytes).empty();
}

// wgmma.wait_group `pending`, naming the accumulators as read and written so that
// nothing reads them before their group retires: `accIn`, and the results of the
// unwaited dots whose groups this wait retires (all but the `pending` newest).
std::vector<llvm::Value*> KernelLowering::wgmmaWait(int pending, const std::vector<llvm::Value*>& accIn) {
  std::vector<llvm::Value*> acc = accIn;
  std::vector<std::pair<ir::ValueId, size_t>> carried;  // retired result, its first index in acc
  const int64_t newestRetired = wgmmaGroups_ - 1 - pending;
  std::vector<UnwaitedWgmma> stillInFlight;
  for (const UnwaitedWgmma& u : unwaitedWgmma_) {
    if (u.group > newestRetired) {
      stillInFlight.push_back(u);
      continue;
    }
    carried.push_back({u.id, acc.size()});
    acc.insert(acc.end(), values_[u.id].values.begin(), values_[u.id].values.end());
  }
  unwaitedWgmma_ = std::move(stillInFlight);
  std::string constraints;
  for (size_t i = 0; i < acc.size(); ++i) constraints += std::string(i ? "," : "") + "=f";
  for (size_t i = 0; i < acc.size(); ++i) constraints += "," + std::to_string(i);
  std::vector<llvm::Type*> types(acc.size(), b_.getFloatTy());
  llvm::Type* resultTy = acc.empty() ? b_.getVoidTy() : static_cast<llvm::Type*>(llvm::StructType::get(ctx_, types));
  llvm::Value* waited = inlinePtx(resultTy, "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";",
                                  constraints + (acc.empty() ? "~{memory}" : ",~{memory}"), acc, true);
  std::vector<llvm::Value*> out;
  for (size_t i = 0; i < acc.size(); ++i) out.push_back(b_.CreateExtractValue(waited, {static_cast<unsigned>(i)}));
  for (const auto& [id, first] : carried) {
    std::vector<llvm::Value*>& values = values_[id].values;
    for (size_t i = 0; i < values.size(); ++i) values[i] = out[first + i];
  }
  out.resize(accIn.size());
  return out;
}

// After a loop whose wgmma dot leaves its group in flight: wait for it before
// anything reads the accumulator the loop returns.
void KernelLowering::retireInFlightWgmma(const ir::Op& loop) {
  const ir::Block& body = loop.regions[0];
  const ir::Op* yield = body.ops.empty() ? nullptr : body.ops.back().get();
  if (!yield || yield->kind != ir::OpKind::Yield) return;
  for (const auto& op : body.ops) {
    if (auto dot = ir::as<ir::DotOp>(*op); !dot || !dot->wgmmaInFlight()) continue;
    for (size_t i = 0; i < yield->operands.size() && i < loop.results.size(); ++i) {
      if (yield->operands[i] != op->results[0]) continue;
      Lowered& result = values_[loop.results[i]];
      result.values = wgmmaWait(0, result.values);
      // ptxas serializes every wgmma of the loop (C7514) when any instruction sits between the
      // loop's exit and this wait; LLVM sinks the epilogue's address arithmetic to the top of
      // the exit block, so the code after the wait goes to a block of its own, behind a branch
      // on an opaque value that LLVM cannot fold (its other side is never taken).
      llvm::Value* zero = inlinePtx(b_.getInt32Ty(), "mov.u32 $0, 0;", "=r", {}, true);
      llvm::BasicBlock* retired = llvm::BasicBlock::Create(ctx_, "wgmma.retired", kernel_);
      llvm::BasicBlock* never = llvm::BasicBlock::Create(ctx_, "wgmma.never", kernel_);
      b_.CreateCondBr(b_.CreateICmpEQ(zero, b_.getInt32(0)), retired, never);
      b_.SetInsertPoint(never);
      b_.CreateRetVoid();
      b_.SetInsertPoint(retired);
    }
  }
}

}  // namespace argus::codegen
