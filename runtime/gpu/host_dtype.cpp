#include "host_dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace argus::gpu {
namespace {

uint64_t loadLittleEndian(const uint8_t* p, int bytes) {
  uint64_t bits = 0;
  for (int i = bytes - 1; i >= 0; --i) bits = (bits << 8) | p[i];
  return bits;
}

double decodeFloat(uint64_t bits, int exponentBits, int mantissaBits, bool finiteOnly) {
  int totalBits = 1 + exponentBits + mantissaBits;
  bool negative = (bits >> (totalBits - 1)) & 1;
  uint64_t exponent = (bits >> mantissaBits) & ((1ull << exponentBits) - 1);
  uint64_t mantissa = bits & ((1ull << mantissaBits) - 1);
  uint64_t maxExponent = (1ull << exponentBits) - 1;
  int bias = (1 << (exponentBits - 1)) - 1;
  double value;
  if (finiteOnly && exponent == maxExponent && mantissa == (1ull << mantissaBits) - 1) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (!finiteOnly && exponent == maxExponent) {
    value = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissaBits);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | (1ull << mantissaBits)),
                       static_cast<int>(exponent) - bias - mantissaBits);
  }
  return negative ? -value : value;
}

}  // namespace

double HostDType::decode(const uint8_t* p) const {
  uint64_t bits = loadLittleEndian(p, bytes);
  switch (kind) {
    case Kind::Bool: return bits != 0 ? 1.0 : 0.0;
    case Kind::Unsigned: return static_cast<double>(bits);
    case Kind::Signed: {
      int shift = 64 - 8 * bytes;
      return static_cast<double>(static_cast<int64_t>(bits << shift) >> shift);
    }
    case Kind::Float:
      if (bytes == 4) { float f; std::memcpy(&f, p, 4); return f; }
      if (bytes == 8) { double d; std::memcpy(&d, p, 8); return d; }
      return decodeFloat(bits, exponentBits, mantissaBits, name == "f8e4m3");
  }
  return 0;
}

double HostDType::defaultTolerance() const {
  if (!isFloat()) return 0;
  if (bytes == 8) return 1e-9;
  if (bytes == 4) return 1e-5;      // fast transcendental approximations stay well under this
  if (mantissaBits >= 10) return 2e-3;  // f16
  if (mantissaBits >= 7) return 1e-2;   // bf16
  return 1e-1;                          // fp8
}

std::optional<HostDType> hostDTypeFromName(const std::string& name) {
  using K = HostDType::Kind;
  struct Entry { const char* name; K kind; int bytes, exponentBits, mantissaBits; };
  static const Entry kTable[] = {
      {"bool", K::Bool, 1, 0, 0},      {"i8", K::Signed, 1, 0, 0},     {"i16", K::Signed, 2, 0, 0},
      {"i32", K::Signed, 4, 0, 0},     {"i64", K::Signed, 8, 0, 0},    {"u8", K::Unsigned, 1, 0, 0},
      {"u16", K::Unsigned, 2, 0, 0},   {"u32", K::Unsigned, 4, 0, 0},  {"u64", K::Unsigned, 8, 0, 0},
      {"f16", K::Float, 2, 5, 10},     {"bf16", K::Float, 2, 8, 7},    {"f32", K::Float, 4, 8, 23},
      {"f64", K::Float, 8, 11, 52},    {"f8e4m3", K::Float, 1, 4, 3},  {"f8e5m2", K::Float, 1, 5, 2},
  };
  for (const Entry& e : kTable)
    if (name == e.name) return HostDType{e.name, e.kind, e.bytes, e.exponentBits, e.mantissaBits};
  return std::nullopt;
}

}  // namespace argus::gpu
