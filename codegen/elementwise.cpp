// Scalars and elementwise tile ops. A tile op is its scalar op applied to each
// of the thread's values. f16/bf16 arithmetic is computed in f32 and rounded
// back (round to nearest even), as the interpreter does; on the GPU a multiply
// feeding an add may contract into one fma (kernel.cpp), where the interpreter
// rounds twice.
#include <algorithm>
#include <functional>
#include <map>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen/lowering.h"

namespace argus::codegen {

using ir::DType;

bool KernelLowering::dtypeSupported(DType t) const {
  return t != DType::F8E4M3 && t != DType::F8E5M2;
}

llvm::Type* KernelLowering::regType(DType t) {
  switch (t) {
    case DType::Bool: return llvm::Type::getInt1Ty(ctx_);
    case DType::I8: case DType::U8: return llvm::Type::getInt8Ty(ctx_);
    case DType::I16: case DType::U16: return llvm::Type::getInt16Ty(ctx_);
    case DType::I32: case DType::U32: return llvm::Type::getInt32Ty(ctx_);
    case DType::I64: case DType::U64: return llvm::Type::getInt64Ty(ctx_);
    case DType::F16: return llvm::Type::getHalfTy(ctx_);
    case DType::BF16: return llvm::Type::getBFloatTy(ctx_);
    case DType::F32: return llvm::Type::getFloatTy(ctx_);
    case DType::F64: return llvm::Type::getDoubleTy(ctx_);
    case DType::F8E4M3: case DType::F8E5M2: return llvm::Type::getInt8Ty(ctx_);  // rejected earlier
  }
  return llvm::Type::getInt32Ty(ctx_);
}

llvm::Type* KernelLowering::memType(DType t) {
  return t == DType::Bool ? llvm::Type::getInt8Ty(ctx_) : regType(t);
}

llvm::Value* KernelLowering::toMemory(llvm::Value* v, DType t) {
  return t == DType::Bool ? b_.CreateZExt(v, b_.getInt8Ty()) : v;
}

llvm::Value* KernelLowering::toMemoryBits(llvm::Value* v, DType t) {
  llvm::Value* data = toMemory(v, t);
  if (!data->getType()->isFloatingPointTy()) return data;
  return b_.CreateBitCast(data, b_.getIntNTy(data->getType()->getPrimitiveSizeInBits()));
}

// The 32-bit register a 16-bit value was read from by narrowPairs (bitcast(trunc(word)) or
// bitcast(trunc(word >> 16)); *high says which half), or null.
llvm::Value* KernelLowering::packedHalf(llvm::Value* v, bool* high) {
  auto* cast = llvm::dyn_cast<llvm::BitCastInst>(v);
  auto* trunc = cast ? llvm::dyn_cast<llvm::TruncInst>(cast->getOperand(0)) : nullptr;
  if (!trunc || !trunc->getOperand(0)->getType()->isIntegerTy(32)) return nullptr;
  llvm::Value* word = trunc->getOperand(0);
  auto* shift = llvm::dyn_cast<llvm::BinaryOperator>(word);
  auto* amount = shift ? llvm::dyn_cast<llvm::ConstantInt>(shift->getOperand(1)) : nullptr;
  *high = shift && shift->getOpcode() == llvm::Instruction::LShr && amount && amount->getZExtValue() == 16;
  return *high ? shift->getOperand(0) : word;
}

// Two 16-bit floats as one 32-bit word, lo in the low half. When both were just
// narrowed from f32, one cvt.rn.{bf16,f16}x2.f32 does the two conversions and the
// packing (instead of two cvts and a permute): softmax's p and the GEMM epilogues.
llvm::Value* KernelLowering::packHalfPair(llvm::Value* lo, llvm::Value* hi, DType t) {
  auto narrowedFrom = [](llvm::Value* v) -> llvm::Value* {
    auto* trunc = llvm::dyn_cast<llvm::FPTruncInst>(v);
    return trunc && trunc->getSrcTy()->isFloatTy() ? trunc->getOperand(0) : nullptr;
  };
  // Two halves of one packed conversion (narrowPairs) are that conversion's register.
  bool loHigh = false, hiHigh = false;
  llvm::Value* word = packedHalf(lo, &loHigh);
  if (word && !loHigh && packedHalf(hi, &hiHigh) == word && hiHigh) return word;
  llvm::Value* lo32 = narrowedFrom(lo);
  llvm::Value* hi32 = narrowedFrom(hi);
  if (lo32 && hi32 && (t == DType::BF16 || t == DType::F16))
    return inlinePtx(b_.getInt32Ty(), std::string("cvt.rn.") + (t == DType::BF16 ? "bf16x2" : "f16x2") + ".f32 $0, $1, $2;",
                     "=r,f,f", {hi32, lo32}, false);
  llvm::Value* loBits = b_.CreateZExt(toMemoryBits(lo, t), b_.getInt32Ty());
  llvm::Value* hiBits = b_.CreateZExt(toMemoryBits(hi, t), b_.getInt32Ty());
  return b_.CreateOr(loBits, b_.CreateShl(hiBits, b_.getInt32(16)));
}

llvm::Value* KernelLowering::fromMemoryAt(llvm::IRBuilderBase& b, llvm::Value* v, DType t) {
  return t == DType::Bool ? b.CreateICmpNE(v, b.getInt8(0)) : v;
}

llvm::Value* KernelLowering::constant(DType t, int64_t i, double f) {
  llvm::Type* ty = regType(t);
  if (t == DType::Bool) return llvm::ConstantInt::get(ty, i != 0 ? 1 : 0);
  if (ir::isFloat(t)) return llvm::ConstantFP::get(ty, f);
  return llvm::ConstantInt::get(ty, static_cast<uint64_t>(i), ir::isSigned(t));
}

size_t KernelLowering::valueCount(const ir::Type& t) {
  if (!t.isTile()) return 1;
  return static_cast<size_t>(ir::Distribution::of(t.layout, fn_.numWarps).valuesPerThread);
}

std::vector<llvm::Value*> KernelLowering::elementsOf(ir::ValueId id, size_t count) {
  const Lowered& lv = values_[id];
  if (lv.kind == Lowered::Kind::Scalar && lv.values.size() == 1) return std::vector<llvm::Value*>(count, lv.values[0]);
  if (lv.values.size() == count) return lv.values;
  return {};
}

bool KernelLowering::lowerConst(const ir::Op& op) {
  const ir::Type& t = fn_.typeOf(op.results[0]);
  if (!dtypeSupported(t.dtype)) return unsupported(op, std::string("constants of type ") + ir::dtypeName(t.dtype));
  Lowered& r = values_[op.results[0]];
  r.kind = Lowered::Kind::Scalar;
  const ir::ConstOp constant_(op);
  r.values = {constant(t.dtype, constant_.intValue(), constant_.floatValue())};
  return true;
}

namespace {

bool isTranscendental(const ir::Op& op) {
  if (op.kind == ir::OpKind::Binary) return ir::BinaryOp(op).binaryKind() == ir::BinaryKind::Pow;
  if (op.kind != ir::OpKind::Unary) return false;
  switch (ir::UnaryOp(op).unaryKind()) {
    case ir::UnaryKind::Exp: case ir::UnaryKind::Exp2: case ir::UnaryKind::Log: case ir::UnaryKind::Log2:
    case ir::UnaryKind::Tanh: case ir::UnaryKind::Erf: case ir::UnaryKind::Sin: case ir::UnaryKind::Cos:
      return true;
    default:
      return false;
  }
}

std::string opDescription(const ir::Op& op) {
  if (op.kind == ir::OpKind::Binary) return ir::binaryKindName(ir::BinaryOp(op).binaryKind());
  if (op.kind == ir::OpKind::Unary) return ir::unaryKindName(ir::UnaryOp(op).unaryKind());
  return ir::opKindName(op.kind);
}

using Users = std::map<ir::ValueId, std::vector<const ir::Op*>>;

void collectUsers(const ir::Block& block, Users& users) {
  for (const auto& op : block.ops) {
    for (ir::ValueId operand : op->operands) users[operand].push_back(op.get());
    for (const ir::Block& region : op->regions) collectUsers(region, users);
  }
}

// Whether every use of `id`, followed through sums (along an axis or whole), products,
// quotients and broadcasts, ends in a cast to a 16-bit float: a row softmax's exp, whose values are
// summed into the divisor and divided by it before the cast to bf16.
bool endsInNarrowing(const ir::Function& fn, const Users& users, ir::ValueId id, int depth) {
  auto it = users.find(id);
  if (depth > 8 || it == users.end() || it->second.empty()) return false;
  for (const ir::Op* op : it->second) {
    if (op->results.size() != 1) return false;
    if (op->kind == ir::OpKind::Cast) {
      const DType to = fn.typeOf(op->results[0]).dtype;
      if (to != DType::BF16 && to != DType::F16) return false;
      continue;
    }
    const bool summed = (op->kind == ir::OpKind::Reduce || op->kind == ir::OpKind::ReduceAll) &&
                        ir::reduceKindOf(*op) == ir::ReduceKind::Sum;
    const bool scaled = op->kind == ir::OpKind::Binary &&
                        (ir::BinaryOp(*op).binaryKind() == ir::BinaryKind::Mul || ir::BinaryOp(*op).binaryKind() == ir::BinaryKind::Div);
    const bool spread = op->kind == ir::OpKind::Splat || op->kind == ir::OpKind::Broadcast;  // the same values
    if (!(summed || scaled || spread) || !endsInNarrowing(fn, users, op->results[0], depth + 1)) return false;
  }
  return true;
}

// An f32 exp whose every use, through sums, products and quotients, ends in a cast to
// bf16 or f16 is ex2.approx.ftz(x * log2(e)), as Triton computes every f32 exp: relative
// error below 2^-17 for |x| < 88 (the rounding of x * log2(e) scaled by |x|, plus the
// approximation's 2^-22), far under the cast's 2^-9 or 2^-12, and an error of that size
// carries through the sums, products and quotients to the cast; results below 2^-126
// flush to 0. A row softmax in bf16 (exp(x - max) / sum, cast to bf16) then spends 2
// instructions per element on exp instead of mathExp's 23: it is the bulk of the
// instructions of a memory-bound kernel. Its quotient by the row sum is likewise a
// product with the row sum's reciprocal (lowerElementwise).
bool endsInNarrowing(const ir::Function& fn, const ir::Op& op) {
  if (op.results.size() != 1) return false;
  Users users;
  collectUsers(fn.body, users);
  return endsInNarrowing(fn, users, op.results[0], 0);
}

}  // namespace

// Whether every use of `id` casts it to a 16-bit float or sums it along an axis.
// Then an f32 exp2 is the hardware's ex2.approx.ftz alone (relative error below
// 2^-22, far under the cast's 2^-9 or 2^-12 and about the 2 ulp of f32 that a
// sum's terms carry anyway; results below 2^-126 flush to 0, an absolute error under
// 2^-126 per element): softmax's p = exp2(s - m), cast to bf16 for p @ v and summed
// in f32 for the row sum, spends no instructions on the range reduction mathExp2
// does for f32 results, nor on the denormal fix-ups of the non-ftz form.
bool KernelLowering::onlyNarrowed(ir::ValueId id) {
  if (narrowedOnly_.empty()) {
    std::vector<uint8_t> uses(fn_.values.size(), 0);  // bit 0: a 16-bit cast or a sum, bit 1: anything else
    std::function<void(const ir::Block&)> walk = [&](const ir::Block& block) {
      for (const auto& op : block.ops) {
        const bool narrowing = op->kind == ir::OpKind::Cast && !op->results.empty() &&
                               (fn_.typeOf(op->results[0]).dtype == DType::BF16 ||
                                fn_.typeOf(op->results[0]).dtype == DType::F16);
        const bool summed = op->kind == ir::OpKind::Reduce && ir::reduceKindOf(*op) == ir::ReduceKind::Sum;
        for (ir::ValueId operand : op->operands) uses[operand] |= narrowing || summed ? 1 : 2;
        for (const ir::Block& region : op->regions) walk(region);
      }
    };
    walk(fn_.body);
    narrowedOnly_.resize(fn_.values.size());
    for (size_t v = 0; v < uses.size(); ++v) narrowedOnly_[v] = uses[v] == 1;
  }
  return id < narrowedOnly_.size() && narrowedOnly_[id];
}

bool KernelLowering::lowerElementwise(const ir::Op& op) {
  const ir::Type& resultType = fn_.typeOf(op.results[0]);
  // The dtype the op computes in: its operand's (Compare and Select differ from the result).
  DType operandType = fn_.typeOf(op.operands[op.kind == ir::OpKind::Select ? 1 : 0]).dtype;
  for (DType t : {resultType.dtype, operandType})
    if (!dtypeSupported(t)) return unsupported(op, std::string("arithmetic on ") + ir::dtypeName(t));
  if (operandType == DType::F64 && isTranscendental(op))
    return unsupported(op, opDescription(op) + " on f64",
                       "NVPTX has no f64 math library; compute it in f32 with cast(x, f32)");

  size_t count = valueCount(resultType);
  std::vector<std::vector<llvm::Value*>> operands;
  for (ir::ValueId id : op.operands) {
    operands.push_back(elementsOf(id, count));
    if (operands.back().size() != count)
      return internalError(op.range, std::string("operand layouts of ") + ir::opKindName(op.kind) + " disagree");
  }
  std::vector<llvm::Value*> results(count, nullptr);
  const bool expApproximate = op.kind == ir::OpKind::Unary && ir::UnaryOp(op).unaryKind() == ir::UnaryKind::Exp &&
                              operandType == DType::F32 && endsInNarrowing(fn_, op);
  // x / s with one divisor for every value of this thread (a scalar or a row statistic the
  // thread holds once), the quotient ending in a 16-bit cast: x * (1 / s), the reciprocal
  // correctly rounded once per thread (docs/language.md, "Dtypes"; within 1.5 ulp of f32).
  llvm::Value* reciprocal = nullptr;
  if (op.kind == ir::OpKind::Binary && ir::BinaryOp(op).binaryKind() == ir::BinaryKind::Div && operandType == DType::F32 &&
      count > 1 && operands.size() == 2 &&
      std::all_of(operands[1].begin(), operands[1].end(), [&](llvm::Value* d) { return d == operands[1][0]; }) &&
      endsInNarrowing(fn_, op))
    reciprocal = b_.CreateFDiv(f32(1.0), operands[1][0], "reciprocal");
  if (narrowsInPairs(op, operandType, resultType)) {
    narrowPairs(operands[0], resultType.dtype, results);
    count = 0;
  }
  for (size_t v = 0; v < count; ++v) {
    switch (op.kind) {
      case ir::OpKind::Binary:
        results[v] = reciprocal ? b_.CreateFMul(operands[0][v], reciprocal)
                                : emitBinary(ir::BinaryOp(op).binaryKind(), operandType, operands[0][v], operands[1][v]);
        break;
      case ir::OpKind::Compare: results[v] = emitCompare(ir::CompareOp(op).cmpKind(), operandType, operands[0][v], operands[1][v]); break;
      case ir::OpKind::Unary:
        if (ir::UnaryOp(op).unaryKind() == ir::UnaryKind::Exp && operandType == DType::F32 && expApproximate) {
          results[v] = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {},
                                          {b_.CreateFMul(operands[0][v], f32(1.4426950408889634))});
          break;
        }
        results[v] = ir::UnaryOp(op).unaryKind() == ir::UnaryKind::Exp2 && operandType == DType::F32 && onlyNarrowed(op.results[0])
                         ? b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {operands[0][v]})
                         : emitUnary(ir::UnaryOp(op).unaryKind(), operandType, operands[0][v]);
        break;
      case ir::OpKind::Fma: results[v] = emitFma(operandType, operands[0][v], operands[1][v], operands[2][v]); break;
      case ir::OpKind::Select: results[v] = b_.CreateSelect(operands[0][v], operands[1][v], operands[2][v]); break;
      case ir::OpKind::Cast:
        results[v] = operandType == DType::BF16 && resultType.dtype == DType::F32
                         ? widenPackedBf16(operands[0][v])
                         : emitCast(operandType, resultType.dtype, operands[0][v]);
        break;
      default: return internalError(op.range, "not an elementwise op");
    }
    if (!results[v]) return internalError(op.range, "cannot lower " + opDescription(op) + " on " + ir::dtypeName(operandType));
  }
  Lowered& r = values_[op.results[0]];
  r.kind = resultType.isTile() ? Lowered::Kind::Tile : Lowered::Kind::Scalar;
  r.values = std::move(results);
  return true;
}

// An f32 tile in an mma or wgmma layout cast to bf16 or f16: its values pair up (e = 0, 1
// of each row, the register order of the tensor cores), and one cvt.rn.{bf16x2,f16x2}
// converts a pair. Each half is read back from that register (packHalfPair then reuses it
// whole), so a p that feeds both a tensor-core operand and cast(p, f32) is converted once,
// and the widening is a shift instead of another conversion (on the conversion unit that
// exp2 also needs).
bool KernelLowering::narrowsInPairs(const ir::Op& op, DType from, const ir::Type& to) const {
  return op.kind == ir::OpKind::Cast && from == DType::F32 && (to.dtype == DType::BF16 || to.dtype == DType::F16) &&
         to.isTile() && to.layout.isMma() && to.layout.reducedMask == 0;
}

void KernelLowering::narrowPairs(const std::vector<llvm::Value*>& in, DType t, std::vector<llvm::Value*>& out) {
  const std::string text = std::string("cvt.rn.") + (t == DType::BF16 ? "bf16x2" : "f16x2") + ".f32 $0, $1, $2;";
  for (size_t v = 0; v + 1 < in.size(); v += 2) {
    llvm::Value* word = inlinePtx(b_.getInt32Ty(), text, "=r,f,f", {in[v + 1], in[v]}, false);
    llvm::Value* high = b_.CreateLShr(word, b_.getInt32(16));
    out[v] = b_.CreateBitCast(b_.CreateTrunc(word, b_.getInt16Ty()), regType(t));
    out[v + 1] = b_.CreateBitCast(b_.CreateTrunc(high, b_.getInt16Ty()), regType(t));
  }
}

// bf16 -> f32 of a half that narrowPairs left in a register: the f32 is that half moved to
// the top 16 bits, one shift or mask of the register (not an extract, then a conversion).
llvm::Value* KernelLowering::widenPackedBf16(llvm::Value* x) {
  bool high = false;
  llvm::Value* word = packedHalf(x, &high);
  if (!word) return emitCast(DType::BF16, DType::F32, x);
  llvm::Value* bits = high ? b_.CreateAnd(word, b_.getInt32(0xFFFF0000u)) : b_.CreateShl(word, b_.getInt32(16));
  return b_.CreateBitCast(bits, b_.getFloatTy());
}

llvm::Value* KernelLowering::widenToF32(llvm::Value* x, DType t) {
  return isHalfLike(t) ? b_.CreateFPExt(x, b_.getFloatTy()) : x;
}

llvm::Value* KernelLowering::narrowFromF32(llvm::Value* x, DType t) {
  return isHalfLike(t) ? b_.CreateFPTrunc(x, regType(t)) : x;
}

llvm::Value* KernelLowering::emitBinary(ir::BinaryKind kind, DType t, llvm::Value* a, llvm::Value* b) {
  using K = ir::BinaryKind;
  if (ir::isFloat(t)) {
    a = widenToF32(a, t);
    b = widenToF32(b, t);
    llvm::Value* r = nullptr;
    switch (kind) {
      case K::Add: r = b_.CreateFAdd(a, b); break;
      case K::Sub: r = b_.CreateFSub(a, b); break;
      case K::Mul: r = b_.CreateFMul(a, b); break;
      case K::Div: r = b_.CreateFDiv(a, b); break;
      case K::Rem: {
        // C fmod: a - trunc(a / b) * b, the product-difference with one rounding.
        llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, b_.CreateFDiv(a, b));
        r = b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {b_.CreateFNeg(q), b, a});
        break;
      }
      case K::Min: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, b); break;
      case K::Max: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, b); break;
      case K::Pow: r = a->getType()->isFloatTy() ? mathPow(a, b) : nullptr; break;
      default: return nullptr;
    }
    return r ? narrowFromF32(r, t) : nullptr;
  }
  bool sign = ir::isSigned(t);
  switch (kind) {
    case K::Add: return b_.CreateAdd(a, b);
    case K::Sub: return b_.CreateSub(a, b);
    case K::Mul: return b_.CreateMul(a, b);
    case K::Div: return sign ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
    case K::Rem: return sign ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
    case K::Min: return b_.CreateBinaryIntrinsic(sign ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
    case K::Max: return b_.CreateBinaryIntrinsic(sign ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
    case K::And: return b_.CreateAnd(a, b);
    case K::Or: return b_.CreateOr(a, b);
    case K::Xor: return b_.CreateXor(a, b);
    case K::Shl: return b_.CreateShl(a, b);
    case K::Shr: return sign ? b_.CreateAShr(a, b) : b_.CreateLShr(a, b);
    case K::Pow: return nullptr;  // floats only (verified)
  }
  return nullptr;
}

llvm::Value* KernelLowering::emitCompare(ir::CmpKind kind, DType t, llvm::Value* a, llvm::Value* b) {
  using K = ir::CmpKind;
  using P = llvm::CmpInst::Predicate;
  if (ir::isFloat(t)) {
    a = widenToF32(a, t);
    b = widenToF32(b, t);
    // Ordered except !=, which is true for NaN (as in C).
    P p = kind == K::Eq ? P::FCMP_OEQ : kind == K::Ne ? P::FCMP_UNE : kind == K::Lt ? P::FCMP_OLT
        : kind == K::Le ? P::FCMP_OLE : kind == K::Gt ? P::FCMP_OGT : P::FCMP_OGE;
    return b_.CreateFCmp(p, a, b);
  }
  bool sign = ir::isSigned(t);
  P p = kind == K::Eq ? P::ICMP_EQ : kind == K::Ne ? P::ICMP_NE
      : kind == K::Lt ? (sign ? P::ICMP_SLT : P::ICMP_ULT) : kind == K::Le ? (sign ? P::ICMP_SLE : P::ICMP_ULE)
      : kind == K::Gt ? (sign ? P::ICMP_SGT : P::ICMP_UGT) : (sign ? P::ICMP_SGE : P::ICMP_UGE);
  return b_.CreateICmp(p, a, b);
}

llvm::Value* KernelLowering::emitUnary(ir::UnaryKind kind, DType t, llvm::Value* x) {
  using K = ir::UnaryKind;
  if (!ir::isFloat(t)) {
    switch (kind) {
      case K::Neg: return b_.CreateNeg(x);
      case K::Not: return b_.CreateNot(x);
      case K::Abs:
        if (!ir::isSigned(t)) return x;
        return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
      default: return nullptr;
    }
  }
  if (kind == K::Neg) return b_.CreateFNeg(x);
  if (kind == K::Abs) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  x = widenToF32(x, t);
  llvm::Value* r = nullptr;
  switch (kind) {
    case K::Sqrt: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); break;
    // 1/sqrt with both steps correctly rounded: within 1 ulp, unlike rsqrt.approx.
    case K::Rsqrt:
      r = b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
      break;
    case K::Floor: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x); break;
    case K::Ceil: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x); break;
    case K::Exp: r = mathExp(x); break;
    case K::Exp2: r = mathExp2(x); break;
    case K::Log: r = mathLog(x); break;
    case K::Log2: r = mathLog2(x); break;
    case K::Tanh: r = mathTanh(x); break;
    case K::Erf: r = mathErf(x); break;
    case K::Sin: r = mathSinCos(x, false); break;
    case K::Cos: r = mathSinCos(x, true); break;
    default: return nullptr;
  }
  return r ? narrowFromF32(r, t) : nullptr;
}

llvm::Value* KernelLowering::emitFma(DType t, llvm::Value* a, llvm::Value* b, llvm::Value* c) {
  a = widenToF32(a, t);
  b = widenToF32(b, t);
  c = widenToF32(c, t);
  llvm::Value* r = b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c});
  return narrowFromF32(r, t);
}

llvm::Value* KernelLowering::emitCast(DType from, DType to, llvm::Value* x) {
  if (from == to) return x;
  llvm::Type* toTy = regType(to);
  if (to == DType::Bool) {
    if (ir::isFloat(from)) return b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
    return b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (from == DType::Bool) return ir::isFloat(to) ? b_.CreateUIToFP(x, toTy) : b_.CreateZExt(x, toTy);
  bool fromFloat = ir::isFloat(from), toFloat = ir::isFloat(to);
  if (!fromFloat && !toFloat) {
    unsigned fromBits = x->getType()->getIntegerBitWidth(), toBits = toTy->getIntegerBitWidth();
    if (toBits < fromBits) return b_.CreateTrunc(x, toTy);
    if (toBits == fromBits) return x;  // i32 <-> u32: same bits
    return ir::isSigned(from) ? b_.CreateSExt(x, toTy) : b_.CreateZExt(x, toTy);
  }
  if (!fromFloat) return ir::isSigned(from) ? b_.CreateSIToFP(x, toTy) : b_.CreateUIToFP(x, toTy);
  if (!toFloat) {
    // Saturating conversion (NaN -> 0); f16/bf16 widen exactly to f32 first.
    x = widenToF32(x, from);
    auto id = ir::isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {toTy, x->getType()}, {x});
  }
  // float -> float. f16 <-> bf16 goes through f32 (exact widening, one rounding).
  if (isHalfLike(from) && isHalfLike(to)) return b_.CreateFPTrunc(b_.CreateFPExt(x, b_.getFloatTy()), toTy);
  if (ir::dtypeBits(to) > ir::dtypeBits(from)) return b_.CreateFPExt(x, toTy);
  return b_.CreateFPTrunc(x, toTy);
}

}  // namespace argus::codegen
