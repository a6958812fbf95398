#include "layout/swizzle.h"

#include <algorithm>
#include <cstdlib>

#include "layout/algebra.h"

namespace argus::layout {

Result<Swizzle> Swizzle::make(int bits, int base, int shift) {
  if (bits < 0 || base < 0)
    return makeError("Swizzle<" + std::to_string(bits) + "," + std::to_string(base) + "," +
                     std::to_string(shift) + ">: B and M must not be negative");
  if (std::abs(shift) < bits)
    return makeError("Swizzle<" + std::to_string(bits) + "," + std::to_string(base) + "," +
                     std::to_string(shift) + ">: |S| must be at least B so the bit fields do not overlap");
  if (bits + base + std::abs(shift) > 40)
    return makeError("Swizzle<" + std::to_string(bits) + "," + std::to_string(base) + "," +
                     std::to_string(shift) + ">: the bit fields reach past bit 40");
  return Swizzle(bits, base, shift);
}

int64_t Swizzle::yyyMask() const {
  return ((int64_t{1} << bits_) - 1) << (base_ + std::max(0, shift_));
}

int64_t Swizzle::zzzMask() const {
  return ((int64_t{1} << bits_) - 1) << (base_ - std::min(0, shift_));
}

int64_t Swizzle::operator()(int64_t offset) const {
  int64_t field = offset & yyyMask();
  int64_t moved = shift_ >= 0 ? field >> shift_ : field << -shift_;
  return offset ^ moved;
}

Result<ComposedLayout> composition(const ComposedLayout& a, const Layout& b) {
  Result<Layout> inner = composition(a.layout, b);
  if (!inner) return inner.error();
  return ComposedLayout{a.swizzle, a.offset, *inner};
}

std::string toString(const Swizzle& swizzle) {
  return "Sw<" + std::to_string(swizzle.bits()) + "," + std::to_string(swizzle.base()) + "," +
         std::to_string(swizzle.shift()) + ">";
}

std::string toString(const ComposedLayout& layout) {
  return toString(layout.swizzle) + " o " + std::to_string(layout.offset) + " o " +
         toString(layout.layout);
}

}  // namespace argus::layout
