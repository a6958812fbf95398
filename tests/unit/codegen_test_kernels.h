// Reference kernels built directly with ir::Builder (no frontend), shared by
// the codegen tests: vadd, fused gelu, row softmax, tiled GEMM, and a kernel
// that touches every elementwise op.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/ops.h"

namespace argus::codegen::testing {

using namespace argus::ir;

inline LaunchExpr constExpr(int64_t v) { return LaunchExpr{LaunchExpr::Kind::Const, v, {}}; }
inline LaunchExpr sizeExpr(int64_t index) { return LaunchExpr{LaunchExpr::Kind::Size, index, {}}; }
inline LaunchExpr cdivExpr(LaunchExpr a, int64_t b) {
  return LaunchExpr{LaunchExpr::Kind::CeilDiv, 0, {std::move(a), constExpr(b)}};
}

// A kernel under construction: the function and a builder at the end of its body.
struct KernelBuilder {
  std::unique_ptr<Function> fn;
  Builder b;

  KernelBuilder(const std::string& name, int64_t warps) : fn(std::make_unique<Function>()), b(*fn, &fn->body) {
    fn->name = name;
    fn->numWarps = warps;
    for (LaunchExpr& g : fn->grid) g = constExpr(1);
  }

  int sizeIndex(const std::string& name) {
    for (size_t i = 0; i < fn->sizeNames.size(); ++i)
      if (fn->sizeNames[i] == name) return static_cast<int>(i);
    fn->sizeNames.push_back(name);
    return static_cast<int>(fn->sizeNames.size() - 1);
  }
  // dims: a size name, or a decimal constant.
  ValueId tensor(const std::string& name, DType t, const std::vector<std::string>& dims) {
    Param p{ParamKind::Tensor, name, t, {}, kNoValue, {}, {}};
    std::vector<int64_t> shape;
    for (const std::string& d : dims) {
      if (!d.empty() && d[0] >= '0' && d[0] <= '9') {
        p.dims.push_back(DimRef{std::stoll(d), -1});
        shape.push_back(std::stoll(d));
      } else {
        p.dims.push_back(DimRef{-1, sizeIndex(d)});
        shape.push_back(-1);
      }
    }
    p.value = b.addBlockArg(fn->body, Type::tensor(t, shape), name);
    fn->params.push_back(p);
    return p.value;
  }
  ValueId scalarParam(const std::string& name, DType t) {
    Param p{ParamKind::Scalar, name, t, {}, kNoValue, {}, {}};
    p.value = b.addBlockArg(fn->body, Type::scalar(t), name);
    fn->params.push_back(p);
    return p.value;
  }
  // Size parameters come last (ABI order); call after all tensors and scalars.
  void sizeParams() {
    for (const std::string& name : fn->sizeNames) {
      Param p{ParamKind::Size, name, DType::I32, {}, kNoValue, {}, {}};
      p.value = b.addBlockArg(fn->body, Type::scalar(DType::I32), name);
      fn->params.push_back(p);
    }
  }
  ValueId size(const std::string& name) {
    for (const Param& p : fn->params)
      if (p.kind == ParamKind::Size && p.name == name) return p.value;
    return kNoValue;
  }

  const Type& type(ValueId v) { return fn->typeOf(v); }
  ValueId i32(int64_t v) { return b.constInt(v, DType::I32); }
  ValueId f32(double v) { return b.constFloat(v, DType::F32); }
  ValueId programId(int axis) {
    Attrs a;
    argus::ir::ProgramIdAttrs(a).axis(axis);
    return b.make(OpKind::ProgramId, {}, Type::scalar(DType::I32), {}, a);
  }
  ValueId binary(BinaryKind k, ValueId x, ValueId y) {
    Attrs a;
    argus::ir::BinaryAttrs(a).binaryKind(k);
    return b.make(OpKind::Binary, {x, y}, type(x), {}, a);
  }
  ValueId unary(UnaryKind k, ValueId x) {
    Attrs a;
    argus::ir::UnaryAttrs(a).unaryKind(k);
    return b.make(OpKind::Unary, {x}, type(x), {}, a);
  }
  ValueId compare(CmpKind k, ValueId x, ValueId y) {
    Attrs a;
    argus::ir::CompareAttrs(a).cmpKind(k);
    Type t = type(x);
    t.dtype = DType::Bool;
    return b.make(OpKind::Compare, {x, y}, t, {}, a);
  }
  ValueId select(ValueId c, ValueId x, ValueId y) { return b.make(OpKind::Select, {c, x, y}, type(x), {}); }
  ValueId fma(ValueId x, ValueId y, ValueId z) { return b.make(OpKind::Fma, {x, y, z}, type(x), {}); }
  ValueId cast(ValueId x, DType to) {
    Attrs a;
    argus::ir::CastAttrs(a).to(to);
    Type t = type(x);
    t.dtype = to;
    return b.make(OpKind::Cast, {x}, t, {}, a);
  }
  ValueId splat(ValueId scalar, const Layout& layout) {
    return b.make(OpKind::Splat, {scalar}, Type::tile(type(scalar).dtype, layout), {});
  }
  ValueId view(ValueId base, std::vector<ValueId> offsets, std::vector<int64_t> shape) {
    const Type& bt = type(base);
    MemSpace space = bt.kind == TypeKind::Shared ? MemSpace::Shared : MemSpace::Global;
    offsets.insert(offsets.begin(), base);
    return b.make(OpKind::View, offsets, Type::view(space, bt.dtype, std::move(shape)), {});
  }
  ValueId load(ValueId view, ValueId other = kNoValue) {
    const Type& vt = type(view);
    std::vector<ValueId> operands = {view};
    if (other != kNoValue) operands.push_back(other);
    return b.make(OpKind::Load, operands, Type::tile(vt.dtype, Layout::canonical(vt.shape)), {});
  }
  void store(ValueId view, ValueId tile) { b.create(OpKind::Store, {view, tile}, {}, {}); }
  ValueId reduce(ReduceKind k, ValueId x, int axis) {
    Attrs a;
    argus::ir::ReduceAttrs(a).reduceKind(k);
    argus::ir::ReduceAttrs(a).axis(axis);
    Layout l = type(x).layout;
    l.reducedMask |= 1u << axis;
    return b.make(OpKind::Reduce, {x}, Type::tile(type(x).dtype, l), {}, a);
  }
  ValueId reduceAll(ReduceKind k, ValueId x) {
    Attrs a;
    argus::ir::ReduceAllAttrs(a).reduceKind(k);
    return b.make(OpKind::ReduceAll, {x}, Type::scalar(type(x).dtype), {}, a);
  }
  ValueId broadcast(ValueId x, uint32_t reducedMask) {
    Layout l = type(x).layout;
    l.reducedMask = reducedMask;
    return b.make(OpKind::Broadcast, {x}, Type::tile(type(x).dtype, l), {});
  }
  ValueId shared(DType t, std::vector<int64_t> shape, const std::string& name, SourceRange range = {}) {
    ValueId v = b.make(OpKind::AllocShared, {}, Type::shared(t, std::move(shape)), range);
    fn->values[v].name = name;
    return v;
  }
  void barrier() { b.create(OpKind::Barrier, {}, {}, {}); }
  void yield(std::vector<ValueId> values) { b.create(OpKind::Yield, std::move(values), {}, {}); }
};

// out[i] = x[i] + y[i], masked at N.
inline std::unique_ptr<Function> makeVadd(int64_t block = 1024, int64_t warps = 4) {
  KernelBuilder k("vadd", warps);
  ValueId x = k.tensor("x", DType::F32, {"N"});
  ValueId y = k.tensor("y", DType::F32, {"N"});
  ValueId out = k.tensor("out", DType::F32, {"N"});
  k.sizeParams();
  k.fn->grid[0] = cdivExpr(sizeExpr(0), block);
  ValueId offset = k.binary(BinaryKind::Mul, k.programId(0), k.i32(block));
  ValueId a = k.load(k.view(x, {offset}, {block}));
  ValueId b = k.load(k.view(y, {offset}, {block}));
  k.store(k.view(out, {offset}, {block}), k.binary(BinaryKind::Add, a, b));
  return std::move(k.fn);
}

// y = gelu(x * s + bias), gelu(z) = z/2 (1 + erf(z / sqrt 2)); `t` is the tensor dtype.
inline std::unique_ptr<Function> makeGelu(DType t = DType::F32, int64_t block = 512, int64_t warps = 4) {
  KernelBuilder k("gelu", warps);
  ValueId x = k.tensor("x", t, {"N"});
  ValueId bias = k.tensor("bias", t, {"N"});
  ValueId y = k.tensor("y", t, {"N"});
  ValueId s = k.scalarParam("s", DType::F32);
  k.sizeParams();
  k.fn->grid[0] = cdivExpr(sizeExpr(0), block);
  Layout layout = Layout::canonical({block});
  ValueId offset = k.binary(BinaryKind::Mul, k.programId(0), k.i32(block));
  ValueId xv = k.cast(k.load(k.view(x, {offset}, {block})), DType::F32);
  ValueId bv = k.cast(k.load(k.view(bias, {offset}, {block})), DType::F32);
  ValueId z = k.fma(xv, k.splat(s, layout), bv);
  ValueId e = k.unary(UnaryKind::Erf, k.binary(BinaryKind::Mul, z, k.splat(k.f32(0.7071067811865476), layout)));
  ValueId onePlus = k.binary(BinaryKind::Add, e, k.splat(k.f32(1.0), layout));
  ValueId g = k.binary(BinaryKind::Mul, k.binary(BinaryKind::Mul, z, k.splat(k.f32(0.5), layout)), onePlus);
  k.store(k.view(y, {offset}, {block}), k.cast(g, t));
  return std::move(k.fn);
}

// Row softmax of X (M, N) into Y, one (BM, BN) tile per block; requires N <= BN.
inline std::unique_ptr<Function> makeSoftmax(int64_t bm = 4, int64_t bn = 128, int64_t warps = 4) {
  KernelBuilder k("softmax", warps);
  ValueId x = k.tensor("X", DType::F32, {"M", "N"});
  ValueId y = k.tensor("Y", DType::F32, {"M", "N"});
  k.sizeParams();
  k.fn->grid[0] = cdivExpr(sizeExpr(0), bm);
  ValueId row = k.binary(BinaryKind::Mul, k.programId(0), k.i32(bm));
  ValueId tile = k.load(k.view(x, {row, k.i32(0)}, {bm, bn}), k.f32(-INFINITY));
  ValueId rowMax = k.broadcast(k.reduce(ReduceKind::Max, tile, 1), 0);
  ValueId e = k.unary(UnaryKind::Exp, k.binary(BinaryKind::Sub, tile, rowMax));
  ValueId rowSum = k.broadcast(k.reduce(ReduceKind::Sum, e, 1), 0);
  k.store(k.view(y, {row, k.i32(0)}, {bm, bn}), k.binary(BinaryKind::Div, e, rowSum));
  return std::move(k.fn);
}

// C (M, N) = A (M, K) @ B (K, N), (BM, BN) tiles per block, K in steps of BK
// through shared memory; `t` is the dtype of A and B, C is f32.
inline std::unique_ptr<Function> makeGemm(DType t = DType::F32, int64_t bm = 64, int64_t bn = 64, int64_t bk = 32,
                                          int64_t warps = 4) {
  KernelBuilder k("gemm", warps);
  ValueId a = k.tensor("A", t, {"M", "K"});
  ValueId bt = k.tensor("B", t, {"K", "N"});
  ValueId c = k.tensor("C", DType::F32, {"M", "N"});
  k.sizeParams();
  k.fn->grid[0] = cdivExpr(sizeExpr(0), bm);
  k.fn->grid[1] = cdivExpr(sizeExpr(2), bn);
  ValueId aS = k.shared(t, {bm, bk}, "a_s", {100, 110});
  ValueId bS = k.shared(t, {bk, bn}, "b_s", {200, 210});
  ValueId pm = k.binary(BinaryKind::Mul, k.programId(0), k.i32(bm));
  ValueId pn = k.binary(BinaryKind::Mul, k.programId(1), k.i32(bn));
  Layout accLayout = Layout::canonical({bm, bn});
  ValueId zero = k.splat(k.f32(0.0), accLayout);
  Type accType = Type::tile(DType::F32, accLayout);
  Op& loop = k.b.create(OpKind::For, {k.i32(0), k.size("K"), k.i32(bk), zero}, {accType}, {});
  Block& body = loop.regions[0];
  ValueId k0 = k.b.addBlockArg(body, Type::scalar(DType::I32), "k0");
  ValueId acc = k.b.addBlockArg(body, accType, "acc");
  ValueId result = loop.results[0];
  Block* outer = k.b.block();
  k.b.setBlock(&body);
  ValueId zeroI = k.i32(0);
  k.store(k.view(aS, {zeroI, zeroI}, {bm, bk}), k.load(k.view(a, {pm, k0}, {bm, bk})));
  k.store(k.view(bS, {zeroI, zeroI}, {bk, bn}), k.load(k.view(bt, {k0, pn}, {bk, bn})));
  k.barrier();
  ValueId next = k.b.make(OpKind::Dot, {k.view(aS, {zeroI, zeroI}, {bm, bk}), k.view(bS, {zeroI, zeroI}, {bk, bn}), acc},
                          accType, {});
  k.barrier();
  k.yield({next});
  k.b.setBlock(outer);
  k.store(k.view(c, {pm, pn}, {bm, bn}), result);
  return std::move(k.fn);
}

}  // namespace argus::codegen::testing

namespace argus::codegen::testing {

// Rows of `makeMathKernel`'s output, one per op applied to x (and y).
enum MathRow : int {
  kExp, kExp2, kLog, kLog2, kSqrt, kRsqrt, kTanh, kErf, kSin, kCos, kFloor, kCeil, kAbs, kNeg,
  kPow, kRem, kMin, kMax, kViaBf16, kViaF16, kViaI32, kWhereLess, kIntDiv, kIntRem, kFma,
  kBlockSum, kBlockMax, kNumMathRows
};

// Out (R, N)[r, i] = op_r(X[i], Y[i]) for every elementwise op (see MathRow).
inline std::unique_ptr<Function> makeMathKernel(int64_t block = 256, int64_t warps = 4) {
  KernelBuilder k("mathops", warps);
  ValueId x = k.tensor("X", DType::F32, {"N"});
  ValueId y = k.tensor("Y", DType::F32, {"N"});
  ValueId out = k.tensor("Out", DType::F32, {std::to_string(static_cast<int>(kNumMathRows)), "N"});
  k.sizeParams();
  k.fn->grid[0] = cdivExpr(sizeExpr(0), block);
  Layout layout = Layout::canonical({block});
  ValueId offset = k.binary(BinaryKind::Mul, k.programId(0), k.i32(block));
  ValueId xv = k.load(k.view(x, {offset}, {block}), k.f32(1.0));
  ValueId yv = k.load(k.view(y, {offset}, {block}), k.f32(1.0));
  std::vector<ValueId> rows(kNumMathRows, kNoValue);
  const UnaryKind unaries[] = {UnaryKind::Exp, UnaryKind::Exp2, UnaryKind::Log, UnaryKind::Log2, UnaryKind::Sqrt,
                               UnaryKind::Rsqrt, UnaryKind::Tanh, UnaryKind::Erf, UnaryKind::Sin, UnaryKind::Cos,
                               UnaryKind::Floor, UnaryKind::Ceil, UnaryKind::Abs, UnaryKind::Neg};
  for (int r = kExp; r <= kNeg; ++r) rows[r] = k.unary(unaries[r], xv);
  rows[kPow] = k.binary(BinaryKind::Pow, xv, yv);
  rows[kRem] = k.binary(BinaryKind::Rem, xv, yv);
  rows[kMin] = k.binary(BinaryKind::Min, xv, yv);
  rows[kMax] = k.binary(BinaryKind::Max, xv, yv);
  rows[kViaBf16] = k.cast(k.cast(xv, DType::BF16), DType::F32);
  rows[kViaF16] = k.cast(k.cast(xv, DType::F16), DType::F32);
  rows[kViaI32] = k.cast(k.cast(xv, DType::I32), DType::F32);
  rows[kWhereLess] = k.select(k.compare(CmpKind::Lt, xv, yv), xv, yv);
  ValueId scaled = k.cast(k.binary(BinaryKind::Mul, xv, k.splat(k.f32(100.0), layout)), DType::I32);
  ValueId seven = k.splat(k.i32(7), layout);
  rows[kIntDiv] = k.cast(k.binary(BinaryKind::Div, scaled, seven), DType::F32);
  rows[kIntRem] = k.cast(k.binary(BinaryKind::Rem, scaled, seven), DType::F32);
  rows[kFma] = k.fma(xv, yv, xv);
  rows[kBlockSum] = k.splat(k.reduceAll(ReduceKind::Sum, xv), layout);
  rows[kBlockMax] = k.splat(k.reduceAll(ReduceKind::Max, xv), layout);
  for (int r = 0; r < kNumMathRows; ++r) k.store(k.view(out, {k.i32(r), offset}, {block}), rows[r]);
  return std::move(k.fn);
}

// ColSum (1, N)[0, j] = sum over i of X[i, j] for one (bm, bn) tile per block
// column, rows in the tile only (M <= bm): a reduction over warps (axis 0).
inline std::unique_ptr<Function> makeColumnSum(int64_t bm = 64, int64_t bn = 64, int64_t warps = 4) {
  KernelBuilder k("colsum", warps);
  ValueId x = k.tensor("X", DType::F32, {"M", "N"});
  ValueId out = k.tensor("ColSum", DType::F32, {"1", "N"});
  k.sizeParams();
  k.fn->grid[0] = cdivExpr(sizeExpr(1), bn);
  ValueId col = k.binary(BinaryKind::Mul, k.programId(0), k.i32(bn));
  ValueId tile = k.load(k.view(x, {k.i32(0), col}, {bm, bn}));
  ValueId sums = k.reduce(ReduceKind::Sum, tile, 0);  // shape (1, bn), replicated over warps
  k.store(k.view(out, {k.i32(0), col}, {1, bn}), sums);
  return std::move(k.fn);
}

// Per row of a (bm, bn) tile: RowMin[i] = min_j X[i, j], RowProd[i] = prod_j X[i, j],
// the first through a layout conversion to the canonical (bm, 1) layout.
inline std::unique_ptr<Function> makeRowStats(int64_t bm = 4, int64_t bn = 8, int64_t warps = 4) {
  KernelBuilder k("rowstats", warps);
  ValueId x = k.tensor("X", DType::F32, {"M", "N"});
  ValueId rowMin = k.tensor("RowMin", DType::F32, {"M", "1"});
  ValueId rowProd = k.tensor("RowProd", DType::F32, {"M", "1"});
  k.sizeParams();
  k.fn->grid[0] = cdivExpr(sizeExpr(0), bm);
  ValueId row = k.binary(BinaryKind::Mul, k.programId(0), k.i32(bm));
  ValueId tile = k.load(k.view(x, {row, k.i32(0)}, {bm, bn}), k.f32(1.0));
  ValueId mins = k.reduce(ReduceKind::Min, tile, 1);
  ValueId converted = k.b.make(OpKind::ConvertLayout, {mins}, Type::tile(DType::F32, Layout::canonical({bm, 1})), {});
  k.store(k.view(rowMin, {row, k.i32(0)}, {bm, 1}), converted);
  k.store(k.view(rowProd, {row, k.i32(0)}, {bm, 1}), k.reduce(ReduceKind::Prod, tile, 1));
  return std::move(k.fn);
}

// Integer and control-flow coverage, one block of `block` elements per program:
//   Out[i] = (iota + Bytes[i] + sum_{t < Steps} t) * (pid even ? 2 : 3), where Mask[i]; -1 elsewhere
//   Half[i] = f16(Bytes[i]) * 0.5 (f16 tensor); Total = sum of a replicated 16-element tile of ones
inline std::unique_ptr<Function> makeIntegerKernel(int64_t block = 128, int64_t warps = 4) {
  KernelBuilder k("intops", warps);
  ValueId bytes = k.tensor("Bytes", DType::I8, {"N"});
  ValueId mask = k.tensor("Mask", DType::Bool, {"N"});
  ValueId out = k.tensor("Out", DType::I32, {"N"});
  ValueId half = k.tensor("Half", DType::F16, {"N"});
  ValueId total = k.tensor("Total", DType::F32, {"1"});
  ValueId steps = k.scalarParam("Steps", DType::I32);
  k.sizeParams();
  k.fn->grid[0] = cdivExpr(sizeExpr(0), block);
  Layout layout = Layout::canonical({block});
  ValueId pid = k.programId(0);
  ValueId offset = k.binary(BinaryKind::Mul, pid, k.i32(block));
  ValueId b8 = k.load(k.view(bytes, {offset}, {block}));
  ValueId m = k.load(k.view(mask, {offset}, {block}));
  ValueId iota = k.b.make(OpKind::Iota, {}, Type::tile(DType::I32, layout), {}, Attrs{});
  ValueId value = k.binary(BinaryKind::Add, iota, k.cast(b8, DType::I32));
  // for t in range(0, Steps, 1): s += t
  Op& loop = k.b.create(OpKind::For, {k.i32(0), steps, k.i32(1), k.i32(0)}, {Type::scalar(DType::I32)}, {});
  ValueId t = k.b.addBlockArg(loop.regions[0], Type::scalar(DType::I32), "t");
  ValueId s = k.b.addBlockArg(loop.regions[0], Type::scalar(DType::I32), "s");
  ValueId loopSum = loop.results[0];
  Block* outer = k.b.block();
  k.b.setBlock(&loop.regions[0]);
  k.yield({k.binary(BinaryKind::Add, s, t)});
  k.b.setBlock(outer);
  value = k.binary(BinaryKind::Add, value, k.splat(loopSum, layout));
  // if pid % 2 == 0: value * 2 else: value * 3
  ValueId even = k.compare(CmpKind::Eq, k.binary(BinaryKind::Rem, pid, k.i32(2)), k.i32(0));
  Op& branch = k.b.create(OpKind::If, {even}, {Type::tile(DType::I32, layout)}, {});
  ValueId scaled = branch.results[0];
  k.b.setBlock(&branch.regions[0]);
  k.yield({k.binary(BinaryKind::Mul, value, k.splat(k.i32(2), layout))});
  k.b.setBlock(&branch.regions[1]);
  k.yield({k.binary(BinaryKind::Mul, value, k.splat(k.i32(3), layout))});
  k.b.setBlock(outer);
  k.store(k.view(out, {offset}, {block}), k.select(m, scaled, k.splat(k.i32(-1), layout)));
  ValueId h = k.cast(b8, DType::F16);
  k.store(k.view(half, {offset}, {block}), k.binary(BinaryKind::Mul, h, k.splat(k.b.constFloat(0.5, DType::F16), Layout::canonical({block}))));
  Layout small = Layout::canonical({16});
  ValueId ones = k.splat(k.f32(1.0), small);
  ValueId count = k.reduceAll(ReduceKind::Sum, ones);
  k.store(k.view(total, {k.i32(0)}, {1}), k.splat(count, Layout::canonical({1})));
  return std::move(k.fn);
}

inline std::unique_ptr<Module> moduleOf(std::unique_ptr<Function> fn) {
  auto m = std::make_unique<Module>();
  m->functions.push_back(std::move(fn));
  return m;
}

}  // namespace argus::codegen::testing
