// Dot on tensor cores: an accumulator in the mma layout (ir/types.h,
// LayoutKind::Mma) with 16-bit shared operands becomes, per warp and per
// 16-wide K step, ldmatrix.x4 loads of the A fragments, ldmatrix.x4.trans (or
// .x2.trans) loads of the B fragments, and mma.sync.m16n8k16 into f32.
//
// Fragment addressing (which lane points ldmatrix at which row of which block,
// checked against the PTX ISA's fragments in tests) is codegen/fragment_lanes.h.
// Each row address covers 8 consecutive 16-bit elements (16 bytes), so the
// path needs 16-byte aligned rows: the buffer's last extent a multiple of 8,
// the view's column offset a known multiple of 8, and a swizzle that moves
// whole 8-element chunks (base >= 3). Otherwise dot falls back to FMAs, and a
// 16-bit one says why (AG5021, tensorCoreProblem).
#include <numeric>
#include <optional>

#include <llvm/IR/InlineAsm.h>

#include "codegen/fragment_lanes.h"
#include "codegen/lowering.h"

namespace argus::codegen {

using ir::DType;

namespace {

// True when `id` is, by construction, a multiple of `m` (constants, sums and
// products of such).
bool knownMultipleOf(const ir::Function& fn, ir::ValueId id, int64_t m, int depth = 0) {
  if (m <= 1) return true;
  if (depth > 16 || id >= fn.values.size()) return false;
  const ir::Op* def = fn.values[id].def;
  if (!def) return false;
  switch (def->kind) {
    case ir::OpKind::Const: return ir::ConstOp(*def).intValue() % m == 0;
    case ir::OpKind::Binary: {
      const ir::BinaryOp binary(*def);
      if (binary.binaryKind() == ir::BinaryKind::Mul)
        return knownMultipleOf(fn, binary.lhs(), m, depth + 1) || knownMultipleOf(fn, binary.rhs(), m, depth + 1);
      if (binary.binaryKind() == ir::BinaryKind::Add || binary.binaryKind() == ir::BinaryKind::Sub)
        return knownMultipleOf(fn, binary.lhs(), m, depth + 1) && knownMultipleOf(fn, binary.rhs(), m, depth + 1);
      return false;
    }
    default: return false;
  }
}

// The view's column offset (its last coordinate in the buffer) is a multiple of
// 8 elements, and so are the row strides of the buffer.
bool rowsAreChunkAligned(const ir::Function& fn, ir::ValueId view) {
  const ir::Op* def = fn.values[view].def;
  if (!def || def->kind != ir::OpKind::View || def->operands.size() < 2) return false;
  const ir::Type& base = fn.typeOf(ir::ViewOp(*def).base());
  if (base.kind != ir::TypeKind::Shared || base.shape.empty() || base.shape.back() % 8 != 0) return false;
  return knownMultipleOf(fn, def->operands.back(), 8);
}

}  // namespace

bool KernelLowering::canUseTensorCores(const ir::Op& op) const { return tensorCoreProblem(op).empty(); }

// Why this dot cannot run on mma.sync ("" when it can), in the user's words.
std::string KernelLowering::tensorCoreProblem(const ir::Op& op) const {
  const ir::DotOp dot(op);
  const ir::Type& aType = fn_.typeOf(dot.a());
  const ir::Type& bType = fn_.typeOf(dot.b());
  const ir::Type& accType = fn_.typeOf(dot.acc());
  if (aType.dtype != bType.dtype || (aType.dtype != DType::BF16 && aType.dtype != DType::F16))
    return "tensor cores take bf16 or f16 operands of one type";
  if (accType.dtype != DType::F32)
    return std::string("the accumulator is ") + ir::dtypeName(accType.dtype) + ", and tensor cores accumulate in f32";
  if (aType.shape.size() != 2 || aType.shape[1] % 16 != 0)
    return "K = " + std::to_string(aType.shape.size() == 2 ? aType.shape[1] : 0) +
           " is not a multiple of 16, the K of one tensor-core step";
  for (const ir::Type* t : {&aType, &bType}) {
    const char* name = t == &aType ? "a" : "b";
    if (t->swizzle.hasPanels())
      return std::string("operand '") + name + "' is stored in column panels for TMA, which only wgmma reads (sm_90a)";
    if (!t->swizzle.isIdentity() && t->swizzle.base < 3)
      return std::string("operand '") + name + "' has swizzle=(" + std::to_string(t->swizzle.bits) + ", " +
             std::to_string(t->swizzle.base) + ", " + std::to_string(t->swizzle.shift) +
             "), which splits the 8-element rows ldmatrix reads; use M >= 3";
  }
  if (!accType.layout.isMma())
    return "no tensor-core layout fits this accumulator of shape (" + std::to_string(accType.shape[0]) + ", " +
           std::to_string(accType.shape.size() > 1 ? accType.shape[1] : 0) + ") over " +
           std::to_string(fn_.numWarps) +
           " warps (mma needs rows a multiple of 16 and columns of 8 per warp); give it layout=mma(warps=(WM, WN)) "
           "yourself";
  const char* unaligned = "the rows ldmatrix reads from operand '{0}' are not known to start 16 bytes apart: its "
                          "buffer's rows must be a multiple of 8 elements and its column offset a constant multiple "
                          "of 8";
  auto misaligned = [&](const char* name) {
    std::string text = unaligned;
    text.replace(text.find("{0}"), 3, name);
    return text;
  };
  if (aType.isTile()) {  // the P @ V case: a's accumulator-layout values are repacked as A fragments
    const ir::Layout& al = aType.layout;
    if (!al.isMma() || al.warpsN != 1 || accType.layout.warpsN != 1 || al.warpsM != accType.layout.warpsM ||
        al.reducedMask != 0)
      return "operand 'a' is a register tile in another layout than the accumulator's rows";
    return rowsAreChunkAligned(fn_, dot.b()) ? "" : misaligned("b");
  }
  if (!rowsAreChunkAligned(fn_, dot.a())) return misaligned("a");
  if (!rowsAreChunkAligned(fn_, dot.b())) return misaligned("b");
  return "";
}

llvm::Value* KernelLowering::ldmatrix(llvm::Value* sharedPtr, int count, bool transpose) {
  std::string text = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) + (transpose ? ".trans" : "") +
                     ".shared.b16 {";
  std::string constraints;
  for (int i = 0; i < count; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += "=r,";
  }
  text += "}, [$" + std::to_string(count) + "];";
  constraints += "r,~{memory}";
  std::vector<llvm::Type*> results(static_cast<size_t>(count), b_.getInt32Ty());
  llvm::Type* retTy = count == 1 ? static_cast<llvm::Type*>(b_.getInt32Ty()) : llvm::StructType::get(ctx_, results);
  auto* fnTy = llvm::FunctionType::get(retTy, {b_.getInt32Ty()}, false);
  llvm::Value* address = b_.CreatePtrToInt(sharedPtr, b_.getInt32Ty());
  return b_.CreateCall(fnTy, llvm::InlineAsm::get(fnTy, text, constraints, /*hasSideEffects=*/true), {address});
}

std::vector<llvm::Value*> KernelLowering::mmaSync(DType operandType, const std::vector<llvm::Value*>& a,
                                                  const std::vector<llvm::Value*>& b,
                                                  const std::vector<llvm::Value*>& c) {
  const char* ab = operandType == DType::BF16 ? "bf16" : "f16";
  std::string text = std::string("mma.sync.aligned.m16n8k16.row.col.f32.") + ab + "." + ab +
                     ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
  std::string constraints = "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f";
  llvm::Type* f = b_.getFloatTy();
  llvm::Type* i = b_.getInt32Ty();
  auto* retTy = llvm::StructType::get(ctx_, {f, f, f, f});
  auto* fnTy = llvm::FunctionType::get(retTy, {i, i, i, i, i, i, f, f, f, f}, false);
  std::vector<llvm::Value*> args = a;
  args.insert(args.end(), b.begin(), b.end());
  args.insert(args.end(), c.begin(), c.end());
  llvm::Value* d = b_.CreateCall(fnTy, llvm::InlineAsm::get(fnTy, text, constraints, /*hasSideEffects=*/false), args);
  std::vector<llvm::Value*> out;
  for (unsigned k = 0; k < 4; ++k) out.push_back(b_.CreateExtractValue(d, {k}));
  return out;
}

// The row-major strides of the shared buffer under view `viewId` when the
// view's own offset is a multiple of the swizzle's period (a pipeline stage, a
// tile of whole periods): then swizzle(offset + inner) = offset + swizzle(inner),
// and the in-view part, which depends only on the lane and constants, can be
// swizzled alone (in 32 bits) and hoisted out of the loop.
std::optional<std::vector<int64_t>> KernelLowering::wholePeriodStrides(const Lowered& view, ir::ValueId viewId) const {
  const ir::Op* def = fn_.values[viewId].def;
  const ir::Type* buffer = def && def->kind == ir::OpKind::View ? &fn_.typeOf(ir::ViewOp(*def).base()) : nullptr;
  if (!buffer || buffer->kind != ir::TypeKind::Shared || buffer->shape.size() < 2 ||
      view.offsets.size() != buffer->shape.size())
    return std::nullopt;
  const ir::Swizzle& s = view.swizzle;
  const int64_t period = s.isIdentity() ? 1 : int64_t{1} << (s.bits + s.base + s.shift);
  std::vector<int64_t> strides(buffer->shape.size(), 1);
  for (size_t d = strides.size() - 1; d-- > 0;) strides[d] = strides[d + 1] * buffer->shape[d + 1];
  for (size_t d = 0; d < strides.size(); ++d)
    if (!knownMultipleOf(fn_, def->operands[d + 1], period / std::gcd(period, strides[d]))) return std::nullopt;
  return strides;
}

// The element index of the view's origin in its buffer (i32).
llvm::Value* KernelLowering::viewOrigin32(const Lowered& view, const std::vector<int64_t>& strides) {
  llvm::Value* offset = b_.getInt32(0);
  for (size_t d = 0; d < strides.size(); ++d)
    offset = b_.CreateAdd(offset, b_.CreateMul(view.offsets[d], b_.getInt32(static_cast<uint32_t>(strides[d]))));
  return offset;
}

// Address of element (row, col) of a shared view, through the buffer's swizzle.
llvm::Value* KernelLowering::sharedViewElementPtr(const Lowered& view, const ir::Type& viewType, llvm::Value* row,
                                                  llvm::Value* col, ir::ValueId viewId) {
  std::optional<std::vector<int64_t>> strides = wholePeriodStrides(view, viewId);
  if (!strides) return swizzledSharedAddress(view, viewType.dtype, viewElementIndex(view, {row, col}));
  const int64_t stride = (*strides)[strides->size() - 2];
  llvm::Value* inner = applySwizzle(view.swizzle, b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(stride))), col));
  llvm::Value* index = b_.CreateZExt(b_.CreateAdd(viewOrigin32(view, *strides), inner), b_.getInt64Ty());
  return b_.CreateGEP(memType(viewType.dtype), view.base, index);
}

// The address of a fragment load at the lane's base element plus a constant
// (dr, dc). The swizzle of base + constant is usually the swizzle of the base
// XORed with one constant and plus another (the constant's low bits land in
// zero bits of every lane's base, its high bits are whole periods), which
// costs two instructions and no register instead of a full swizzle per load.
// Whether that holds is decided by trying every thread of the block at
// compile time; where it does not, the general address.
llvm::Value* KernelLowering::fragmentPtr(const Lowered& view, const ir::Type& viewType, ir::ValueId viewId,
                                         const FragmentLanes& lanes, int64_t dr, int64_t dc) {
  auto general = [&] {
    return sharedViewElementPtr(view, viewType, b_.CreateAdd(lanes.row, b_.getInt32(static_cast<uint32_t>(dr))),
                                b_.CreateAdd(lanes.col, b_.getInt32(static_cast<uint32_t>(dc))), viewId);
  };
  std::optional<std::vector<int64_t>> strides = wholePeriodStrides(view, viewId);
  if (!strides) return general();
  const ir::Swizzle& s = view.swizzle;
  const int64_t period = s.isIdentity() ? 1 : int64_t{1} << (s.bits + s.base + s.shift);
  const int64_t stride = (*strides)[strides->size() - 2];
  const int64_t c = dr * stride + dc, high = c - c % period;
  std::optional<int64_t> add, exclusive;
  bool addForm = true, xorForm = true;
  for (int64_t t = 0; t < fn_.numThreads() && (addForm || xorForm); ++t) {
    int64_t inner = lanes.rowOf(t) * stride + lanes.colOf(t);
    int64_t before = s.apply(inner), after = s.apply(inner + c);
    if (!add) add = after - before;
    if (!exclusive) exclusive = (after - high) ^ before;
    addForm = addForm && after - before == *add;
    xorForm = xorForm && ((after - high) ^ before) == *exclusive;
  }
  if (!addForm && !xorForm) return general();
  llvm::Value* base = applySwizzle(s, b_.CreateAdd(b_.CreateMul(lanes.row, b_.getInt32(static_cast<uint32_t>(stride))),
                                                   lanes.col));
  llvm::Value* inner = addForm ? b_.CreateAdd(base, b_.getInt32(static_cast<uint32_t>(*add)))
                               : b_.CreateAdd(b_.CreateXor(base, b_.getInt32(static_cast<uint32_t>(*exclusive))),
                                              b_.getInt32(static_cast<uint32_t>(high)));
  llvm::Value* offset = viewOrigin32(view, *strides);
  llvm::Value* index = b_.CreateZExt(b_.CreateAdd(offset, inner), b_.getInt64Ty());
  return b_.CreateGEP(memType(viewType.dtype), view.base, index);
}

llvm::Value* KernelLowering::laneFormulaValue(const LaneFormula& formula, llvm::Value* lane) {
  // The fields are emitted last to first and then summed first to last: the order in which
  // the hand-written formulas before this definition created them, so the PTX (its register
  // numbering) stayed byte-identical.
  std::vector<llvm::Value*> fields(formula.fields.size());
  for (size_t i = formula.fields.size(); i-- > 0;) {
    const LaneField& field = formula.fields[i];
    llvm::Value* bits = field.shift ? b_.CreateLShr(lane, b_.getInt32(static_cast<uint32_t>(field.shift))) : lane;
    // A lane id has 5 bits: a mask that keeps every bit the shift left is no mask.
    if (((field.mask + 1) << field.shift) < 32) bits = b_.CreateAnd(bits, b_.getInt32(static_cast<uint32_t>(field.mask)));
    if (field.scale > 1)
      bits = b_.CreateShl(bits, b_.getInt32(static_cast<uint32_t>(__builtin_ctzll(static_cast<uint64_t>(field.scale)))));
    fields[i] = bits;
  }
  llvm::Value* sum = nullptr;
  for (llvm::Value* bits : fields) sum = sum ? b_.CreateAdd(sum, bits) : bits;
  return sum ? sum : b_.getInt32(0);
}

// The A fragment of atom row `m`, K block `kb8` (8 columns per block, two per
// 16-wide step) from a tile in the accumulator layout: each register packs the
// pair (e = 0, 1) of one row half of one 8-column block
// (accumulatorValueOfAFragment, codegen/fragment_lanes.h).
std::vector<llvm::Value*> KernelLowering::registerAFragment(const std::vector<llvm::Value*>& values, DType dtype,
                                                            int64_t m, int64_t kb8, int64_t blocks) {
  auto pack = [&](int64_t reg) {
    size_t first = static_cast<size_t>(accumulatorValueOfAFragment(m, kb8, blocks, reg));
    return packHalfPair(values[first], values[first + 1], dtype);
  };
  return {pack(0), pack(1), pack(2), pack(3)};
}

bool KernelLowering::lowerMmaDot(const ir::Op& op) {
  const ir::DotOp dot(op);
  const Lowered& a = values_[dot.a()];
  const Lowered& b = values_[dot.b()];
  const ir::Type& aType = fn_.typeOf(dot.a());
  const ir::Type& bType = fn_.typeOf(dot.b());
  const ir::Type& accType = fn_.typeOf(dot.acc());
  const ir::Layout& layout = accType.layout;
  const int64_t rowsPerWarp = layout.parent[0] / layout.warpsM, colsPerWarp = layout.parent[1] / layout.warpsN;
  const int64_t atomsM = rowsPerWarp / 16, atomsN = colsPerWarp / 8, K = aType.shape[1];
  const size_t numValues = static_cast<size_t>(atomsM * atomsN * 4);
  std::vector<llvm::Value*> acc = elementsOf(dot.acc(), numValues);
  if (acc.size() != numValues) return internalError(op.range, "mma accumulator has the wrong number of values");

  // The warp's place in the warp grid and the lane's row/column within a 16x16 block.
  llvm::Value* tid = threadId();
  llvm::Value* lane = b_.CreateAnd(tid, b_.getInt32(31));
  llvm::Value* warp = b_.CreateLShr(tid, b_.getInt32(5));
  llvm::Value* warpM = b_.CreateUDiv(warp, b_.getInt32(static_cast<uint32_t>(layout.warpsN)));
  llvm::Value* warpN = b_.CreateURem(warp, b_.getInt32(static_cast<uint32_t>(layout.warpsN)));
  llvm::Value* rowBase = b_.CreateMul(warpM, b_.getInt32(static_cast<uint32_t>(rowsPerWarp)));
  llvm::Value* colBase = b_.CreateMul(warpN, b_.getInt32(static_cast<uint32_t>(colsPerWarp)));
  // Each lane's place in the blocks its ldmatrix loads cover (codegen/fragment_lanes.h), as
  // LLVM values (one per distinct formula) and, for fragmentPtr's compile-time proof, as
  // numbers of the thread id.
  std::vector<std::pair<const LaneFormula*, llvm::Value*>> emitted;
  auto inBlock = [&](const LaneFormula& formula) -> llvm::Value* {
    for (const auto& [seen, value] : emitted)
      if (*seen == formula) return value;
    llvm::Value* value = laneFormulaValue(formula, lane);
    emitted.emplace_back(&formula, value);
    return value;
  };
  const MatrixRowLanes aLoad = mmaOperandLanes(MmaOperandLoad::A);
  const MatrixRowLanes bLoad = mmaOperandLanes(MmaOperandLoad::BByRowsX4);
  const MatrixRowLanes bLoadX2 = mmaOperandLanes(MmaOperandLoad::BByRowsX2);
  const MatrixRowLanes tLoad = mmaOperandLanes(MmaOperandLoad::BTransposedX4);
  const MatrixRowLanes tLoadX2 = mmaOperandLanes(MmaOperandLoad::BTransposedX2);
  llvm::Value* aRowInBlock = inBlock(aLoad.row);
  llvm::Value* aColInBlock = inBlock(aLoad.col);
  llvm::Value* bRowInBlock = inBlock(bLoad.row);
  llvm::Value* bColInBlock = inBlock(bLoad.col);
  llvm::Value* tRowInBlock = inBlock(tLoad.row);
  llvm::Value* tColInBlock = inBlock(tLoad.col);

  auto split = [&](llvm::Value* v, int count) {
    std::vector<llvm::Value*> out;
    if (count == 1) return std::vector<llvm::Value*>{v};
    for (unsigned k = 0; k < static_cast<unsigned>(count); ++k) out.push_back(b_.CreateExtractValue(v, {k}));
    return out;
  };
  const bool registerA = aType.isTile();
  const bool transB = ir::DotOp(op).transB();
  const int64_t warpsN = layout.warpsN;
  auto warpRow = [=](int64_t t) { return (t / 32) / warpsN * rowsPerWarp; };
  auto warpCol = [=](int64_t t) { return (t / 32) % warpsN * colsPerWarp; };
  auto of = [](const LaneFormula& formula) { return [formula](int64_t t) { return formula.of(t % 32); }; };
  const FragmentLanes aLanes{b_.CreateAdd(rowBase, aRowInBlock), aColInBlock,
                             [=](int64_t t) { return warpRow(t) + aLoad.row.of(t % 32); }, of(aLoad.col)};
  const FragmentLanes bLanes{bRowInBlock, b_.CreateAdd(colBase, bColInBlock), of(bLoad.row),
                             [=](int64_t t) { return warpCol(t) + bLoad.col.of(t % 32); }};
  const FragmentLanes bLanesX2{inBlock(bLoadX2.row), colBase, of(bLoadX2.row),
                               [=](int64_t t) { return warpCol(t) + bLoadX2.col.of(t % 32); }};
  const FragmentLanes tLanes{b_.CreateAdd(colBase, tRowInBlock), tColInBlock,
                             [=](int64_t t) { return warpCol(t) + tLoad.row.of(t % 32); }, of(tLoad.col)};
  const FragmentLanes tLanesX2{b_.CreateAdd(colBase, inBlock(tLoadX2.row)), inBlock(tLoadX2.col),
                               [=](int64_t t) { return warpCol(t) + tLoadX2.row.of(t % 32); }, of(tLoadX2.col)};
  std::vector<llvm::Value*> aValues;
  if (registerA) aValues = elementsOf(dot.a(), static_cast<size_t>(atomsM * (K / 8) * 4));
  for (int64_t k0 = 0; k0 < K; k0 += 16) {
    std::vector<std::vector<llvm::Value*>> aFrag(static_cast<size_t>(atomsM));
    for (int64_t m = 0; m < atomsM; ++m) {
      if (registerA) {
        aFrag[static_cast<size_t>(m)] = registerAFragment(aValues, aType.dtype, m, k0 / 8, K / 8);
        continue;
      }
      aFrag[static_cast<size_t>(m)] = split(
          ldmatrix(fragmentPtr(a, aType, dot.a(), aLanes, m * 16, k0), aLoad.matrices, aLoad.transpose), aLoad.matrices);
    }
    std::vector<std::vector<llvm::Value*>> bFrag(static_cast<size_t>(atomsN));
    for (int64_t n = 0; n < atomsN && transB; n += 2) {
      bool pair = n + 1 < atomsN;
      const MatrixRowLanes& load = pair ? tLoad : tLoadX2;
      std::vector<llvm::Value*> regs = split(
          ldmatrix(fragmentPtr(b, bType, dot.b(), pair ? tLanes : tLanesX2, n * 8, k0), load.matrices, load.transpose),
          load.matrices);
      bFrag[static_cast<size_t>(n)] = {regs[0], regs[1]};
      if (pair) bFrag[static_cast<size_t>(n + 1)] = {regs[2], regs[3]};
    }
    for (int64_t n = 0; n < atomsN && !transB; n += 2) {
      bool pair = n + 1 < atomsN;
      // x2 reads matrices 0 and 1 only; lanes 16..31 still pass an in-bounds address.
      const MatrixRowLanes& load = pair ? bLoad : bLoadX2;
      std::vector<llvm::Value*> regs = split(
          ldmatrix(fragmentPtr(b, bType, dot.b(), pair ? bLanes : bLanesX2, k0, n * 8), load.matrices, load.transpose),
          load.matrices);
      bFrag[static_cast<size_t>(n)] = {regs[0], regs[1]};
      if (pair) bFrag[static_cast<size_t>(n + 1)] = {regs[2], regs[3]};
    }
    for (int64_t m = 0; m < atomsM; ++m)
      for (int64_t n = 0; n < atomsN; ++n) {
        size_t first = static_cast<size_t>((m * atomsN + n) * 4);
        std::vector<llvm::Value*> c(acc.begin() + static_cast<std::ptrdiff_t>(first),
                                    acc.begin() + static_cast<std::ptrdiff_t>(first + 4));
        std::vector<llvm::Value*> d = mmaSync(aType.dtype, aFrag[static_cast<size_t>(m)],
                                              bFrag[static_cast<size_t>(n)], c);
        std::copy(d.begin(), d.end(), acc.begin() + static_cast<std::ptrdiff_t>(first));
      }
  }
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Tile;
  r.values = std::move(acc);
  return true;
}

}  // namespace argus::codegen
