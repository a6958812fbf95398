// f32 math for the NVPTX target, which has no libm. Each function is a short,
// branch-free sequence; accuracy measured on the host against libm with the
// hardware approximation's documented worst case (ex2.approx.f32, relative
// error 2^-22) folded in:
//   exp, exp2  <= 3.5e-7 relative on [-87, 88.7] (denormal results lose precision)
//   log, log2  <= 1.4e-7 relative (denormal inputs included)
//   tanh       <= 3.0e-7 relative;  erf <= 1.3e-7 relative
//   sin, cos   <= 1.2e-7 relative to max(|result|, 1e-3) for |x| <= 1e4
//              (Cody-Waite reduction in f64; accuracy degrades beyond ~1e6)
//   pow        exp2(y * log2|x|) with the product in f64: ~1e-6 relative for |y log2 x| < 30
// The interpreter uses libm; GPU tests compare with a relative tolerance ~1e-5.
#include <cmath>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen/lowering.h"

namespace argus::codegen {

llvm::Value* KernelLowering::f32(double v) { return llvm::ConstantFP::get(b_.getFloatTy(), v); }

llvm::Value* KernelLowering::poly(llvm::Value* x, std::initializer_list<double> coeffsHighToLow) {
  llvm::Value* r = nullptr;
  for (double c : coeffsHighToLow)
    r = r ? b_.CreateIntrinsic(llvm::Intrinsic::fma, {b_.getFloatTy()}, {r, x, f32(c)}) : f32(c);
  return r;
}

namespace {

llvm::Value* fma(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}

// 2^n as an f32, for n in [-126, 127] (an i32).
llvm::Value* powerOfTwo(llvm::IRBuilderBase& b, llvm::Value* n) {
  return b.CreateBitCast(b.CreateShl(b.CreateAdd(n, b.getInt32(127)), 23), b.getFloatTy());
}

// p * 2^n for n in [-152, 128], in two exact steps so that neither factor
// leaves the normal range; only the last multiply rounds (denormal results).
llvm::Value* scaleByPowerOfTwo(llvm::IRBuilderBase& b, llvm::Value* p, llvm::Value* n) {
  llvm::Value* half = b.CreateSDiv(n, b.getInt32(2));
  llvm::Value* rest = b.CreateSub(n, half);
  return b.CreateFMul(b.CreateFMul(p, powerOfTwo(b, half)), powerOfTwo(b, rest));
}

}  // namespace

// exp(x) = 2^n * 2^(r * log2 e), n = rint(x log2 e), r = x - n ln2 (ln2 in two parts).
llvm::Value* KernelLowering::mathExp(llvm::Value* x) {
  llvm::Value* n = b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b_.CreateFMul(x, f32(1.44269504)));
  // Clamping n keeps the integer scale in range; r then carries inf, 0 and NaN through.
  n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, n, f32(-152.0)),
                               f32(128.0));
  llvm::Value* r = fma(b_, n, f32(-0.693145752), x);
  r = fma(b_, n, f32(-1.42860677e-6), r);
  llvm::Value* p = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {b_.CreateFMul(r, f32(1.44269504))});
  llvm::Value* ni = b_.CreateFPToSI(n, b_.getInt32Ty());
  return scaleByPowerOfTwo(b_, p, ni);
}

// exp2(x) = 2^n * 2^(x - n): the hardware approximation only sees |x - n| <= 1/2.
llvm::Value* KernelLowering::mathExp2(llvm::Value* x) {
  llvm::Value* n = b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, x);
  n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, n, f32(-152.0)),
                               f32(128.0));
  llvm::Value* p = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {b_.CreateFSub(x, n)});
  return scaleByPowerOfTwo(b_, p, b_.CreateFPToSI(n, b_.getInt32Ty()));
}

// Splits x > 0 into 2^e * (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), and returns
// log(1 + f) (Cephes logf polynomial); *exponent receives e as an f32.
llvm::Value* KernelLowering::logParts(llvm::Value* x, llvm::Value** exponent) {
  // Denormals: scale by 2^23 first.
  llvm::Value* tiny = b_.CreateFCmpOLT(x, f32(1.17549435e-38));
  llvm::Value* xs = b_.CreateSelect(tiny, b_.CreateFMul(x, f32(8388608.0)), x);
  llvm::Value* bits = b_.CreateBitCast(xs, b_.getInt32Ty());
  llvm::Value* e = b_.CreateSub(b_.CreateAnd(b_.CreateLShr(bits, 23), 0xff), b_.getInt32(126));
  e = b_.CreateSub(e, b_.CreateSelect(tiny, b_.getInt32(23), b_.getInt32(0)));
  llvm::Value* m = b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, 0x007fffff), 0x3f000000), b_.getFloatTy());  // [0.5, 1)
  llvm::Value* small = b_.CreateFCmpOLT(m, f32(0.70710678));
  e = b_.CreateSub(e, b_.CreateZExt(small, b_.getInt32Ty()));
  m = b_.CreateSelect(small, b_.CreateFAdd(m, m), m);
  m = b_.CreateFSub(m, f32(1.0));
  llvm::Value* z = b_.CreateFMul(m, m);
  llvm::Value* y = poly(m, {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
                            -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
  y = b_.CreateFMul(b_.CreateFMul(y, m), z);
  y = fma(b_, f32(-0.5), z, y);
  *exponent = b_.CreateSIToFP(e, b_.getFloatTy());
  return b_.CreateFAdd(m, y);
}

namespace {

// Special cases shared by log and log2: NaN and x < 0 -> NaN, 0 -> -inf, +inf -> +inf.
llvm::Value* logSpecials(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* r) {
  llvm::Type* f = b.getFloatTy();
  r = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(f)), x, r);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::get(f, 0.0)), llvm::ConstantFP::getInfinity(f, true), r);
  return b.CreateSelect(b.CreateFCmpOGE(x, llvm::ConstantFP::get(f, 0.0)), r, llvm::ConstantFP::getNaN(f));
}

}  // namespace

llvm::Value* KernelLowering::mathLog(llvm::Value* x) {
  llvm::Value* e = nullptr;
  llvm::Value* l = logParts(x, &e);
  return logSpecials(b_, x, fma(b_, e, f32(0.693147182), l));
}

llvm::Value* KernelLowering::mathLog2(llvm::Value* x) {
  llvm::Value* e = nullptr;
  llvm::Value* l = logParts(x, &e);
  return logSpecials(b_, x, fma(b_, l, f32(1.44269504), e));
}

// |x| < 0.625: odd polynomial (Cephes tanhf); else sign(x) (1 - 2 / (exp(2|x|) + 1)).
llvm::Value* KernelLowering::mathTanh(llvm::Value* x) {
  llvm::Value* a = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* s = b_.CreateFMul(x, x);
  llvm::Value* p = poly(s, {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2, 1.33314422036E-1, -3.33332819422E-1});
  llvm::Value* small = fma(b_, b_.CreateFMul(p, s), x, x);
  llvm::Value* z = mathExp(b_.CreateFAdd(a, a));
  llvm::Value* large = b_.CreateFSub(f32(1.0), b_.CreateFDiv(f32(2.0), b_.CreateFAdd(z, f32(1.0))));
  large = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  return b_.CreateSelect(b_.CreateFCmpOLT(a, f32(0.625)), small, large);
}

// Minimax approximations (N. Juffa's erff): |x| <= 0.9277: x + x * p(x^2);
// beyond: sign(x) (1 - exp(q(|x|))). q(|x|) <= -0.86 there, so exp needs no range
// reduction: ex2.approx (relative error ~2^-22) alone keeps erf within 2.5e-7, and the
// full mathExp's clamping and rescale cost GEMM epilogues registers (ptxas spilled).
llvm::Value* KernelLowering::mathErf(llvm::Value* x) {
  llvm::Value* t = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* s = b_.CreateFMul(x, x);
  // Large branch.
  llvm::Value* r = fma(b_, f32(-1.72853470e-5), t, f32(3.83197126e-4));
  llvm::Value* u = fma(b_, f32(-3.88396438e-3), t, f32(2.42546219e-2));
  r = fma(b_, r, s, u);
  r = fma(b_, r, t, f32(-1.06777877e-1));
  r = fma(b_, r, t, f32(-6.34846687e-1));
  r = fma(b_, r, t, f32(-1.28717512e-1));
  r = fma(b_, r, t, b_.CreateFNeg(t));
  llvm::Value* expR = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {b_.CreateFMul(r, f32(1.44269504))});
  llvm::Value* large = b_.CreateFSub(f32(1.0), expR);
  large = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  // Small branch.
  llvm::Value* p = poly(s, {-5.96761703e-4, 4.99119423e-3, -2.67681349e-2, 1.12819925e-1, -3.76125336e-1, 1.28379166e-1});
  llvm::Value* small = fma(b_, p, x, x);
  return b_.CreateSelect(b_.CreateFCmpOGT(t, f32(0.927734375)), large, small);
}

// Reduction by multiples of pi/2 in f64, then Cephes sinf/cosf polynomials on [-pi/4, pi/4].
llvm::Value* KernelLowering::mathSinCos(llvm::Value* x, bool cosine) {
  llvm::Type* f64 = b_.getDoubleTy();
  auto d = [&](double v) { return llvm::ConstantFP::get(f64, v); };
  llvm::Value* xd = b_.CreateFPExt(x, f64);
  llvm::Value* j = b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b_.CreateFMul(xd, d(0.63661977236758134)));
  llvm::Value* rd = fma(b_, j, d(-1.5707963267341256), xd);
  rd = fma(b_, j, d(-6.077100506506192e-11), rd);
  llvm::Value* r = b_.CreateFPTrunc(rd, b_.getFloatTy());
  llvm::Value* q = b_.CreateTrunc(b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b_.getInt64Ty(), f64}, {j}),
                                  b_.getInt32Ty());
  if (cosine) q = b_.CreateAdd(q, b_.getInt32(1));  // cos(x) = sin(x + pi/2)
  llvm::Value* z = b_.CreateFMul(r, r);
  llvm::Value* sinPoly = poly(z, {-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1});
  llvm::Value* sinR = fma(b_, b_.CreateFMul(sinPoly, z), r, r);
  llvm::Value* cosR = poly(z, {2.443315711809948E-5, -1.388731625493765E-3, 4.166664568298827E-2, -0.5, 1.0});
  llvm::Value* odd = b_.CreateICmpNE(b_.CreateAnd(q, 1), b_.getInt32(0));
  llvm::Value* negate = b_.CreateICmpNE(b_.CreateAnd(q, 2), b_.getInt32(0));
  llvm::Value* v = b_.CreateSelect(odd, cosR, sinR);
  return b_.CreateSelect(negate, b_.CreateFNeg(v), v);
}

// pow(x, y) = 2^(y log2|x|) with the sign and special cases of C pow.
llvm::Value* KernelLowering::mathPow(llvm::Value* x, llvm::Value* y) {
  llvm::Type* f64 = b_.getDoubleTy();
  auto d = [&](double v) { return llvm::ConstantFP::get(f64, v); };
  llvm::Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* e = nullptr;
  llvm::Value* l = logParts(ax, &e);
  // log2|x| = e + l log2(e); keep e exact by multiplying in f64.
  llvm::Value* frac = b_.CreateFMul(l, f32(1.44269504));
  llvm::Value* yd = b_.CreateFPExt(y, f64);
  llvm::Value* t = b_.CreateFAdd(b_.CreateFMul(yd, b_.CreateFPExt(e, f64)), b_.CreateFMul(yd, b_.CreateFPExt(frac, f64)));
  // |x| = 0 or inf: log2 is -inf / +inf.
  llvm::Value* inf = llvm::ConstantFP::getInfinity(f64);
  llvm::Value* lg = b_.CreateSelect(b_.CreateFCmpOEQ(ax, f32(0.0)), b_.CreateFNeg(inf),
                                    b_.CreateSelect(b_.CreateFCmpOEQ(ax, llvm::ConstantFP::getInfinity(b_.getFloatTy())), inf, d(0.0)));
  llvm::Value* special = b_.CreateFCmpONE(lg, d(0.0));
  t = b_.CreateSelect(special, b_.CreateFMul(yd, lg), t);
  t = b_.CreateSelect(b_.CreateFCmpUNO(x, x), llvm::ConstantFP::getNaN(f64), t);
  // 2^t = 2^n 2^(t - n).
  llvm::Value* n = b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, t);
  n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, n, d(-152.0)), d(128.0));
  llvm::Value* r = b_.CreateFPTrunc(b_.CreateFSub(t, n), b_.getFloatTy());
  llvm::Value* p = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {r});
  llvm::Value* result = scaleByPowerOfTwo(b_, p, b_.CreateFPToSI(n, b_.getInt32Ty()));
  // Negative x: integer y keeps the magnitude (odd y negates it), other y gives NaN.
  llvm::Value* yInt = b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, y), y);
  llvm::Value* halfY = b_.CreateFMul(y, f32(0.5));
  llvm::Value* yOdd = b_.CreateAnd(yInt, b_.CreateFCmpONE(b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, halfY), halfY));
  llvm::Value* negX = b_.CreateFCmpOLT(x, f32(0.0));
  llvm::Value* signed_ = b_.CreateSelect(yOdd, b_.CreateFNeg(result), result);
  result = b_.CreateSelect(negX, b_.CreateSelect(yInt, signed_, llvm::ConstantFP::getNaN(b_.getFloatTy())), result);
  // pow(x, 0) = 1 and pow(1, y) = 1, even for NaN.
  llvm::Value* one = b_.CreateOr(b_.CreateFCmpOEQ(y, f32(0.0)), b_.CreateFCmpOEQ(x, f32(1.0)));
  return b_.CreateSelect(one, f32(1.0), result);
}

}  // namespace argus::codegen
