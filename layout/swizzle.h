// CuTe's Swizzle<B, M, S>: offset ^ ((offset & YYY) >> S) where YYY is the B-bit
// field starting at bit M + max(0, S) (shifted left instead for negative S).
// A swizzle composed with an offset and a layout is CuTe's ComposedLayout,
// written `Sw<3,3,3> o 0 o (8,64):(64,1)`: c -> swizzle(offset + layout(c)).
#pragma once

#include <cstdint>
#include <string>

#include "layout/layout.h"
#include "layout/result.h"

namespace argus::layout {

class Swizzle {
 public:
  // Checked: 0 <= B, 0 <= M, |S| >= B (the bit fields must not overlap).
  static Result<Swizzle> make(int bits, int base, int shift);

  int bits() const { return bits_; }
  int base() const { return base_; }
  int shift() const { return shift_; }
  int64_t yyyMask() const;  // the source field
  int64_t zzzMask() const;  // the field it is XORed into

  int64_t operator()(int64_t offset) const;
  bool operator==(const Swizzle&) const = default;

 private:
  Swizzle(int bits, int base, int shift) : bits_(bits), base_(base), shift_(shift) {}
  int bits_ = 0, base_ = 0, shift_ = 0;
};

struct ComposedLayout {
  Swizzle swizzle;
  int64_t offset = 0;
  Layout layout;

  int64_t operator()(int64_t index) const { return swizzle(offset + layout(index)); }
  int64_t size() const { return layout.size(); }
};

// The composed layout restricted by a layout of its domain: sw o off o (L o B).
Result<ComposedLayout> composition(const ComposedLayout& a, const Layout& b);

std::string toString(const Swizzle& swizzle);  // Sw<3,3,3>
std::string toString(const ComposedLayout& layout);

}  // namespace argus::layout
