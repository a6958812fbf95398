#include "runtime/interp/numeric.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace argus::interp::num {

using ir::DType;

namespace {

// An IEEE-like binary format narrower than f32.
struct SmallFloat {
  int expBits, manBits, bias;
  bool hasInf;    // false: e4m3fn, whose all-ones exponent still holds numbers
  bool saturate;  // overflow goes to the largest finite value instead of inf
};

constexpr SmallFloat kF16{5, 10, 15, true, false};
constexpr SmallFloat kBF16{8, 7, 127, true, false};
constexpr SmallFloat kE4M3{4, 3, 7, false, true};
constexpr SmallFloat kE5M2{5, 2, 15, true, true};

const SmallFloat* smallFormat(DType t) {
  switch (t) {
    case DType::F16: return &kF16;
    case DType::BF16: return &kBF16;
    case DType::F8E4M3: return &kE4M3;
    case DType::F8E5M2: return &kE5M2;
    default: return nullptr;
  }
}

int maxExpField(const SmallFloat& f) { return f.hasInf ? (1 << f.expBits) - 2 : (1 << f.expBits) - 1; }
int maxMantissaAtMaxExp(const SmallFloat& f) { return f.hasInf ? (1 << f.manBits) - 1 : (1 << f.manBits) - 2; }

double maxFinite(const SmallFloat& f) {
  return std::ldexp(1.0 + std::ldexp(maxMantissaAtMaxExp(f), -f.manBits), maxExpField(f) - f.bias);
}

double roundHalfEven(double q) {
  double fl = std::floor(q);
  double d = q - fl;
  if (d > 0.5 || (d == 0.5 && std::fmod(fl, 2.0) != 0.0)) return fl + 1.0;
  return fl;
}

// Rounds a finite non-negative value to the format; returns the rounded value,
// possibly above maxFinite (the caller decides between inf and saturation).
double roundMagnitude(const SmallFloat& f, double a) {
  if (a == 0.0) return 0.0;
  int e = 0;
  std::frexp(a, &e);
  int exponent = e - 1;  // a in [2^exponent, 2^(exponent+1))
  int minNormal = 1 - f.bias;
  int quantumExp = std::max(exponent, minNormal) - f.manBits;
  return std::ldexp(roundHalfEven(std::ldexp(a, -quantumExp)), quantumExp);
}

uint64_t encodeSmall(const SmallFloat& f, double x) {
  uint64_t sign = std::signbit(x) ? 1ull << (f.expBits + f.manBits) : 0;
  uint64_t allOnesExp = (1ull << f.expBits) - 1;
  if (std::isnan(x)) {
    if (!f.hasInf) return sign | (allOnesExp << f.manBits) | ((1ull << f.manBits) - 1);
    return sign | (allOnesExp << f.manBits) | (1ull << (f.manBits - 1));
  }
  auto maxBits = [&] {
    return sign | (static_cast<uint64_t>(maxExpField(f)) << f.manBits) | static_cast<uint64_t>(maxMantissaAtMaxExp(f));
  };
  auto infBits = [&] { return sign | (allOnesExp << f.manBits); };
  double a = std::fabs(x);
  double v = std::isinf(a) ? a : roundMagnitude(f, a);
  if (v > maxFinite(f)) return (f.saturate || !f.hasInf) ? maxBits() : infBits();
  if (v == 0.0) return sign;
  int e = 0;
  std::frexp(v, &e);
  int exponent = e - 1;
  int minNormal = 1 - f.bias;
  if (exponent < minNormal)
    return sign | static_cast<uint64_t>(std::ldexp(v, f.manBits - minNormal));
  uint64_t mantissa = static_cast<uint64_t>(std::ldexp(v, f.manBits - exponent)) - (1ull << f.manBits);
  return sign | (static_cast<uint64_t>(exponent + f.bias) << f.manBits) | mantissa;
}

double decodeSmall(const SmallFloat& f, uint64_t bits) {
  uint64_t mantissa = bits & ((1ull << f.manBits) - 1);
  uint64_t expField = (bits >> f.manBits) & ((1ull << f.expBits) - 1);
  bool negative = (bits >> (f.expBits + f.manBits)) & 1;
  uint64_t allOnesExp = (1ull << f.expBits) - 1;
  double v;
  if (expField == allOnesExp && f.hasInf) {
    v = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (expField == allOnesExp && mantissa == (1ull << f.manBits) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();  // e4m3fn's only NaN
  } else if (expField == 0) {
    v = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.manBits);
  } else {
    v = std::ldexp(static_cast<double>(mantissa + (1ull << f.manBits)),
                   static_cast<int>(expField) - f.bias - f.manBits);
  }
  return negative ? -v : v;
}

bool isUnsigned(DType t) { return ir::isInteger(t) && !ir::isSigned(t); }
uint64_t u(int64_t x) { return static_cast<uint64_t>(x); }
int64_t s(uint64_t x) { return static_cast<int64_t>(x); }

// Applies a float operation with the dtype's precision: double for f64, float otherwise.
template <typename F32Op, typename F64Op>
double floatOp(DType t, F32Op f32, F64Op f64) {
  if (t == DType::F64) return f64();
  return roundToFloat(t, static_cast<double>(f32()));
}

}  // namespace

double roundToFloat(DType t, double x) {
  if (t == DType::F64) return x;
  if (t == DType::F32) return static_cast<double>(static_cast<float>(x));
  if (const SmallFloat* f = smallFormat(t)) return decodeSmall(*f, encodeSmall(*f, x));
  return x;
}

int64_t normalizeInt(DType t, int64_t x) {
  switch (t) {
    case DType::Bool: return x != 0;
    case DType::I8: return static_cast<int8_t>(x);
    case DType::I16: return static_cast<int16_t>(x);
    case DType::I32: return static_cast<int32_t>(x);
    case DType::U8: return static_cast<int64_t>(u(x) & 0xFFu);
    case DType::U16: return static_cast<int64_t>(u(x) & 0xFFFFu);
    case DType::U32: return static_cast<int64_t>(u(x) & 0xFFFFFFFFu);
    default: return x;
  }
}

int storageBytes(DType t) { return t == DType::Bool ? 1 : ir::dtypeBits(t) / 8; }

uint64_t encode(DType t, const Elem& e) {
  if (t == DType::F64) {
    uint64_t bits;
    std::memcpy(&bits, &e.f, 8);
    return bits;
  }
  if (t == DType::F32) {
    float f = static_cast<float>(e.f);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits;
  }
  if (t == DType::BF16) {  // fast path: a value that is already a bf16
    float f = static_cast<float>(e.f);
    uint32_t u32;
    std::memcpy(&u32, &f, 4);
    if ((u32 & 0xFFFFu) == 0 && static_cast<double>(f) == e.f) return u32 >> 16;
  }
  if (const SmallFloat* f = smallFormat(t)) return encodeSmall(*f, e.f);
  int bits = t == DType::Bool ? 8 : ir::dtypeBits(t);
  return bits == 64 ? u(e.i) : u(e.i) & ((1ull << bits) - 1);
}

Elem decode(DType t, uint64_t bits) {
  Elem e;
  if (t == DType::F64) {
    std::memcpy(&e.f, &bits, 8);
  } else if (t == DType::F32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    e.f = f;
  } else if (t == DType::BF16) {
    uint32_t u32 = static_cast<uint32_t>(bits & 0xFFFFu) << 16;
    float f;
    std::memcpy(&f, &u32, 4);
    e.f = f;
  } else if (const SmallFloat* f = smallFormat(t)) {
    e.f = decodeSmall(*f, bits);
  } else if (t == DType::Bool) {
    e.i = (bits & 0xFF) != 0;
  } else {
    e.i = normalizeInt(t, s(bits));  // sign- or zero-extends from the dtype's width
  }
  return e;
}

Elem fromDouble(DType t, double v) {
  if (ir::isFloat(t)) return Elem{0, roundToFloat(t, v)};
  return cast(DType::F64, t, Elem{0, v});
}

double toDouble(DType t, const Elem& e) {
  if (ir::isFloat(t)) return e.f;
  if (t == DType::U64) return static_cast<double>(u(e.i));
  return static_cast<double>(e.i);
}

bool binary(ir::BinaryKind k, DType t, const Elem& a, const Elem& b, Elem& out, std::string& error) {
  ElemFault fault;
  if (binary(k, t, a, b, out, fault)) return true;
  fault.args.emplace_back();  // no place
  error = formatDiagMessage(fault.id, fault.args);
  return false;
}

bool binary(ir::BinaryKind k, DType t, const Elem& a, const Elem& b, Elem& out, ElemFault& fault) {
  using K = ir::BinaryKind;
  out = Elem{};
  if (ir::isFloat(t)) {
    float x = static_cast<float>(a.f), y = static_cast<float>(b.f);
    double X = a.f, Y = b.f;
    switch (k) {
      case K::Add: out.f = floatOp(t, [&] { return x + y; }, [&] { return X + Y; }); break;
      case K::Sub: out.f = floatOp(t, [&] { return x - y; }, [&] { return X - Y; }); break;
      case K::Mul: out.f = floatOp(t, [&] { return x * y; }, [&] { return X * Y; }); break;
      case K::Div: out.f = floatOp(t, [&] { return x / y; }, [&] { return X / Y; }); break;
      // As the generated code computes it: a - trunc(a / b) * b with one rounding
      // of the product-difference (equal to fmod except when a / b rounds).
      case K::Rem:
        out.f = floatOp(t, [&] { return std::fma(-std::trunc(x / y), y, x); },
                        [&] { return std::fma(-std::trunc(X / Y), Y, X); });
        break;
      case K::Min: out.f = floatOp(t, [&] { return std::fmin(x, y); }, [&] { return std::fmin(X, Y); }); break;
      case K::Max: out.f = floatOp(t, [&] { return std::fmax(x, y); }, [&] { return std::fmax(X, Y); }); break;
      case K::Pow: out.f = floatOp(t, [&] { return std::pow(x, y); }, [&] { return std::pow(X, Y); }); break;
      default:  // ir::verify rejects it
        fault = {DiagId::RunOpNotDefined, {ir::binaryKindName(k), ir::dtypeName(t)}};
        return false;
    }
    return true;
  }
  bool uns = isUnsigned(t);
  int width = t == DType::Bool ? 1 : ir::dtypeBits(t);
  int64_t x = a.i, y = b.i;
  int64_t r = 0;
  switch (k) {
    case K::Add: r = s(u(x) + u(y)); break;
    case K::Sub: r = s(u(x) - u(y)); break;
    case K::Mul: r = s(u(x) * u(y)); break;
    case K::Div:
    case K::Rem:
      if (y == 0) {
        fault = {DiagId::RunDivisionByZero, {k == K::Div ? "division" : "remainder"}};
        return false;
      }
      if (uns) r = s(k == K::Div ? u(x) / u(y) : u(x) % u(y));
      else if (x == std::numeric_limits<int64_t>::min() && y == -1) r = k == K::Div ? x : 0;
      else r = k == K::Div ? x / y : x % y;
      break;
    case K::Min: r = uns ? (u(x) < u(y) ? x : y) : std::min(x, y); break;
    case K::Max: r = uns ? (u(x) > u(y) ? x : y) : std::max(x, y); break;
    case K::And: r = x & y; break;
    case K::Or: r = x | y; break;
    case K::Xor: r = x ^ y; break;
    case K::Shl:
    case K::Shr:
      if (u(y) >= static_cast<uint64_t>(width)) {
        fault = {DiagId::RunShiftOutOfRange, {format(t, b), ir::dtypeName(t), std::to_string(width - 1)}};
        return false;
      }
      if (k == K::Shl) r = s(u(x) << y);
      else r = uns ? s(u(x) >> y) : (x >> y);  // normalized signed values shift arithmetically
      break;
    case K::Pow:  // ir::verify rejects it
      fault = {DiagId::RunOpNotDefined, {ir::binaryKindName(k), ir::dtypeName(t)}};
      return false;
  }
  out.i = normalizeInt(t, r);
  return true;
}

namespace {
template <class T>
bool compareValues(ir::CmpKind k, T x, T y) {
  using K = ir::CmpKind;
  switch (k) {
    case K::Eq: return x == y;
    case K::Ne: return x != y;
    case K::Lt: return x < y;
    case K::Le: return x <= y;
    case K::Gt: return x > y;
    case K::Ge: return x >= y;
  }
  return false;
}
}  // namespace

bool compare(ir::CmpKind k, DType t, const Elem& a, const Elem& b) {
  if (ir::isFloat(t)) return compareValues(k, a.f, b.f);
  if (t == DType::U64) return compareValues(k, u(a.i), u(b.i));
  return compareValues(k, a.i, b.i);  // normalized: narrower unsigned values are non-negative
}

Elem unary(ir::UnaryKind k, DType t, const Elem& a) {
  using K = ir::UnaryKind;
  Elem out;
  if (!ir::isFloat(t)) {
    switch (k) {
      case K::Neg: out.i = normalizeInt(t, s(0 - u(a.i))); break;
      case K::Not: out.i = t == DType::Bool ? !a.i : normalizeInt(t, ~a.i); break;
      case K::Abs: out.i = isUnsigned(t) || a.i >= 0 ? a.i : normalizeInt(t, s(0 - u(a.i))); break;
      default: out.i = a.i; break;  // rejected by the verifier
    }
    return out;
  }
  float x = static_cast<float>(a.f);
  double X = a.f;
  switch (k) {
    case K::Neg: out.f = -a.f; break;
    case K::Abs: out.f = std::fabs(a.f); break;
    case K::Not: out.f = a.f; break;  // rejected by the verifier
    case K::Exp: out.f = floatOp(t, [&] { return std::exp(x); }, [&] { return std::exp(X); }); break;
    case K::Exp2: out.f = floatOp(t, [&] { return std::exp2(x); }, [&] { return std::exp2(X); }); break;
    case K::Log: out.f = floatOp(t, [&] { return std::log(x); }, [&] { return std::log(X); }); break;
    case K::Log2: out.f = floatOp(t, [&] { return std::log2(x); }, [&] { return std::log2(X); }); break;
    case K::Sqrt: out.f = floatOp(t, [&] { return std::sqrt(x); }, [&] { return std::sqrt(X); }); break;
    case K::Rsqrt: out.f = floatOp(t, [&] { return 1.0f / std::sqrt(x); }, [&] { return 1.0 / std::sqrt(X); }); break;
    case K::Tanh: out.f = floatOp(t, [&] { return std::tanh(x); }, [&] { return std::tanh(X); }); break;
    case K::Erf: out.f = floatOp(t, [&] { return std::erf(x); }, [&] { return std::erf(X); }); break;
    case K::Sin: out.f = floatOp(t, [&] { return std::sin(x); }, [&] { return std::sin(X); }); break;
    case K::Cos: out.f = floatOp(t, [&] { return std::cos(x); }, [&] { return std::cos(X); }); break;
    case K::Floor: out.f = std::floor(a.f); break;
    case K::Ceil: out.f = std::ceil(a.f); break;
  }
  return out;
}

Elem fma(DType t, const Elem& a, const Elem& b, const Elem& c) {
  Elem out;
  if (t == DType::F64) out.f = std::fma(a.f, b.f, c.f);
  else out.f = roundToFloat(t, std::fma(static_cast<float>(a.f), static_cast<float>(b.f), static_cast<float>(c.f)));
  return out;
}

Elem cast(DType from, DType to, const Elem& a) {
  Elem out;
  if (to == DType::Bool) {
    out.i = ir::isFloat(from) ? (a.f != 0.0) : (a.i != 0);
    return out;
  }
  if (ir::isFloat(to)) {
    if (ir::isFloat(from)) out.f = roundToFloat(to, a.f);
    else if (from == DType::U64 && to == DType::F32) out.f = static_cast<float>(u(a.i));
    else if (from == DType::U64) out.f = roundToFloat(to, static_cast<double>(u(a.i)));
    else if (to == DType::F32) out.f = static_cast<float>(a.i);  // one rounding, as cvt.rn.f32.s64
    else out.f = roundToFloat(to, static_cast<double>(a.i));
    return out;
  }
  if (!ir::isFloat(from)) {
    out.i = normalizeInt(to, a.i);
    return out;
  }
  // Float to integer: truncate toward zero, NaN to 0, saturate at the dtype's range.
  double v = std::trunc(a.f);
  if (std::isnan(v)) return out;
  int width = ir::dtypeBits(to);
  if (isUnsigned(to)) {
    double hi = std::ldexp(1.0, width);  // exclusive
    if (v <= 0) out.i = 0;
    else if (v >= hi) out.i = width == 64 ? -1 : s((1ull << width) - 1);
    else out.i = width == 64 ? s(static_cast<uint64_t>(v)) : static_cast<int64_t>(v);
  } else {
    double lo = -std::ldexp(1.0, width - 1), hi = std::ldexp(1.0, width - 1);  // [lo, hi)
    if (v < lo) out.i = width == 64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(lo);
    else if (v >= hi) out.i = width == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi) - 1;
    else out.i = static_cast<int64_t>(v);
  }
  return out;
}

Elem constant(DType t, int64_t intValue, double floatValue) {
  Elem e;
  if (ir::isFloat(t)) e.f = roundToFloat(t, floatValue);
  else e.i = normalizeInt(t, intValue);
  return e;
}

Elem reduceStep(ir::ReduceKind k, DType t, const Elem& acc, const Elem& x) {
  using R = ir::ReduceKind;
  using B = ir::BinaryKind;
  B op = k == R::Sum ? B::Add : k == R::Max ? B::Max : k == R::Min ? B::Min : B::Mul;
  if (t == DType::Bool) {  // sum/max: any, min/prod: all
    Elem out;
    out.i = (k == R::Sum || k == R::Max) ? (acc.i | x.i) : (acc.i & x.i);
    return out;
  }
  Elem out;
  ElemFault ignored;  // sum, max, min and prod have no faults
  binary(op, t, acc, x, out, ignored);
  return out;
}

bool isTruthy(DType t, const Elem& e) { return ir::isFloat(t) ? e.f != 0.0 : e.i != 0; }

std::string format(DType t, const Elem& e) {
  if (t == DType::Bool) return e.i ? "True" : "False";
  if (ir::isFloat(t)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", e.f);
    return buf;
  }
  if (t == DType::U64) return std::to_string(u(e.i));
  return std::to_string(e.i);
}

}  // namespace argus::interp::num
