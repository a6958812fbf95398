// The layout algebra of CuTe: composition, complement, divides, products and
// inverses. Every operation checks CuTe's preconditions (divisibility,
// injectivity) and returns an error instead of a wrong layout.
#pragma once

#include <vector>

#include "layout/layout.h"
#include "layout/result.h"

namespace argus::layout {

// A tiler: either one layout (or shape, as a compact layout) applied to the
// whole layout, or a tuple of them applied mode by mode (CuTe's Tile<...>,
// written `<4:1, 8:2>` in the calculator).
struct Tiler {
  std::vector<Layout> modes;  // by-mode tiler when byMode is true
  bool byMode = false;

  static Tiler whole(Layout layout) { return Tiler{{std::move(layout)}, false}; }
  static Tiler perMode(std::vector<Layout> modes) { return Tiler{std::move(modes), true}; }
};

// R(c) = A(B(c)) for every coordinate c of B; R has B's shape (by-mode for tuple B).
Result<Layout> composition(const Layout& a, const Layout& b);
// Composition with a tiler: by-mode composition, modes beyond the tiler kept.
Result<Layout> composition(const Layout& a, const Tiler& tiler);
// The layout that fills the codomain [0, cotarget) around `layout`:
// disjoint images, strides ordered, size(result) >= cotarget / size(filter(layout)).
Result<Layout> complement(const Layout& layout, int64_t cotarget);
Result<Layout> complement(const Layout& layout);  // cotarget = cosize(layout)

Result<Layout> logicalDivide(const Layout& layout, const Tiler& tiler);
Result<Layout> zippedDivide(const Layout& layout, const Tiler& tiler);
Result<Layout> tiledDivide(const Layout& layout, const Tiler& tiler);
Result<Layout> flatDivide(const Layout& layout, const Tiler& tiler);

Result<Layout> logicalProduct(const Layout& block, const Tiler& tiler);
Result<Layout> zippedProduct(const Layout& block, const Tiler& tiler);
Result<Layout> blockedProduct(const Layout& block, const Layout& tiler);
Result<Layout> rakedProduct(const Layout& block, const Layout& tiler);

// layout(result(i)) == i for i < size(result) (the largest such contiguous range).
Layout rightInverse(const Layout& layout);
// result(layout(i)) == i for every i < size(layout) when layout is injective.
Result<Layout> leftInverse(const Layout& layout);

}  // namespace argus::layout
