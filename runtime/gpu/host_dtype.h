// Element types as the launch metadata names them ("f32", "bf16", "i32", ...),
// with what the host side of a GPU run needs: sizes, decoding to double for
// comparisons, and the poison byte that marks unwritten output. Independent of
// the compiler's ir::DType so that the runtime links without the compiler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace argus::gpu {

struct HostDType {
  enum class Kind : uint8_t { Bool, Signed, Unsigned, Float };
  std::string name;
  Kind kind = Kind::Float;
  int bytes = 4;
  // Floats: exponent and mantissa bits (IEEE-like layout; f8e4m3 is the
  // "fn" variant without infinities, whose only NaN is S.1111.111).
  int exponentBits = 8, mantissaBits = 23;

  bool isFloat() const { return kind == Kind::Float; }
  // Value of the element at `p` (little-endian). Integers beyond 2^53 round.
  double decode(const uint8_t* p) const;
  // Poison written into outputs before a run: 0xFF for floats (a NaN in every
  // float format), 0xAB for integers and bool.
  uint8_t poisonByte() const { return isFloat() ? 0xFF : 0xAB; }
  // Largest relative error ||gpu - cpu|| / ||cpu|| a run may show against the
  // interpreter: a few units of the format's rounding (exact for integers).
  double defaultTolerance() const;
};

std::optional<HostDType> hostDTypeFromName(const std::string& name);

}  // namespace argus::gpu
