// Kernels run by the interpreter against plain C++ references.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "runtime/interp/interpreter.h"
#include "runtime/interp/numeric.h"
#include "tests/unit/interp_kernel_builder.h"

namespace argus::interp {
namespace {

using namespace testing;
using ir::CmpKind;
using ir::ReduceKind;
using ir::UnaryKind;
using K = ir::LaunchExpr::Kind;

HostTensor randomTensor(DType dt, std::vector<int64_t> shape, uint32_t seed, double lo = -2.0, double hi = 2.0) {
  HostTensor t = HostTensor::zeros(dt, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (size_t i = 0; i < t.size(); ++i) t.set(i, dist(rng));
  return t;
}

std::string describe(const std::optional<RunError>& e) { return e ? e->message : "ok"; }

// vadd: out[i] = x[i] + y[i], tiles of BLOCK, grid cdiv(N, BLOCK).
std::unique_ptr<ir::Function> makeVadd(int64_t block, int64_t warps) {
  KernelBuilder k("vadd", warps);
  ValueId x = k.tensor("x", DType::F32, {"N"});
  ValueId y = k.tensor("y", DType::F32, {"N"});
  ValueId out = k.tensor("out", DType::F32, {"N"});
  k.sizes();
  k.fn->grid[0] = k.cdiv(k.size("N"), k.constant(block));
  ValueId offset = k.mul(k.pid(0), k.i32(block));
  ValueId a = k.load(k.view(x, {offset}, {block}));
  ValueId b = k.load(k.view(y, {offset}, {block}));
  k.store(k.view(out, {offset}, {block}), k.add(a, b));
  return std::move(k.fn);
}

TEST(InterpKernels, VaddWithTail) {
  for (int64_t warps : {1, 4, 8}) {
    auto fn = makeVadd(1024, warps);
    ASSERT_EQ(ir::verify(*fn), std::vector<std::string>{});
    const int64_t n = 3001;
    HostTensor x = randomTensor(DType::F32, {n}, 1), y = randomTensor(DType::F32, {n}, 2);
    HostTensor out = HostTensor::zeros(DType::F32, {n});
    std::vector<ArgValue> args = {x, y, out};
    auto error = run(*fn, args);
    ASSERT_FALSE(error) << describe(error);
    for (int64_t i = 0; i < n; ++i) {
      float want = static_cast<float>(x.get(i)) + static_cast<float>(y.get(i));
      ASSERT_EQ(out.get(i), want) << "element " << i;
    }
  }
}

// out = where(x > 0, exp(x) * y, fma(x, y, s)) computed in dtype `dt`, plus an
// i32 tile of floor(x * 4) cast back.
std::unique_ptr<ir::Function> makeFused(DType dt) {
  KernelBuilder k("fused", 4);
  ValueId x = k.tensor("x", dt, {"N"});
  ValueId y = k.tensor("y", dt, {"N"});
  ValueId s = k.scalar("s", dt);
  ValueId out = k.tensor("out", dt, {"N"});
  ValueId idx = k.tensor("idx", DType::I32, {"N"});
  k.sizes();
  const int64_t block = 256;
  k.fn->grid[0] = k.cdiv(k.size("N"), k.constant(block));
  ValueId offset = k.mul(k.pid(0), k.i32(block));
  ValueId a = k.load(k.view(x, {offset}, {block}));
  ValueId b = k.load(k.view(y, {offset}, {block}));
  Layout layout = Layout::canonical({block});
  ValueId zero = k.splat(k.constant(0, dt), layout);
  ValueId positive = k.cmp(CmpKind::Gt, a, zero);
  ValueId left = k.mul(k.unary(UnaryKind::Exp, a), b);
  ValueId right = k.fma(a, b, k.splat(s, layout));
  k.store(k.view(out, {offset}, {block}), k.select(positive, left, right));
  ValueId scaled = k.unary(UnaryKind::Floor, k.mul(a, k.splat(k.constant(4, dt), layout)));
  k.store(k.view(idx, {offset}, {block}), k.cast(scaled, DType::I32));
  return std::move(k.fn);
}

TEST(InterpKernels, FusedElementwiseF32AndBF16) {
  for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
    SCOPED_TRACE(ir::dtypeName(dt));
    auto fn = makeFused(dt);
    ASSERT_EQ(ir::verify(*fn), std::vector<std::string>{});
    const int64_t n = 700;
    HostTensor x = randomTensor(dt, {n}, 3), y = randomTensor(dt, {n}, 4);
    HostTensor out = HostTensor::zeros(dt, {n}), idx = HostTensor::zeros(DType::I32, {n});
    std::vector<ArgValue> args = {x, y, 0.375, out, idx};
    auto error = run(*fn, args);
    ASSERT_FALSE(error) << describe(error);
    auto round = [&](float v) { return static_cast<float>(num::roundToFloat(dt, v)); };
    for (int64_t i = 0; i < n; ++i) {
      float a = static_cast<float>(x.get(i)), b = static_cast<float>(y.get(i));
      float want = a > 0 ? round(round(std::exp(a)) * b) : round(std::fma(a, b, 0.375f));
      ASSERT_EQ(out.get(i), want) << "element " << i << " a=" << a << " b=" << b;
      ASSERT_EQ(idx.getInt(i), static_cast<int64_t>(std::floor(round(a * 4.0f)))) << "element " << i;
    }
  }
}

// Row softmax over X (M, N) with N <= BN, BM rows per block.
std::unique_ptr<ir::Function> makeSoftmax(int64_t bm, int64_t bn) {
  KernelBuilder k("softmax", 4);
  ValueId x = k.tensor("x", DType::F32, {"M", "N"});
  ValueId out = k.tensor("out", DType::F32, {"M", "N"});
  k.sizes();
  k.fn->grid[0] = k.cdiv(k.size("M"), k.constant(bm));
  k.fn->requirements.push_back({k.expr(K::Le, k.size("N"), k.constant(bn)), "N <= BN", {}});
  ValueId row = k.mul(k.pid(0), k.i32(bm));
  ValueId v = k.load(k.view(x, {row, k.i32(0)}, {bm, bn}), k.f32(-std::numeric_limits<double>::infinity()));
  ValueId m = k.reduce(ReduceKind::Max, v, 1);
  ValueId e = k.unary(UnaryKind::Exp, k.bin(BinaryKind::Sub, v, k.broadcast(m)));
  ValueId s = k.reduce(ReduceKind::Sum, e, 1);
  ValueId p = k.bin(BinaryKind::Div, e, k.broadcast(s));
  k.store(k.view(out, {row, k.i32(0)}, {bm, bn}), p);
  return std::move(k.fn);
}

TEST(InterpKernels, RowSoftmax) {
  const int64_t rows = 37, cols = 200;
  for (int64_t bm : {1, 4}) {
    auto fn = makeSoftmax(bm, 256);
    ASSERT_EQ(ir::verify(*fn), std::vector<std::string>{});
    HostTensor x = randomTensor(DType::F32, {rows, cols}, 5, -4, 4);
    HostTensor out = HostTensor::zeros(DType::F32, {rows, cols});
    std::vector<ArgValue> args = {x, out};
    auto error = run(*fn, args);
    ASSERT_FALSE(error) << describe(error);
    for (int64_t r = 0; r < rows; ++r) {
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < cols; ++c) m = std::max(m, static_cast<float>(x.get(r * cols + c)));
      float sum = 0;
      std::vector<float> e(cols);
      for (int64_t c = 0; c < cols; ++c) {
        e[c] = std::exp(static_cast<float>(x.get(r * cols + c)) - m);
        sum = c == 0 ? e[c] : sum + e[c];
      }
      for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(out.get(r * cols + c), e[c] / sum) << r << ", " << c;
    }
  }
}

TEST(InterpKernels, SoftmaxRequirementIsChecked) {
  auto fn = makeSoftmax(4, 256);
  HostTensor x = HostTensor::zeros(DType::F32, {2, 300}), out = HostTensor::zeros(DType::F32, {2, 300});
  std::vector<ArgValue> args = {x, out};
  auto error = run(*fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunRequirementFailed);
  EXPECT_EQ(error->message, "requirement 'N <= BN' does not hold for M = 2, N = 300");
}

// C (M, N) = A (M, K) @ B (K, N) through shared memory, BK-wide K steps.
std::unique_ptr<ir::Function> makeGemm(DType in, int64_t bm, int64_t bn, int64_t bk, int64_t warps, bool secondBarrier = true) {
  KernelBuilder k("gemm", warps);
  ValueId a = k.tensor("A", in, {"M", "K"});
  ValueId b = k.tensor("B", in, {"K", "N"});
  ValueId c = k.tensor("C", DType::F32, {"M", "N"});
  std::vector<ValueId> sizes = k.sizes();  // M, K, N
  k.fn->grid[0] = k.cdiv(k.size("M"), k.constant(bm));
  k.fn->grid[1] = k.cdiv(k.size("N"), k.constant(bn));
  ValueId aS = k.alloc("a_s", in, {bm, bk});
  ValueId bS = k.alloc("b_s", in, {bk, bn});
  ValueId row = k.mul(k.pid(0), k.i32(bm));
  ValueId col = k.mul(k.pid(1), k.i32(bn));
  ValueId acc0 = k.splat(k.f32(0), Layout::canonical({bm, bn}));
  ValueId kTiles = k.bin(BinaryKind::Div, k.add(sizes[1], k.i32(bk - 1)), k.i32(bk));
  ValueId zero = k.i32(0);
  auto results = k.forLoop(zero, kTiles, k.i32(1), {acc0}, [&](ValueId kt, std::vector<ValueId> iters) {
    ValueId kOff = k.mul(kt, k.i32(bk));
    k.store(k.view(aS, {zero, zero}, {bm, bk}), k.load(k.view(a, {row, kOff}, {bm, bk})));
    k.store(k.view(bS, {zero, zero}, {bk, bn}), k.load(k.view(b, {kOff, col}, {bk, bn})));
    k.barrier();
    ValueId acc = k.dot(k.view(aS, {zero, zero}, {bm, bk}), k.view(bS, {zero, zero}, {bk, bn}), iters[0]);
    if (secondBarrier) k.barrier();
    return std::vector<ValueId>{acc};
  });
  k.store(k.view(c, {row, col}, {bm, bn}), results[0]);
  return std::move(k.fn);
}

TEST(InterpKernels, TiledGemm) {
  struct Case { DType in; int64_t bm, bn, bk, warps, m, n, kk; };
  for (const Case& t : {Case{DType::F32, 32, 32, 16, 4, 70, 45, 50}, Case{DType::BF16, 64, 32, 32, 4, 100, 33, 70},
                        Case{DType::F16, 16, 64, 16, 2, 17, 130, 9}}) {
    SCOPED_TRACE(std::string(ir::dtypeName(t.in)) + " M=" + std::to_string(t.m));
    auto fn = makeGemm(t.in, t.bm, t.bn, t.bk, t.warps);
    ASSERT_EQ(ir::verify(*fn), std::vector<std::string>{});
    HostTensor a = randomTensor(t.in, {t.m, t.kk}, 7), b = randomTensor(t.in, {t.kk, t.n}, 8);
    HostTensor c = HostTensor::zeros(DType::F32, {t.m, t.n});
    for (size_t i = 0; i < c.size(); ++i) c.set(i, 12345.0);  // poison: every element must be written
    std::vector<ArgValue> args = {a, b, c};
    auto error = run(*fn, args);
    ASSERT_FALSE(error) << describe(error);
    for (int64_t m = 0; m < t.m; ++m)
      for (int64_t n = 0; n < t.n; ++n) {
        float sum = 0;
        for (int64_t k = 0; k < t.kk; ++k)
          sum = std::fma(static_cast<float>(a.get(m * t.kk + k)), static_cast<float>(b.get(k * t.n + n)), sum);
        ASSERT_EQ(c.get(m * t.n + n), sum) << "C[" << m << ", " << n << "]";
      }
  }
}

TEST(InterpKernels, GemmWithoutTrailingBarrierRaces) {
  auto fn = makeGemm(DType::F32, 32, 32, 16, 4, /*secondBarrier=*/false);
  HostTensor a = randomTensor(DType::F32, {32, 40}, 9), b = randomTensor(DType::F32, {40, 32}, 10);
  HostTensor c = HostTensor::zeros(DType::F32, {32, 32});
  std::vector<ArgValue> args = {a, b, c};
  auto error = run(*fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunWriteAfterReadRace);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_NE(error->message.find("overwrites it while thread"), std::string::npos) << error->message;
  EXPECT_NE(error->message.find("a_s["), std::string::npos) << error->message;
}

// A reduction to a scalar, an if on it, and a loop-carried tile.
TEST(InterpKernels, ReduceAllIfAndLoop) {
  KernelBuilder k("misc", 2);
  ValueId x = k.tensor("x", DType::I32, {64});
  ValueId out = k.tensor("out", DType::I32, {64});
  k.sizes();
  ValueId v = k.load(k.view(x, {k.i32(0)}, {64}));
  ValueId total = k.reduceAll(ReduceKind::Sum, v);
  auto chosen = k.ifThenElse(k.cmp(CmpKind::Gt, total, k.i32(100)), {Type::scalar(DType::I32)},
                             [&] { return std::vector<ValueId>{k.i32(1)}; }, [&] { return std::vector<ValueId>{k.i32(-1)}; });
  // acc = v; for i in range(0, 5, 2): acc = acc * 2 + i
  auto acc = k.forLoop(k.i32(0), k.i32(5), k.i32(2), {v}, [&](ValueId i, std::vector<ValueId> it) {
    Layout l = Layout::canonical({64});
    return std::vector<ValueId>{k.add(k.mul(it[0], k.splat(k.i32(2), l)), k.splat(i, l))};
  });
  ValueId result = k.add(acc[0], k.splat(chosen[0], Layout::canonical({64})));
  k.store(k.view(out, {k.i32(0)}, {64}), result);
  ASSERT_EQ(ir::verify(*k.fn), std::vector<std::string>{});
  HostTensor xt = HostTensor::zeros(DType::I32, {64}), ot = HostTensor::zeros(DType::I32, {64});
  int64_t sum = 0;
  for (size_t i = 0; i < 64; ++i) {
    xt.setInt(i, static_cast<int64_t>(i) - 20);
    sum += static_cast<int64_t>(i) - 20;
  }
  std::vector<ArgValue> args = {xt, ot};
  auto error = run(*k.fn, args);
  ASSERT_FALSE(error) << describe(error);
  for (int64_t i = 0; i < 64; ++i) {
    int64_t a = i - 20;
    for (int64_t it = 0; it < 5; it += 2) a = a * 2 + it;
    EXPECT_EQ(ot.getInt(static_cast<size_t>(i)), a + (sum > 100 ? 1 : -1)) << i;
  }
}

// Iota, Broadcast of a column reduction, and ConvertLayout between distributions.
TEST(InterpKernels, ColumnSumsAndLayoutConversion) {
  KernelBuilder k("cols", 4);
  ValueId out = k.tensor("out", DType::I32, {8, 64});
  k.sizes();
  ValueId r = k.iota({8, 64}, 0), c = k.iota({8, 64}, 1);
  ValueId v = k.add(k.mul(r, k.splat(k.i32(100), Layout::canonical({8, 64}))), c);
  ValueId colSum = k.reduce(ReduceKind::Sum, v, 0);  // (1, 64), replicated over rows
  ValueId moved = k.convert(colSum, Layout::canonical({1, 64}));
  ValueId back = k.convert(moved, ir::Layout{{8, 64}, 1});
  ValueId result = k.add(v, k.broadcast(back));
  k.store(k.view(out, {k.i32(0), k.i32(0)}, {8, 64}), result);
  ASSERT_EQ(ir::verify(*k.fn), std::vector<std::string>{});
  HostTensor o = HostTensor::zeros(DType::I32, {8, 64});
  std::vector<ArgValue> args = {o};
  auto error = run(*k.fn, args);
  ASSERT_FALSE(error) << describe(error);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 64; ++j) {
      int64_t col = 0;
      for (int64_t ii = 0; ii < 8; ++ii) col += ii * 100 + j;
      EXPECT_EQ(o.getInt(static_cast<size_t>(i * 64 + j)), i * 100 + j + col);
    }
}

}  // namespace
}  // namespace argus::interp
