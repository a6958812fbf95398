// Dtype conversions and element arithmetic of the interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "runtime/interp/host_tensor.h"
#include "runtime/interp/numeric.h"

namespace argus::interp {
namespace {

using ir::DType;

uint64_t bitsOf(DType t, double v) { return num::encode(t, num::fromDouble(t, v)); }
double valueOf(DType t, uint64_t bits) { return num::decode(t, bits).f; }

TEST(Numeric, KnownEncodings) {
  EXPECT_EQ(bitsOf(DType::F16, 1.0), 0x3C00u);
  EXPECT_EQ(bitsOf(DType::F16, -2.0), 0xC000u);
  EXPECT_EQ(bitsOf(DType::F16, 0.1), 0x2E66u);
  EXPECT_EQ(bitsOf(DType::F16, 65504.0), 0x7BFFu);
  EXPECT_EQ(bitsOf(DType::F16, 65520.0), 0x7C00u);  // rounds up to inf
  EXPECT_EQ(bitsOf(DType::F16, 65519.0), 0x7BFFu);
  EXPECT_EQ(bitsOf(DType::F16, std::ldexp(1.0, -24)), 0x0001u);  // smallest subnormal
  EXPECT_EQ(bitsOf(DType::F16, std::ldexp(1.0, -25)), 0x0000u);  // tie to even: 0
  EXPECT_EQ(bitsOf(DType::F16, std::ldexp(3.0, -25)), 0x0002u);  // tie to even: 2
  EXPECT_EQ(bitsOf(DType::F16, -0.0), 0x8000u);

  EXPECT_EQ(bitsOf(DType::BF16, 1.0), 0x3F80u);
  EXPECT_EQ(bitsOf(DType::BF16, static_cast<double>(0.1f)), 0x3DCDu);
  EXPECT_EQ(bitsOf(DType::BF16, 1.0 + std::ldexp(1.0, -8)), 0x3F80u);      // tie, even stays
  EXPECT_EQ(bitsOf(DType::BF16, 1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82u);  // tie, odd rounds up
  EXPECT_TRUE(std::isnan(valueOf(DType::BF16, bitsOf(DType::BF16, std::nan("")))));

  EXPECT_EQ(bitsOf(DType::F8E4M3, 1.0), 0x38u);
  EXPECT_EQ(bitsOf(DType::F8E4M3, 448.0), 0x7Eu);
  EXPECT_EQ(bitsOf(DType::F8E4M3, 1000.0), 0x7Eu);  // saturates
  EXPECT_EQ(bitsOf(DType::F8E4M3, -1e9), 0xFEu);
  EXPECT_EQ(bitsOf(DType::F8E4M3, std::numeric_limits<double>::infinity()), 0x7Eu);
  EXPECT_EQ(bitsOf(DType::F8E4M3, std::nan("")), 0x7Fu);
  EXPECT_EQ(bitsOf(DType::F8E4M3, std::ldexp(1.0, -9)), 0x01u);  // smallest subnormal
  EXPECT_EQ(bitsOf(DType::F8E5M2, 1.0), 0x3Cu);
  EXPECT_EQ(bitsOf(DType::F8E5M2, 57344.0), 0x7Bu);
  EXPECT_EQ(bitsOf(DType::F8E5M2, 1e6), 0x7Bu);  // satfinite
  EXPECT_EQ(valueOf(DType::F8E5M2, 0x7C), std::numeric_limits<double>::infinity());
}

TEST(Numeric, EveryBitPatternRoundTrips) {
  for (DType t : {DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2}) {
    uint64_t count = ir::dtypeBits(t) == 16 ? 65536 : 256;
    for (uint64_t bits = 0; bits < count; ++bits) {
      double v = valueOf(t, bits);
      if (std::isnan(v)) continue;
      if (std::isinf(v) && t == DType::F8E5M2) continue;  // satfinite: inf does not come back
      ASSERT_EQ(bitsOf(t, v), bits) << ir::dtypeName(t) << " bits " << bits << " value " << v;
    }
  }
}

uint16_t referenceBF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

TEST(Numeric, RandomFloatsMatchReferenceRounding) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = any(rng);
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(bitsOf(DType::BF16, f), referenceBF16(f)) << f;
#ifdef __FLT16_MAX__
    _Float16 h = static_cast<_Float16>(f);
    uint16_t hb;
    std::memcpy(&hb, &h, 2);
    ASSERT_EQ(bitsOf(DType::F16, f), hb) << f;
#endif
  }
}

TEST(Numeric, IntegerSemantics) {
  std::string error;
  Elem out;
  auto i = [](int64_t v) { Elem e; e.i = v; return e; };
  ASSERT_TRUE(num::binary(ir::BinaryKind::Add, DType::I32, i(INT32_MAX), i(1), out, error));
  EXPECT_EQ(out.i, INT32_MIN);
  ASSERT_TRUE(num::binary(ir::BinaryKind::Div, DType::I32, i(-7), i(2), out, error));
  EXPECT_EQ(out.i, -3);
  ASSERT_TRUE(num::binary(ir::BinaryKind::Rem, DType::I32, i(-7), i(2), out, error));
  EXPECT_EQ(out.i, -1);
  ASSERT_TRUE(num::binary(ir::BinaryKind::Div, DType::I32, i(INT32_MIN), i(-1), out, error));
  EXPECT_EQ(out.i, INT32_MIN);
  ASSERT_TRUE(num::binary(ir::BinaryKind::Div, DType::I64, i(INT64_MIN), i(-1), out, error));
  EXPECT_EQ(out.i, INT64_MIN);
  ASSERT_TRUE(num::binary(ir::BinaryKind::Sub, DType::U8, i(3), i(5), out, error));
  EXPECT_EQ(out.i, 254);
  ASSERT_TRUE(num::binary(ir::BinaryKind::Shr, DType::I8, i(-128), i(7), out, error));
  EXPECT_EQ(out.i, -1);
  ASSERT_TRUE(num::binary(ir::BinaryKind::Shr, DType::U64, i(-1), i(63), out, error));
  EXPECT_EQ(out.i, 1);
  ASSERT_TRUE(num::binary(ir::BinaryKind::Max, DType::U32, i(0xFFFFFFFF), i(1), out, error));
  EXPECT_EQ(out.i, 0xFFFFFFFF);
  EXPECT_FALSE(num::binary(ir::BinaryKind::Rem, DType::I32, i(1), i(0), out, error));
  EXPECT_EQ(error, "integer remainder by zero");
  EXPECT_FALSE(num::binary(ir::BinaryKind::Shl, DType::I32, i(1), i(32), out, error));
  EXPECT_EQ(error, "shift amount 32 is out of range for i32 (0 to 31)");
  // The faults as kinds, with the arguments of their messages but the place (the caller's).
  num::ElemFault fault;
  EXPECT_FALSE(num::binary(ir::BinaryKind::Div, DType::I32, i(1), i(0), out, fault));
  EXPECT_EQ(fault.id, DiagId::RunDivisionByZero);
  EXPECT_EQ(fault.args, std::vector<std::string>{"division"});
  EXPECT_FALSE(num::binary(ir::BinaryKind::Shr, DType::U8, i(1), i(8), out, fault));
  EXPECT_EQ(fault.id, DiagId::RunShiftOutOfRange);
  EXPECT_EQ(fault.args, (std::vector<std::string>{"8", "u8", "7"}));
  // pow on integers: ir::verify rejects it, so only a direct call meets it.
  EXPECT_FALSE(num::binary(ir::BinaryKind::Pow, DType::I32, i(2), i(3), out, fault));
  EXPECT_EQ(fault.id, DiagId::RunOpNotDefined);
  EXPECT_FALSE(num::binary(ir::BinaryKind::Pow, DType::I32, i(2), i(3), out, error));
  EXPECT_EQ(error, "pow is not defined on i32");
  EXPECT_FALSE(num::binary(ir::BinaryKind::Xor, DType::F32, Elem{0, 1.0}, Elem{0, 2.0}, out, error));
  EXPECT_EQ(error, "xor is not defined on f32");
  EXPECT_TRUE(num::compare(ir::CmpKind::Gt, DType::U64, i(-1), i(1)));
  EXPECT_FALSE(num::compare(ir::CmpKind::Gt, DType::I64, i(-1), i(1)));
}

TEST(Numeric, Casts) {
  auto f = [](double v) { Elem e; e.f = v; return e; };
  auto i = [](int64_t v) { Elem e; e.i = v; return e; };
  EXPECT_EQ(num::cast(DType::F32, DType::I32, f(-2.7)).i, -2);
  EXPECT_EQ(num::cast(DType::F32, DType::I32, f(3e10)).i, INT32_MAX);
  EXPECT_EQ(num::cast(DType::F32, DType::I32, f(std::nan(""))).i, 0);
  EXPECT_EQ(num::cast(DType::F32, DType::U8, f(-5)).i, 0);
  EXPECT_EQ(num::cast(DType::F32, DType::U8, f(300)).i, 255);
  EXPECT_EQ(num::cast(DType::I32, DType::I8, i(300)).i, 44);
  EXPECT_EQ(num::cast(DType::I32, DType::U32, i(-1)).i, 0xFFFFFFFF);
  EXPECT_EQ(num::cast(DType::U32, DType::I64, i(0xFFFFFFFF)).i, 0xFFFFFFFF);
  EXPECT_EQ(num::cast(DType::I32, DType::BF16, i(257)).f, 256.0);
  EXPECT_EQ(num::cast(DType::F32, DType::F16, f(1.0 / 3.0)).f, num::roundToFloat(DType::F16, 1.0 / 3.0));
  EXPECT_EQ(num::cast(DType::F32, DType::Bool, f(0.5)).i, 1);
  EXPECT_EQ(num::cast(DType::Bool, DType::F32, i(1)).f, 1.0);
}

TEST(Numeric, HalfArithmeticRoundsThroughF32) {
  std::string error;
  Elem out;
  Elem a, b;
  a.f = num::roundToFloat(DType::F16, 1.0);
  b.f = num::roundToFloat(DType::F16, std::ldexp(1.0, -11));  // half an ulp of 1.0 in f16
  ASSERT_TRUE(num::binary(ir::BinaryKind::Add, DType::F16, a, b, out, error));
  EXPECT_EQ(out.f, 1.0);  // tie to even
  Elem c = num::fma(DType::F32, Elem{0, 1.0 + std::ldexp(1.0, -23)}, Elem{0, 1.0 - std::ldexp(1.0, -23)}, Elem{0, -1.0});
  EXPECT_EQ(c.f, -std::ldexp(1.0, -46));  // exact product: one rounding
}

TEST(HostTensor, GetSetAndBits) {
  HostTensor t = HostTensor::zeros(DType::BF16, {2, 3});
  EXPECT_EQ(t.size(), 6u);
  EXPECT_EQ(t.bytes.size(), 12u);
  t.set(4, 1.0);
  EXPECT_EQ(t.getBits(4), 0x3F80u);
  EXPECT_EQ(t.bytes[8], 0x80);
  EXPECT_EQ(t.bytes[9], 0x3F);
  t.set(5, 0.1);
  EXPECT_EQ(t.get(5), num::roundToFloat(DType::BF16, 0.1));

  HostTensor u = HostTensor::zeros(DType::U64, {1});
  u.setInt(0, -1);
  EXPECT_EQ(u.getBits(0), ~0ull);
  HostTensor b = HostTensor::zeros(DType::Bool, {2});
  b.set(1, 2.5);
  EXPECT_EQ(b.getInt(1), 1);
  HostTensor i8 = HostTensor::zeros(DType::I8, {1});
  i8.setInt(0, 200);
  EXPECT_EQ(i8.getInt(0), -56);
  EXPECT_EQ(i8.get(0), -56.0);
}

}  // namespace
}  // namespace argus::interp
