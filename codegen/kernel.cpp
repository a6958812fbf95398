// Kernel setup: signature and annotations, parameters, static shared memory,
// thread-id arithmetic (emitted once in the entry block), op dispatch.
#include <set>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen/codegen.h"
#include "codegen/lowering.h"

namespace argus::codegen {

using ir::OpKind;

int64_t dtypeBytes(ir::DType t) {
  int bits = ir::dtypeBits(t);
  return bits <= 8 ? 1 : bits / 8;
}

KernelLowering::KernelLowering(const ir::Function& fn, llvm::Module& module, const std::string& arch,
                               DiagnosticSink& diags)
    : fn_(fn), module_(module), ctx_(module.getContext()), diags_(diags), arch_(arch), b_(ctx_), entry_(ctx_) {
  // A multiply feeding an add may become one fma (as nvcc's default --fmad=true does):
  // one rounding instead of two, and half the instructions of softmax's s * scale - m.
  llvm::FastMathFlags contract;
  contract.setAllowContract(true);
  b_.setFastMathFlags(contract);
}

bool KernelLowering::unsupported(const ir::Op& op, const std::string& what, const std::string& hint) {
  Diagnostic& d = diags_.report(DiagId::CodegenUnsupported, op.range, {what});
  if (!hint.empty()) d.notes.push_back(hint);
  return false;
}

bool KernelLowering::internalError(SourceRange range, const std::string& reason) {
  diags_.report(DiagId::CodegenInternalError, range, {reason + " (kernel '" + fn_.name + "')"});
  return false;
}

// ---------------------------------------------------------------- shared memory plan

namespace {

template <typename F>
void forEachOp(const ir::Block& block, F&& f) {
  for (const auto& op : block.ops) {
    f(*op);
    for (const ir::Block& region : op->regions) forEachOp(region, f);
  }
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// Buffers that TMA writes or wgmma reads: their swizzle pattern is a function
// of the shared address, so they start on a 1024-byte boundary.
std::set<ir::ValueId> addressSwizzledBuffers(const ir::Function& fn) {
  std::set<ir::ValueId> out;
  auto bufferOf = [&](ir::ValueId view) {
    const ir::Op* def = fn.values[view].def;
    if (def && def->kind == OpKind::View && !def->operands.empty()) out.insert(ir::ViewOp(*def).base());
  };
  forEachOp(fn.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::CopyBulk && !op.operands.empty()) bufferOf(ir::CopyBulkOp(op).dst());
    if (op.kind == OpKind::Dot && op.operands.size() == 3) {
      const ir::DotOp dot(op);
      if (fn.typeOf(dot.acc()).layout.wgmma) {
        bufferOf(dot.a());
        bufferOf(dot.b());
      }
    }
  });
  return out;
}

int64_t alignUp(int64_t x, int64_t alignment) { return (x + alignment - 1) / alignment * alignment; }

}  // namespace

int64_t sharedBufferAlignment(const ir::Function& fn, const ir::Op& alloc) {
  static constexpr int64_t kSwizzleAtomBytes = 1024;
  return !alloc.results.empty() && addressSwizzledBuffers(fn).count(alloc.results[0]) ? kSwizzleAtomBytes : 16;
}

int64_t scratchBytesFor(const ir::Function& fn, const ir::Op& op) {
  if (op.operands.empty() || op.results.empty()) return 0;
  // The tile that goes through scratch: the one operand of the kinds below (every other
  // kind needs none).
  auto scratchOperand = [&]() -> std::optional<ir::ValueId> {
    switch (op.kind) {
      case OpKind::Reduce: return ir::ReduceOp(op).x();
      case OpKind::ReduceAll: return ir::ReduceAllOp(op).x();
      case OpKind::ConvertLayout: return ir::ConvertLayoutOp(op).x();
      case OpKind::Reshape: return ir::ReshapeOp(op).x();
      default: return std::nullopt;
    }
  };
  const std::optional<ir::ValueId> x = scratchOperand();
  if (!x) return 0;
  const ir::Type& in = fn.typeOf(*x);
  if (!in.isTile()) return 0;
  ir::Distribution dist = ir::Distribution::of(in.layout, fn.numWarps);
  int64_t bytes = dtypeBytes(in.dtype);
  switch (op.kind) {
    case OpKind::Reduce: {
      const auto axis = static_cast<size_t>(ir::ReduceOp(op).axis());
      if (axis >= dist.warps.size() || in.layout.isReduced(axis) || dist.warps[axis] <= 1) return 0;
      return dist.warps[axis] * product(fn.typeOf(op.results[0]).shape) * bytes;
    }
    case OpKind::ReduceAll: {
      int64_t warpsUsed = 1;
      for (size_t d = 0; d < dist.warps.size(); ++d)
        if (!in.layout.isReduced(d)) warpsUsed *= dist.warps[d];
      return warpsUsed > 1 ? fn.numWarps * bytes : 0;
    }
    case OpKind::ConvertLayout:
      if (fn.typeOf(op.results[0]).layout == in.layout) return 0;
      return product(in.shape) * bytes;
    case OpKind::Reshape:
      return product(in.shape) * bytes;
    default:
      return 0;
  }
}

// Over 48 KiB a block must opt in to dynamic shared memory: one extern array,
// the buffers at 16-byte aligned offsets in op order, the scratch last. The
// launcher passes sharedMemoryBytes(fn, arch) (in the metadata) at launch.
bool KernelLowering::planDynamicSharedMemory(const std::vector<std::pair<const ir::Op*, int64_t>>& buffers) {
  const char* kName = "argus_dynamic_smem";
  llvm::GlobalVariable* base = module_.getGlobalVariable(kName, true);
  if (!base) {
    auto* arrayTy = llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx_), 0);
    base = new llvm::GlobalVariable(module_, arrayTy, false, llvm::GlobalValue::ExternalLinkage, nullptr, kName,
                                    nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  }
  int64_t offset = 0, maxAlignment = 16;
  auto at = [&](int64_t bytes, int64_t alignment) {
    offset = alignUp(offset, alignment);
    maxAlignment = std::max(maxAlignment, alignment);
    llvm::Constant* p = llvm::ConstantExpr::getInBoundsGetElementPtr(
        llvm::Type::getInt8Ty(ctx_), base, llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx_), offset));
    offset += alignTo16(bytes);
    return p;
  };
  for (const auto& [op, bytes] : buffers) sharedBuffers_[op] = at(bytes, sharedBufferAlignment(fn_, *op));
  if (scratchBytes_ > 0) scratch_ = at(scratchBytes_, 16);
  if (stagingBytes_ > 0) storeStaging_ = at(stagingBytes_, kStoreStagingAlignment);
  base->setAlignment(std::max(base->getAlign().valueOrOne(), llvm::Align(static_cast<uint64_t>(maxAlignment))));
  return true;
}

bool KernelLowering::planSharedMemory() {
  const int64_t limit = maxSharedBytesPerBlock(arch_);
  int64_t total = 0;
  const ir::Op* overflowAt = nullptr;
  std::vector<std::pair<const ir::Op*, int64_t>> buffers;
  bool ok = true;
  forEachOp(fn_.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::AllocShared && !op.results.empty()) {
      const ir::Type& t = fn_.typeOf(op.results[0]);
      if (!dtypeSupported(t.dtype)) {
        ok = unsupported(op, std::string("shared buffers of ") + ir::dtypeName(t.dtype));
        return;
      }
      int64_t bytes = product(t.shape) * dtypeBytes(t.dtype);
      buffers.push_back({&op, bytes});
      total = alignUp(total, sharedBufferAlignment(fn_, op)) + alignTo16(bytes);
      if (total > limit && !overflowAt) overflowAt = &op;
    }
    scratchBytes_ = std::max(scratchBytes_, scratchBytesFor(fn_, op));
  });
  if (!ok) return false;
  total += scratchBytes_;
  stagingBytes_ = storeStagingBytes(fn_, arch_, total);
  if (stagingBytes_ > 0) total = storeStagingOffset(total) + stagingBytes_;
  if (total > limit) {
    std::string parts;
    for (const auto& [op, bytes] : buffers) {
      const std::string& name = fn_.value(op->results[0]).name;
      if (!parts.empty()) parts += ", ";
      parts += (name.empty() ? std::string("a buffer") : "'" + name + "'") + " " + std::to_string(bytes);
    }
    if (scratchBytes_ > 0) parts += std::string(parts.empty() ? "" : ", ") + "reduction/layout scratch " + std::to_string(scratchBytes_);
    SourceRange where = overflowAt ? overflowAt->range : fn_.range;
    Diagnostic& d = diags_.report(DiagId::SharedMemoryTooLarge, where,
                                  {fn_.name, std::to_string(total), parts, arch_, std::to_string(limit)});
    for (const auto& [op, bytes] : buffers)
      if (op != overflowAt)
        d.labels.push_back({op->range, std::to_string(bytes) + " bytes allocated here"});
    d.notes.push_back("make the shared buffers smaller (smaller tiles, fewer stages) so that they fit in " +
                      std::to_string(limit / 1024) + " KiB");
    return false;
  }
  if (total > kStaticSharedLimitBytes) return planDynamicSharedMemory(buffers);
  for (const auto& [op, bytes] : buffers) {
    const ir::Type& t = fn_.typeOf(op->results[0]);
    auto* arrayTy = llvm::ArrayType::get(memType(t.dtype), static_cast<uint64_t>(product(t.shape)));
    const std::string& name = fn_.value(op->results[0]).name;
    auto* gv = new llvm::GlobalVariable(module_, arrayTy, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::UndefValue::get(arrayTy),
                                        fn_.name + "_smem_" + (name.empty() ? "buf" : name), nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 3);
    gv->setAlignment(llvm::Align(static_cast<uint64_t>(sharedBufferAlignment(fn_, *op))));
    sharedBuffers_[op] = gv;
  }
  // codegen's own static arrays: the reduction/layout scratch and the store staging slices
  auto byteArray = [&](int64_t bytes, const char* suffix, uint64_t alignment) -> llvm::Value* {
    if (bytes <= 0) return nullptr;
    auto* arrayTy = llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx_), static_cast<uint64_t>(bytes));
    auto* gv = new llvm::GlobalVariable(module_, arrayTy, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::UndefValue::get(arrayTy), fn_.name + suffix, nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 3);
    gv->setAlignment(llvm::Align(alignment));
    return gv;
  };
  scratch_ = byteArray(scratchBytes_, "_smem_scratch", 16);
  storeStaging_ = byteArray(stagingBytes_, "_smem_store_staging", kStoreStagingAlignment);
  return true;
}

int64_t maxSharedBytesPerBlock(const std::string& arch) {
  return arch == "sm_80" ? 163 * 1024 : 227 * 1024;  // opt-in maximum per block (CUDA occupancy tables)
}

int64_t sharedMemoryBytes(const ir::Function& fn, const std::string& arch) {
  const int64_t before = sharedBytesBeforeStaging(fn);
  const int64_t staging = storeStagingBytes(fn, arch, before);
  return staging > 0 ? storeStagingOffset(before) + staging : before;
}

int64_t sharedBytesBeforeStaging(const ir::Function& fn) {
  int64_t total = 0, scratch = 0;
  forEachOp(fn.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::AllocShared && !op.results.empty()) {
      const ir::Type& t = fn.typeOf(op.results[0]);
      total = alignUp(total, sharedBufferAlignment(fn, op)) + alignTo16(product(t.shape) * dtypeBytes(t.dtype));
    }
    scratch = std::max(scratch, scratchBytesFor(fn, op));
  });
  return total + scratch;
}

int64_t dynamicSharedBytes(const ir::Function& fn, const std::string& arch) {
  int64_t total = sharedMemoryBytes(fn, arch);
  return total > kStaticSharedLimitBytes ? total : 0;
}

// ---------------------------------------------------------------- signature

bool KernelLowering::declareKernel() {
  std::vector<llvm::Type*> paramTypes;
  for (const ir::Param& p : fn_.params) {
    if (!dtypeSupported(p.dtype)) {
      diags_.report(DiagId::CodegenUnsupported, p.range,
                    {std::string("parameters of type ") + ir::dtypeName(p.dtype)});
      return false;
    }
    switch (p.kind) {
      case ir::ParamKind::Tensor: paramTypes.push_back(llvm::PointerType::get(ctx_, 1)); break;
      case ir::ParamKind::Size: paramTypes.push_back(llvm::Type::getInt32Ty(ctx_)); break;
      case ir::ParamKind::Scalar: paramTypes.push_back(memType(p.dtype)); break;
    }
  }
  // TMA descriptors: 128-byte byval parameters marked grid_constant (ir/bulk.h).
  tensorMaps_ = kernelTensorMaps(fn_, arch_);
  auto* tensorMapTy = llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx_), 128);
  for (size_t m = 0; m < tensorMaps_.size(); ++m) paramTypes.push_back(llvm::PointerType::get(ctx_, 0));
  auto* fnTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), paramTypes, false);
  kernel_ = llvm::Function::Create(fnTy, llvm::GlobalValue::ExternalLinkage, fn_.name, module_);
  llvm::SmallVector<llvm::Metadata*> gridConstants;
  for (size_t m = 0; m < tensorMaps_.size(); ++m) {
    unsigned index = static_cast<unsigned>(fn_.params.size() + m);
    llvm::Argument* arg = kernel_->getArg(index);
    arg->setName(fn_.params[tensorMaps_[m].param].name + "_tensor_map");
    kernel_->addParamAttr(index, llvm::Attribute::getWithByValType(ctx_, tensorMapTy));
    kernel_->addParamAttr(index, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    tensorMapArgs_.push_back(arg);
    gridConstants.push_back(llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx_), index + 1)));
  }
  kernel_->setCallingConv(llvm::CallingConv::PTX_Kernel);
  kernel_->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::NamedMDNode* annotations = module_.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char* key, int64_t value) {
    llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(kernel_), llvm::MDString::get(ctx_, key),
                            llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx_), value))};
    annotations->addOperand(llvm::MDNode::get(ctx_, md));
  };
  annotate("kernel", 1);
  if (!gridConstants.empty()) {
    llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(kernel_), llvm::MDString::get(ctx_, "grid_constant"),
                            llvm::MDNode::get(ctx_, gridConstants)};
    annotations->addOperand(llvm::MDNode::get(ctx_, md));
  }
  annotate("maxntidx", fn_.launchThreads());
  annotate("maxntidy", 1);
  annotate("maxntidz", 1);

  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx_, "entry", kernel_);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "body", kernel_);
  llvm::BranchInst* toBody = llvm::BranchInst::Create(body, entry);
  entry_.SetInsertPoint(toBody);
  b_.SetInsertPoint(body);

  // Size parameters by name, for tensor extents.
  std::vector<llvm::Value*> sizeArgs(fn_.sizeNames.size(), nullptr);
  for (size_t i = 0; i < fn_.params.size(); ++i) {
    const ir::Param& p = fn_.params[i];
    if (p.kind != ir::ParamKind::Size) continue;
    for (size_t s = 0; s < fn_.sizeNames.size(); ++s)
      if (fn_.sizeNames[s] == p.name) sizeArgs[s] = kernel_->getArg(static_cast<unsigned>(i));
  }
  for (size_t i = 0; i < fn_.params.size(); ++i) {
    const ir::Param& p = fn_.params[i];
    llvm::Argument* arg = kernel_->getArg(static_cast<unsigned>(i));
    arg->setName(p.name);
    if (p.value >= values_.size()) return internalError(p.range, "parameter without a value");
    Lowered& lv = values_[p.value];
    if (p.kind != ir::ParamKind::Tensor) {
      lv.kind = Lowered::Kind::Scalar;
      lv.values = {p.kind == ir::ParamKind::Scalar ? fromMemoryAt(entry_, arg, p.dtype) : arg};
      continue;
    }
    kernel_->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
    lv.kind = Lowered::Kind::Tensor;
    lv.base = arg;
    for (const ir::DimRef& dim : p.dims) {
      if (dim.constant >= 0) {
        lv.extents.push_back(entry_.getInt32(static_cast<uint32_t>(dim.constant)));
      } else if (dim.sizeIndex >= 0 && static_cast<size_t>(dim.sizeIndex) < sizeArgs.size() &&
                 sizeArgs[dim.sizeIndex]) {
        lv.extents.push_back(sizeArgs[dim.sizeIndex]);
      } else {
        return internalError(p.range, "tensor dimension names no size parameter");
      }
    }
    // Row-major strides in i64, innermost first.
    lv.strides.assign(lv.extents.size(), nullptr);
    llvm::Value* stride = entry_.getInt64(1);
    for (size_t d = lv.extents.size(); d-- > 0;) {
      lv.strides[d] = stride;
      stride = entry_.CreateMul(stride, entry_.CreateZExt(lv.extents[d], entry_.getInt64Ty()));
    }
  }
  return true;
}

// ---------------------------------------------------------------- thread ids

llvm::Value* KernelLowering::threadId() {
  if (!tid_) {
    llvm::CallInst* call = entry_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
    llvm::MDBuilder md(ctx_);
    call->setMetadata(llvm::LLVMContext::MD_range,
                      md.createRange(llvm::APInt(32, 0), llvm::APInt(32, static_cast<uint64_t>(fn_.launchThreads()))));
    tid_ = call;
  }
  return tid_;
}

llvm::Value* KernelLowering::tidBitsAreZero(uint32_t mask) {
  if (mask == 0) return entry_.getTrue();
  auto it = zeroBitTests_.find(mask);
  if (it != zeroBitTests_.end()) return it->second;
  llvm::Value* test = entry_.CreateICmpEQ(entry_.CreateAnd(threadId(), mask), entry_.getInt32(0));
  zeroBitTests_[mask] = test;
  return test;
}

namespace {

// Emits sum over set bits b of `bitMask` of bit(tid, b) << targetShift(b), grouping
// runs of consecutive source bits with consecutive targets into one shift and mask.
llvm::Value* assembleBits(llvm::IRBuilderBase& b, llvm::Value* tid, const std::vector<std::pair<int, int>>& bits) {
  llvm::Value* result = b.getInt32(0);
  size_t i = 0;
  while (i < bits.size()) {
    size_t j = i + 1;
    while (j < bits.size() && bits[j].first == bits[j - 1].first + 1 && bits[j].second == bits[j - 1].second + 1) ++j;
    int src = bits[i].first, dst = bits[i].second, n = static_cast<int>(j - i);
    llvm::Value* field = b.CreateAnd(b.CreateLShr(tid, static_cast<uint64_t>(src)), (1u << n) - 1);
    if (dst > 0) field = b.CreateShl(field, static_cast<uint64_t>(dst));
    result = b.CreateOr(result, field);
    i = j;
  }
  return result;
}

int log2Of(int64_t x) {
  int n = 0;
  while ((int64_t{1} << n) < x) ++n;
  return n;
}

}  // namespace

llvm::Value* KernelLowering::gatherTidBits(uint32_t mask) {
  std::vector<std::pair<int, int>> bits;
  for (int bit = 0; bit < 32; ++bit)
    if ((mask >> bit) & 1u) bits.push_back({bit, static_cast<int>(bits.size())});
  return assembleBits(entry_, threadId(), bits);
}

const EmittedLayout* KernelLowering::layoutFor(const ir::Layout& layout, SourceRange range) {
  std::string key = ir::layoutStr(layout);  // names kind, parent, warps and reduced axes
  auto it = layouts_.find(key);
  if (it != layouts_.end()) return it->second.get();
  auto emitted = std::make_unique<EmittedLayout>();
  std::string why;
  if (!analyzeThreadLayout(layout, fn_.numWarps, emitted->map, &why)) {
    internalError(range, "unexpected tile distribution: " + why);
    return nullptr;
  }
  const ThreadLayout& map = emitted->map;
  for (int d = 0; d < map.rank(); ++d) {
    std::vector<std::pair<int, int>> bits;
    for (int bit = 0; bit < map.numThreadBits; ++bit)
      if (map.bits[bit].dim == d) bits.push_back({bit, log2Of(map.bits[bit].step)});
    emitted->threadCoord.push_back(assembleBits(entry_, threadId(), bits));
  }
  if (map.ownerMask != 0) emitted->isOwner = tidBitsAreZero(map.ownerMask);
  return (layouts_[key] = std::move(emitted)).get();
}

void KernelLowering::barrier(bool withProducer) {
  if (needsAsyncProxyFence()) inlinePtx(b_.getVoidTy(), "fence.proxy.async.shared::cta;", "~{memory}", {}, true);
  // The barrier after the mbarriers' init: in a kernel of clusters, the other blocks' copies
  // and arrivals may reach this block's mbarriers, so the whole cluster waits for every init.
  if (withProducer && fn_.clusterSize > 1) {
    clusterSync();
    return;
  }
  if (!consumersOnly_ || withProducer) {
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    return;
  }
  // In a warp-specialized kernel the producer warps run a program of their own: a barrier of
  // the block's own warps.
  inlinePtx(b_.getVoidTy(), "bar.sync 1, " + std::to_string(fn_.numThreads()) + ";", "~{memory}", {}, true);
}

// ---------------------------------------------------------------- dispatch

bool KernelLowering::run() {
  if (fn_.clusterSize > 1 && arch_ != "sm_90" && arch_ != "sm_90a") {
    diags_.report(DiagId::NeedsSm90a, fn_.range, {"thread-block clusters (@kernel(cluster=...))", arch_});
    return false;
  }
  values_.assign(fn_.values.size(), Lowered{});
  if (!declareKernel()) return false;
  if (!planSharedMemory()) return false;
  if (!(fn_.producerWarps > 0 ? lowerSpecializedKernel() : lowerBlock(fn_.body))) return false;
  // No block of a cluster leaves while another may still arrive on its mbarriers (a stage's
  // release) or copy into its shared memory; exited threads count as arrived.
  if (fn_.clusterSize > 1) clusterSync();
  b_.CreateRetVoid();
  return true;
}

void KernelLowering::clusterSync() {
  // Release and acquire are the defaults; spelling them out needs PTX 8.0, which sm_90's PTX is not.
  inlinePtx(b_.getVoidTy(), "barrier.cluster.arrive;\nbarrier.cluster.wait;", "~{memory}", {}, true);
}

bool KernelLowering::lowerBlock(const ir::Block& block) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    const ir::Op& op = *block.ops[i];
    if (i + 1 < block.ops.size() && fusesIntoSharedCopy(op, *block.ops[i + 1])) {
      if (!lowerSharedCopy(op, *block.ops[++i])) return false;
      continue;
    }
    if (!lowerOp(op)) return false;
  }
  return true;
}

bool KernelLowering::lowerOp(const ir::Op& op) {
  for (ir::ValueId id : op.operands)
    if (id >= values_.size() || values_[id].kind == Lowered::Kind::None)
      return internalError(op.range, std::string("operand of ") + ir::opKindName(op.kind) + " was not lowered");
  // A warp-specialized kernel lowers the producer's share of the statements before the
  // block's own program lowers them all again: each lowering starts from fresh results.
  for (ir::ValueId id : op.results) {
    if (id >= values_.size()) return internalError(op.range, "result id out of range");
    values_[id] = Lowered{};
  }
  retireWgmmaBefore(op);
  switch (op.kind) {
    case OpKind::Const: return lowerConst(op);
    case OpKind::ProgramId:
    case OpKind::NumPrograms: {
      static const llvm::Intrinsic::ID ctaid[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                                 llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                                 llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
      static const llvm::Intrinsic::ID nctaid[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
      const int64_t axis = ir::gridAxisOf(op);
      if (axis < 0 || axis > 2) return internalError(op.range, "grid axis out of range");
      auto id = (op.kind == OpKind::ProgramId ? ctaid : nctaid)[axis];
      Lowered& r = values_[op.results[0]];
      r.kind = Lowered::Kind::Scalar;
      r.values = {entry_.CreateIntrinsic(id, {}, {})};
      return true;
    }
    case OpKind::Binary:
    case OpKind::Compare:
    case OpKind::Unary:
    case OpKind::Fma:
    case OpKind::Select:
    case OpKind::Cast: return lowerElementwise(op);
    case OpKind::Splat: return lowerSplat(op);
    case OpKind::Iota: return lowerIota(op);
    case OpKind::Broadcast: return lowerBroadcast(op);
    case OpKind::ConvertLayout:
    case OpKind::Reshape: return lowerConvertLayout(op);
    case OpKind::Reduce: return lowerReduce(op);
    case OpKind::ReduceAll: return lowerReduceAll(op);
    case OpKind::AllocShared: {
      auto it = sharedBuffers_.find(&op);
      if (it == sharedBuffers_.end()) return internalError(op.range, "shared buffer was not planned");
      const ir::Type& t = fn_.typeOf(op.results[0]);
      Lowered& r = values_[op.results[0]];
      r.kind = Lowered::Kind::Shared;
      r.base = it->second;
      r.space = ir::MemSpace::Shared;
      int64_t stride = 1;
      r.extents.assign(t.shape.size(), nullptr);
      r.strides.assign(t.shape.size(), nullptr);
      for (size_t d = t.shape.size(); d-- > 0;) {
        r.extents[d] = b_.getInt32(static_cast<uint32_t>(t.shape[d]));
        r.strides[d] = b_.getInt64(static_cast<uint64_t>(stride));
        stride *= t.shape[d];
      }
      return true;
    }
    case OpKind::View: return lowerView(op);
    case OpKind::Load: return lowerLoad(op);
    case OpKind::Store: return lowerStore(op);
    case OpKind::Dot: return lowerDot(op);
    case OpKind::Barrier: barrier(ir::BarrierOp(op).afterMbarrierInit()); return true;
    case OpKind::CopyAsync: return lowerCopyAsync(op);
    case OpKind::CommitGroup: return lowerCommitGroup(op);
    case OpKind::WaitGroup: return lowerWaitGroup(op);
    case OpKind::MbarrierInit:
    case OpKind::MbarrierExpectTx:
    case OpKind::MbarrierArrive:
    case OpKind::MbarrierWait: return lowerMbarrier(op);
    case OpKind::CopyBulk: return lowerCopyBulk(op);
    case OpKind::For: return lowerFor(op);
    case OpKind::If: return lowerIf(op);
    case OpKind::Yield: return true;  // consumed by the enclosing For / If
    // Tags are the checker's: a tagged tile is its operand, an assertion emits nothing.
    case OpKind::TagSet: values_[op.results[0]] = values_[ir::TagSetOp(op).tile()]; return true;
    case OpKind::Assert: return true;
  }
  return internalError(op.range, "unknown op");
}

}  // namespace argus::codegen
