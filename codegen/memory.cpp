// Tiles built from thread coordinates (Splat, Iota, Broadcast) and memory:
// views, loads and stores on global tensors and shared buffers.
//
// Global accesses are predicated inline PTX (`@p ld.global` / `@p st.global`),
// as Triton emits them: an element outside the tensor is never touched, and no
// branch per element is needed. Shared loads are plain LLVM loads (always in
// bounds); shared stores are predicated on the primary owner.
#include <llvm/IR/Constants.h>
#include <llvm/IR/InlineAsm.h>

#include "codegen/lowering.h"
#include "ir/bulk.h"

namespace argus::codegen {

using ir::DType;

std::vector<llvm::Value*> KernelLowering::tileCoord(const EmittedLayout& layout, int64_t v) {
  std::vector<llvm::Value*> coord;
  const std::vector<int64_t>& offset = layout.map.valueCoord[static_cast<size_t>(v)];
  for (size_t d = 0; d < offset.size(); ++d) {
    llvm::Value* c = layout.threadCoord[d];
    if (offset[d] != 0) c = b_.CreateAdd(c, b_.getInt32(static_cast<uint32_t>(offset[d])), "", true, true);
    coord.push_back(c);
  }
  return coord;
}

bool KernelLowering::lowerSplat(const ir::Op& op) {
  const ir::Type& t = fn_.typeOf(op.results[0]);
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  r.values = elementsOf(ir::SplatOp(op).scalar(), valueCount(t));
  return true;
}

bool KernelLowering::lowerIota(const ir::Op& op) {
  const ir::Type& t = fn_.typeOf(op.results[0]);
  const EmittedLayout* layout = layoutFor(t.layout, op.range);
  if (!layout) return false;
  const auto axis = static_cast<size_t>(ir::IotaOp(op).axis());
  if (axis >= t.shape.size()) return internalError(op.range, "iota axis out of range");
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  for (int64_t v = 0; v < layout->map.numValues(); ++v) r.values.push_back(tileCoord(*layout, v)[axis]);
  return true;
}

// Each thread already holds the value: value v' of the result is the operand's
// value with the same k on the operand's non-reduced axes (ir.h, Broadcast).
bool KernelLowering::lowerBroadcast(const ir::Op& op) {
  const ir::BroadcastOp broadcast(op);
  const ir::Type& in = fn_.typeOf(broadcast.x());
  const ir::Type& out = fn_.typeOf(op.results[0]);
  ir::Distribution inDist = ir::Distribution::of(in.layout, fn_.numWarps);
  ir::Distribution outDist = ir::Distribution::of(out.layout, fn_.numWarps);
  const Lowered& src = values_[broadcast.x()];
  if (src.values.size() != static_cast<size_t>(inDist.valuesPerThread))
    return internalError(op.range, "broadcast operand has the wrong number of values");
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  for (int64_t v = 0; v < outDist.valuesPerThread; ++v) {
    // Thread 0 holds value v at the coordinate its value digits give; the
    // operand holds the same element (reduced axes at 0) under this index.
    std::vector<int64_t> c = outDist.coordinate(0, v);
    for (size_t d = 0; d < c.size(); ++d)
      if (in.layout.isReduced(d)) c[d] = 0;
    int64_t index = inDist.valueIndexOf(0, c);
    if (index < 0) return internalError(op.range, "broadcast operand does not hold an element of its result");
    r.values.push_back(src.values[static_cast<size_t>(index)]);
  }
  return true;
}

bool KernelLowering::lowerView(const ir::Op& op) {
  const Lowered& base = values_[ir::ViewOp(op).base()];
  if (base.kind != Lowered::Kind::Tensor && base.kind != Lowered::Kind::Shared)
    return internalError(op.range, "view of something that is not a tensor or a shared buffer");
  const ir::Type& t = fn_.typeOf(op.results[0]);
  if (op.operands.size() != base.extents.size() + 1 || t.shape.size() > base.extents.size())
    return internalError(op.range, "view offsets do not match the base rank");
  Lowered r = base;
  r.kind = Lowered::Kind::View;
  r.space = base.kind == Lowered::Kind::Shared ? ir::MemSpace::Shared : ir::MemSpace::Global;
  r.tileShape = t.shape;
  r.swizzle = r.space == ir::MemSpace::Shared ? t.swizzle : ir::Swizzle{};
  r.offsets.clear();
  for (size_t i = 1; i < op.operands.size(); ++i) r.offsets.push_back(values_[op.operands[i]].values[0]);
  values_[op.results[0]] = std::move(r);
  return true;
}

// Base coordinate j of tile coordinate `coord`: o[j] (+ c[j - (r - k)] on the tile's axes).
namespace {
llvm::Value* baseCoordinate(llvm::IRBuilderBase& b, const Lowered& view, const std::vector<llvm::Value*>& coord, size_t j) {
  size_t lead = view.offsets.size() - coord.size();
  if (j < lead) return view.offsets[j];
  return b.CreateAdd(view.offsets[j], coord[j - lead]);
}
}  // namespace

llvm::Value* KernelLowering::viewElementIndex(const Lowered& view, const std::vector<llvm::Value*>& coord) {
  llvm::Value* index = nullptr;
  for (size_t j = 0; j < view.offsets.size(); ++j) {
    llvm::Value* e = b_.CreateSExt(baseCoordinate(b_, view, coord, j), b_.getInt64Ty());
    llvm::Value* term = b_.CreateMul(e, view.strides[j]);
    index = index ? b_.CreateAdd(index, term) : term;
  }
  return index ? index : b_.getInt64(0);
}

llvm::Value* KernelLowering::viewInBounds(const Lowered& view, const std::vector<llvm::Value*>& coord) {
  llvm::Value* inside = nullptr;
  for (size_t j = 0; j < view.offsets.size(); ++j) {
    // Unsigned: a negative coordinate is outside too.
    llvm::Value* ok = b_.CreateICmpULT(baseCoordinate(b_, view, coord, j), view.extents[j]);
    inside = inside ? b_.CreateAnd(inside, ok) : ok;
  }
  return inside ? inside : b_.getTrue();
}

llvm::Value* KernelLowering::globalAddress(llvm::Value* base, DType t, llvm::Value* index) {
  return b_.CreateGEP(memType(t), base, index);
}

ir::Swizzle KernelLowering::swizzleOfBuffer(const llvm::Value* base) const {
  for (const auto& [op, array] : sharedBuffers_)
    if (array == base && !op->results.empty()) return fn_.typeOf(op->results[0]).swizzle;
  return {};
}

// A buffer's column panels (ir::Swizzle::place): the matrix of the last two axes is
// stored panel after panel, each `panelCols` wide (constants: LLVM makes the powers of
// two shifts and masks).
llvm::Value* KernelLowering::placeInPanels(const ir::Swizzle& swizzle, llvm::Value* index) {
  if (!swizzle.hasPanels()) return index;
  llvm::Type* ty = index->getType();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(ty, static_cast<uint64_t>(v)); };
  llvm::Value* inMatrix = b_.CreateURem(index, c(swizzle.rows * swizzle.cols));
  llvm::Value* matrixStart = b_.CreateSub(index, inMatrix);
  llvm::Value* row = b_.CreateUDiv(inMatrix, c(swizzle.cols));
  llvm::Value* col = b_.CreateURem(inMatrix, c(swizzle.cols));
  llvm::Value* panel = b_.CreateMul(b_.CreateUDiv(col, c(swizzle.panelCols)), c(swizzle.rows * swizzle.panelCols));
  llvm::Value* inPanel = b_.CreateAdd(b_.CreateMul(row, c(swizzle.panelCols)), b_.CreateURem(col, c(swizzle.panelCols)));
  return b_.CreateAdd(matrixStart, b_.CreateAdd(panel, inPanel), "placed");
}

// CuTe Swizzle<B, M, S>: index ^ (((index >> (M + S)) & (2^B - 1)) << M), on the
// panelled index.
llvm::Value* KernelLowering::applySwizzle(const ir::Swizzle& swizzle, llvm::Value* index) {
  if (swizzle.isIdentity()) return index;
  index = placeInPanels(swizzle, index);
  if (swizzle.bits == 0) return index;
  llvm::Type* ty = index->getType();
  llvm::Value* field = b_.CreateLShr(index, llvm::ConstantInt::get(ty, static_cast<uint64_t>(swizzle.base + swizzle.shift)));
  field = b_.CreateAnd(field, llvm::ConstantInt::get(ty, (uint64_t{1} << swizzle.bits) - 1));
  field = b_.CreateShl(field, llvm::ConstantInt::get(ty, static_cast<uint64_t>(swizzle.base)));
  return b_.CreateXor(index, field, "swizzled");
}

llvm::Value* KernelLowering::sharedAddress(llvm::Value* base, DType t, llvm::Value* index) {
  return b_.CreateGEP(memType(t), base, applySwizzle(swizzleOfBuffer(base), index));
}

llvm::Value* KernelLowering::swizzledSharedAddress(const Lowered& view, DType t, llvm::Value* linearIndex) {
  return b_.CreateGEP(memType(t), view.base, applySwizzle(view.swizzle, linearIndex));
}

llvm::Value* KernelLowering::scratchAddress(DType t, llvm::Value* index) {
  return b_.CreateGEP(memType(t), scratch_, index);
}

namespace {

struct AsmRegister {
  int bits;               // 16, 32 or 64 (8-bit data travels in a 16-bit register)
  const char* constraint; // "h", "r", "l"
};

AsmRegister asmRegisterFor(DType t) {
  int bits = ir::dtypeBits(t);
  if (bits <= 16) return {16, "h"};
  if (bits == 32) return {32, "r"};
  return {64, "l"};
}

// The PTX type of the memory access: u8 for 8-bit data, b16/b32/b64 otherwise.
std::string accessType(DType t) {
  int bits = ir::dtypeBits(t);
  return bits <= 8 ? "u8" : "b" + std::to_string(bits);
}

}  // namespace

llvm::Value* KernelLowering::predicatedGlobalLoad(llvm::Value* addr, DType t, llvm::Value* pred, llvm::Value* other) {
  AsmRegister reg = asmRegisterFor(t);
  llvm::Type* regTy = b_.getIntNTy(static_cast<unsigned>(reg.bits));
  llvm::Type* dataTy = memType(t);
  // `other` as the integer bits of the register.
  llvm::Value* otherBits = toMemory(other, t);
  if (dataTy->isFloatingPointTy()) otherBits = b_.CreateBitCast(otherBits, b_.getIntNTy(dataTy->getPrimitiveSizeInBits()));
  if (otherBits->getType() != regTy) otherBits = b_.CreateZExt(otherBits, regTy);
  std::string text = "mov.b" + std::to_string(reg.bits) + " $0, $3;\n\t@$2 ld.global." + accessType(t) + " $0, [$1];";
  std::string constraints = std::string("=") + reg.constraint + ",l,b," + reg.constraint;
  auto* fnTy = llvm::FunctionType::get(regTy, {addr->getType(), b_.getInt1Ty(), regTy}, false);
  auto* asmValue = llvm::InlineAsm::get(fnTy, text, constraints, /*hasSideEffects=*/true);
  llvm::Value* bits = b_.CreateCall(fnTy, asmValue, {addr, pred, otherBits});
  if (dataTy->getPrimitiveSizeInBits() != static_cast<unsigned>(reg.bits))
    bits = b_.CreateTrunc(bits, b_.getIntNTy(dataTy->getPrimitiveSizeInBits()));
  llvm::Value* data = dataTy->isFloatingPointTy() ? b_.CreateBitCast(bits, dataTy) : bits;
  return fromMemory(data, t);
}

void KernelLowering::predicatedStore(ir::MemSpace space, llvm::Value* addr, DType t, llvm::Value* value,
                                     llvm::Value* pred) {
  llvm::Value* data = toMemory(value, t);
  auto* constPred = llvm::dyn_cast_or_null<llvm::ConstantInt>(pred);
  if (!pred || (constPred && constPred->isOne())) {
    auto* store = b_.CreateStore(data, addr);
    store->setAlignment(llvm::Align(static_cast<uint64_t>(dtypeBytes(t))));
    return;
  }
  AsmRegister reg = asmRegisterFor(t);
  llvm::Type* regTy = b_.getIntNTy(static_cast<unsigned>(reg.bits));
  llvm::Value* bits = data;
  if (bits->getType()->isFloatingPointTy()) bits = b_.CreateBitCast(bits, b_.getIntNTy(bits->getType()->getPrimitiveSizeInBits()));
  if (bits->getType() != regTy) bits = b_.CreateZExt(bits, regTy);
  llvm::Value* address = addr;
  const char* addrConstraint = "l";
  const char* spaceName = "global";
  if (space == ir::MemSpace::Shared) {
    // 32-bit shared-window address.
    address = b_.CreateTrunc(b_.CreatePtrToInt(addr, b_.getInt64Ty()), b_.getInt32Ty());
    addrConstraint = "r";
    spaceName = "shared";
  }
  std::string text = std::string("@$2 st.") + spaceName + "." + accessType(t) + " [$0], $1;";
  std::string constraints = std::string(addrConstraint) + "," + reg.constraint + ",b,~{memory}";
  auto* fnTy = llvm::FunctionType::get(b_.getVoidTy(), {address->getType(), regTy, b_.getInt1Ty()}, false);
  b_.CreateCall(fnTy, llvm::InlineAsm::get(fnTy, text, constraints, /*hasSideEffects=*/true), {address, bits, pred});
}

bool KernelLowering::lowerLoad(const ir::Op& op) {
  const ir::LoadOp load(op);
  const Lowered& view = values_[load.view()];
  const ir::Type& t = fn_.typeOf(op.results[0]);
  if (view.kind != Lowered::Kind::View) return internalError(op.range, "load from something that is not a view");
  if (!dtypeSupported(t.dtype)) return unsupported(op, std::string("loads of ") + ir::dtypeName(t.dtype));
  const EmittedLayout* layout = layoutFor(t.layout, op.range);
  if (!layout) return false;
  llvm::Value* other = op.operands.size() > 1 ? values_[load.other()].values[0] : constant(t.dtype, 0, 0.0);
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  const int64_t vecElements =
      view.space == ir::MemSpace::Global ? vectorAccessElements(t.dtype, t.layout.vec) : 0;
  llvm::BasicBlock* vecMerge = nullptr;
  llvm::BasicBlock* vecDone = nullptr;
  std::vector<llvm::Value*> vecValues;
  if (vecElements > 0) {
    // A vectorized layout (vector_access.cpp): one access per group of vecElements
    // values where the tensor allows it, else the element loads below.
    llvm::BasicBlock* fast = llvm::BasicBlock::Create(ctx_, "load.vec", kernel_);
    llvm::BasicBlock* general = llvm::BasicBlock::Create(ctx_, "load.elements", kernel_);
    vecMerge = llvm::BasicBlock::Create(ctx_, "load.done", kernel_);
    b_.CreateCondBr(vectorAccessAligned(view, t.dtype, vecElements), fast, general);
    b_.SetInsertPoint(fast);
    for (int64_t v = 0; v < layout->map.numValues(); v += vecElements) {
      std::vector<llvm::Value*> coord = tileCoord(*layout, v);
      llvm::Value* addr = globalAddress(view.base, t.dtype, viewElementIndex(view, coord));
      for (llvm::Value* x : vectorGlobalLoad(addr, t.dtype, vecElements, viewInBounds(view, coord), other))
        vecValues.push_back(x);
    }
    // 8- and 16-bit data meet the element path as whole 32-bit words (packWords): half the
    // phis, and a bf16 widened after the merge is a shift of its word (widenPackedBf16).
    if (dtypeBytes(t.dtype) < 4) vecValues = packWords(vecValues, t.dtype);
    vecDone = b_.GetInsertBlock();
    b_.CreateBr(vecMerge);
    b_.SetInsertPoint(general);
  }
  for (int64_t v = 0; v < layout->map.numValues(); ++v) {
    std::vector<llvm::Value*> coord = tileCoord(*layout, v);
    llvm::Value* index = viewElementIndex(view, coord);
    if (view.space == ir::MemSpace::Global) {
      llvm::Value* addr = globalAddress(view.base, t.dtype, index);
      r.values.push_back(predicatedGlobalLoad(addr, t.dtype, viewInBounds(view, coord), other));
    } else {
      auto* load = b_.CreateLoad(memType(t.dtype), swizzledSharedAddress(view, t.dtype, index));
      load->setAlignment(llvm::Align(static_cast<uint64_t>(dtypeBytes(t.dtype))));
      r.values.push_back(fromMemory(load, t.dtype));
    }
  }
  if (vecMerge) {
    const bool packed = dtypeBytes(t.dtype) < 4;
    std::vector<llvm::Value*> elementValues = packed ? packWords(r.values, t.dtype) : r.values;
    llvm::BasicBlock* elementsDone = b_.GetInsertBlock();
    b_.CreateBr(vecMerge);
    b_.SetInsertPoint(vecMerge);
    std::vector<llvm::Value*> merged;
    for (size_t v = 0; v < elementValues.size(); ++v) {
      llvm::PHINode* phi = b_.CreatePHI(elementValues[v]->getType(), 2);
      phi->addIncoming(vecValues[v], vecDone);
      phi->addIncoming(elementValues[v], elementsDone);
      merged.push_back(phi);
    }
    r.values = packed ? unpackWords(merged, t.dtype) : merged;
  }
  return true;
}

// 8- or 16-bit elements (a multiple of 32 bits of them) as 32-bit words, little-endian, and
// back: bitcast(trunc(word >> 16 k)), the form packedHalf recognizes.
std::vector<llvm::Value*> KernelLowering::packWords(const std::vector<llvm::Value*>& elements, DType t) {
  const int64_t bits = dtypeBytes(t) * 8, perWord = 32 / bits;
  std::vector<llvm::Value*> words;
  for (size_t w = 0; w * static_cast<size_t>(perWord) < elements.size(); ++w) {
    llvm::Value* word = nullptr;
    for (int64_t k = 0; k < perWord; ++k) {
      llvm::Value* part = b_.CreateZExt(toMemoryBits(elements[w * static_cast<size_t>(perWord) + static_cast<size_t>(k)], t),
                                        b_.getInt32Ty());
      if (k) part = b_.CreateShl(part, b_.getInt32(static_cast<uint32_t>(k * bits)));
      word = word ? b_.CreateOr(word, part) : part;
    }
    words.push_back(word);
  }
  return words;
}

std::vector<llvm::Value*> KernelLowering::unpackWords(const std::vector<llvm::Value*>& words, DType t) {
  const int64_t bits = dtypeBytes(t) * 8, perWord = 32 / bits;
  llvm::Type* dataTy = memType(t);
  std::vector<llvm::Value*> elements;
  for (llvm::Value* word : words)
    for (int64_t k = 0; k < perWord; ++k) {
      llvm::Value* w = k ? b_.CreateLShr(word, b_.getInt32(static_cast<uint32_t>(k * bits))) : word;
      llvm::Value* raw = b_.CreateTrunc(w, b_.getIntNTy(static_cast<unsigned>(bits)));
      elements.push_back(fromMemory(dataTy->isFloatingPointTy() ? b_.CreateBitCast(raw, dataTy) : raw, t));
    }
  return elements;
}

bool KernelLowering::lowerStore(const ir::Op& op) {
  const ir::StoreOp store(op);
  const Lowered& view = values_[store.view()];
  const ir::Type& tileType = fn_.typeOf(store.value());
  if (view.kind != Lowered::Kind::View) return internalError(op.range, "store to something that is not a view");
  if (!tileType.isTile()) return internalError(op.range, "store of something that is not a tile");
  if (!dtypeSupported(tileType.dtype)) return unsupported(op, std::string("stores of ") + ir::dtypeName(tileType.dtype));
  const EmittedLayout* layout = layoutFor(tileType.layout, op.range);
  if (!layout) return false;
  std::vector<llvm::Value*> data = elementsOf(store.value(), static_cast<size_t>(layout->map.numValues()));
  if (data.empty()) return internalError(op.range, "stored tile has the wrong number of values");
  llvm::BasicBlock* merge = nullptr;
  if (storesInPairs(view, tileType)) {
    // A tile wholly inside the tensor: through shared memory in 16-byte rows where its rows
    // are 16-byte aligned and the kernel has the staging slices (store_staging.cpp), else,
    // with even rows, each mma pair (two adjacent columns) as one aligned 32-bit store, half
    // the instructions of the general path below.
    const bool staged = stagingBytes_ > 0 && !layout->isOwner && stagesStoreThroughShared(fn_, op, arch_);
    llvm::BasicBlock* fast = llvm::BasicBlock::Create(ctx_, staged ? "store.staged" : "store.pairs", kernel_);
    llvm::BasicBlock* general = llvm::BasicBlock::Create(ctx_, "store.general", kernel_);
    merge = llvm::BasicBlock::Create(ctx_, "store.done", kernel_);
    b_.CreateCondBr(staged ? tileInsideWithAlignedRows(view) : tileInsideWithEvenRows(view), fast, general);
    b_.SetInsertPoint(fast);
    if (staged)
      emitStagedStore(view, tileType, *layout, data);
    else
      emitPairStores(view, tileType, *layout, data);
    b_.CreateBr(merge);
    b_.SetInsertPoint(general);
    const int tmaMap = staged ? ir::tensorMapIndex(fn_, tensorMaps_, op) : -1;
    if (tmaMap >= 0 && static_cast<size_t>(tmaMap) < tensorMapArgs_.size()) {
      // A tile at the tensor's edge goes by TMA, which clips it, where the tensor's rows
      // allow it: not element by element. Inside tiles keep the 16-byte stores, which
      // measured faster on the H200 (no wait for TMA to read the slice).
      llvm::BasicBlock* tma = llvm::BasicBlock::Create(ctx_, "store.tma", kernel_);
      llvm::BasicBlock* elements = llvm::BasicBlock::Create(ctx_, "store.elements", kernel_);
      b_.CreateCondBr(rowsAlignedForTma(view, tileType.dtype), tma, elements);
      b_.SetInsertPoint(tma);
      emitStagedStore(view, tileType, *layout, data, tensorMapArgs_[static_cast<size_t>(tmaMap)]);
      b_.CreateBr(merge);
      b_.SetInsertPoint(elements);
    }
  } else if (const int64_t vecElements =
                 view.space == ir::MemSpace::Global ? vectorAccessElements(tileType.dtype, tileType.layout.vec) : 0;
             vecElements > 0) {
    // A vectorized layout (vector_access.cpp): one access per group of vecElements values
    // where the tensor allows it, else the element stores below.
    llvm::BasicBlock* fast = llvm::BasicBlock::Create(ctx_, "store.vec", kernel_);
    llvm::BasicBlock* general = llvm::BasicBlock::Create(ctx_, "store.elements", kernel_);
    merge = llvm::BasicBlock::Create(ctx_, "store.done", kernel_);
    b_.CreateCondBr(vectorAccessAligned(view, tileType.dtype, vecElements), fast, general);
    b_.SetInsertPoint(fast);
    for (int64_t v = 0; v < layout->map.numValues(); v += vecElements) {
      std::vector<llvm::Value*> coord = tileCoord(*layout, v);
      llvm::Value* inside = viewInBounds(view, coord);
      llvm::Value* pred = layout->isOwner ? b_.CreateAnd(layout->isOwner, inside) : inside;
      std::vector<llvm::Value*> group(data.begin() + v, data.begin() + v + vecElements);
      vectorGlobalStore(globalAddress(view.base, tileType.dtype, viewElementIndex(view, coord)), tileType.dtype, group,
                        pred);
    }
    b_.CreateBr(merge);
    b_.SetInsertPoint(general);
  }
  for (int64_t v = 0; v < layout->map.numValues(); ++v) {
    std::vector<llvm::Value*> coord = tileCoord(*layout, v);
    llvm::Value* index = viewElementIndex(view, coord);
    llvm::Value* pred = layout->isOwner;
    if (view.space == ir::MemSpace::Global) {
      llvm::Value* inside = viewInBounds(view, coord);
      pred = pred ? b_.CreateAnd(pred, inside) : inside;
      predicatedStore(view.space, globalAddress(view.base, tileType.dtype, index), tileType.dtype, data[v], pred);
    } else {
      predicatedStore(view.space, swizzledSharedAddress(view, tileType.dtype, index), tileType.dtype, data[v], pred);
    }
  }
  if (merge) {
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
  }
  return true;
}

void KernelLowering::emitPairStores(const Lowered& view, const ir::Type& tileType, const EmittedLayout& layout,
                                    const std::vector<llvm::Value*>& data) {
  for (int64_t v = 0; v + 1 < layout.map.numValues(); v += 2) {
    llvm::Value* address = globalAddress(view.base, tileType.dtype, viewElementIndex(view, tileCoord(layout, v)));
    llvm::Value* packed = packHalfPair(data[v], data[v + 1], tileType.dtype);
    if (layout.isOwner) {
      predicatedStore(view.space, address, ir::DType::I32, packed, layout.isOwner);
    } else {
      b_.CreateStore(packed, address)->setAlignment(llvm::Align(4));
    }
  }
}

// Stores of 16-bit mma tiles to a global view whose last two axes the tile spans (any
// leading axes are one element): the values v, v + 1 (e = 0, 1) of an mma layout are
// adjacent columns of one row.
bool KernelLowering::storesInPairs(const Lowered& view, const ir::Type& tileType) const {
  return view.space == ir::MemSpace::Global && tileType.layout.isMma() && view.offsets.size() >= 2 &&
         tileType.shape.size() == 2 && (tileType.dtype == DType::BF16 || tileType.dtype == DType::F16);
}

llvm::Value* KernelLowering::tileInside(const Lowered& view) {
  llvm::Value* ok = b_.getTrue();
  // A view of rank k < r (the tensor's rank) spans one element of each leading axis.
  const size_t lead = view.offsets.size() - view.tileShape.size();
  for (size_t d = 0; d < view.offsets.size(); ++d) {
    const int64_t extent = d < lead ? 1 : view.tileShape[d - lead];
    llvm::Value* end = b_.CreateAdd(b_.CreateSExt(view.offsets[d], b_.getInt64Ty()),
                                    b_.getInt64(static_cast<uint64_t>(extent)));
    ok = b_.CreateAnd(ok, b_.CreateICmpSLE(end, b_.CreateZExt(view.extents[d], b_.getInt64Ty())));
    ok = b_.CreateAnd(ok, b_.CreateICmpSGE(view.offsets[d], b_.getInt32(0)));
  }
  return ok;
}

// i1, block-uniform: the view lies inside its tensor, and the tensor's rows and the
// view's column offset are even (so every pair is 4-byte aligned).
llvm::Value* KernelLowering::tileInsideWithEvenRows(const Lowered& view) {
  llvm::Value* ok = tileInside(view);
  llvm::Value* odd = b_.CreateOr(view.extents.back(), view.offsets.back());
  return b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(odd, b_.getInt32(1)), b_.getInt32(0)));
}

}  // namespace argus::codegen
