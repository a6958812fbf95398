#include "layout/algebra.h"

#include <algorithm>
#include <numeric>

namespace argus::layout {
namespace {

struct FlatModes {
  std::vector<int64_t> shapes, strides;
};

FlatModes flatModes(const Layout& layout) { return {leaves(layout.shape()), leaves(layout.stride())}; }

Layout fromFlat(const std::vector<int64_t>& shapes, const std::vector<int64_t>& strides) {
  if (shapes.size() == 1) return Layout(shapes[0], strides[0]);
  std::vector<IntTuple> s(shapes.begin(), shapes.end()), d(strides.begin(), strides.end());
  return Layout(IntTuple::tuple(std::move(s)), IntTuple::tuple(std::move(d)));
}

int64_t ceilDivInt(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The algebra divides by extents: refuse malformed layouts built without makeLayout.
std::string malformed(const Layout& layout) {
  if (!congruent(layout.shape(), layout.stride()))
    return "the shape and stride of " + toString(layout) + " do not have the same structure";
  for (int64_t s : leaves(layout.shape()))
    if (s <= 0) return "the layout " + toString(layout) + " has a non-positive extent";
  return "";
}

// A (coalesced, flat) composed with one integral mode n:r of B. Follows CuTe's
// composition_impl; the divisibility conditions are checked (and one is
// strengthened: see the comment inside) so that a success is always exact.
Result<Layout> composeWithMode(const FlatModes& a, int64_t n, int64_t r) {
  if (r == 0) return Layout(n, 0);
  if (r < 0) return makeError("a negative stride (" + std::to_string(r) + ") in the right operand is not supported");
  size_t modes = a.shapes.size();
  if (modes == 1) return Layout(n, r * a.strides[0]);
  std::vector<int64_t> shapes, strides;
  for (size_t i = 0; i + 1 < modes; ++i) {
    int64_t s = a.shapes[i], d = a.strides[i];
    if (r >= s && r % s != 0)
      return makeError("stride divisibility condition fails: stride " + std::to_string(r) +
                       " is neither smaller than nor a multiple of the left mode's extent " +
                       std::to_string(s));
    int64_t nextShape = ceilDivInt(s, r), nextStride = ceilDivInt(r, s);
    if (nextShape == 1 || n == 1) {
      r = nextStride;
      continue;
    }
    int64_t newShape = std::min(nextShape, n);
    if (n % newShape != 0)
      return makeError("shape divisibility condition fails: extent " + std::to_string(n) +
                       " is not a multiple of " + std::to_string(newShape) +
                       " (what remains of the left mode of extent " + std::to_string(s) + ")");
    // CuTe only checks r < s here; when r does not divide s, stepping past this
    // mode lands on wrong offsets, so it is exact only if B stays inside it.
    if (s % r != 0 && n > newShape)
      return makeError("stride divisibility condition fails: stride " + std::to_string(r) +
                       " does not divide the left mode's extent " + std::to_string(s) +
                       " and the right mode runs past it");
    shapes.push_back(newShape);
    strides.push_back(r * d);
    n /= newShape;
    r = nextStride;
  }
  if (shapes.empty()) return Layout(n, r * a.strides.back());
  if (n != 1) {
    shapes.push_back(n);
    strides.push_back(r * a.strides.back());
  }
  return fromFlat(shapes, strides);
}

Result<Layout> composeImpl(const FlatModes& a, const IntTuple& bShape, const IntTuple& bStride) {
  if (bShape.isLeaf()) return composeWithMode(a, bShape.value(), bStride.value());
  std::vector<Layout> modes;
  for (size_t i = 0; i < bShape.rank(); ++i) {
    Result<Layout> mode = composeImpl(a, bShape.mode(i), bStride.mode(i));
    if (!mode) return mode;
    modes.push_back(*mode);
  }
  return concatenate(modes);
}

LayoutError wrap(const std::string& operation, const LayoutError& inner) {
  return makeError(operation + ": " + inner.message);
}

// complement with an IntTuple cotarget (CuTe's shape cotarget).
Result<Layout> complementImpl(const Layout& layout, const IntTuple& cotarget) {
  if (std::string problem = malformed(layout); !problem.empty()) return makeError(problem);
  for (int64_t s : leaves(cotarget))
    if (s <= 0) return makeError("the cotarget " + toString(cotarget) + " must be positive");
  Layout filtered = filter(layout);
  FlatModes f = flatModes(filtered);
  if (f.strides.size() == 1 && f.strides[0] == 0) return coalesce(makeLayout(cotarget));
  for (int64_t d : f.strides)
    if (d < 0) return makeError("negative strides are not supported");
  std::vector<size_t> order(f.shapes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return f.strides[x] < f.strides[y]; });
  std::vector<int64_t> shapes, strides{1};
  for (size_t j : order) {
    int64_t newShape = f.strides[j] / strides.back();
    if (newShape == 0)
      return makeError("the layout " + toString(layout) + " is not injective");
    shapes.push_back(newShape);
    strides.push_back(f.strides[j] * f.shapes[j]);
  }
  int64_t restStart = strides.back();
  strides.pop_back();
  IntTuple restShape = coalesce(makeLayout(ceilDiv(cotarget, restStart))).shape();
  IntTuple restStride = compactColMajor(restShape, restStart);
  Layout combined(IntTuple::tuple({IntTuple::tuple({shapes.begin(), shapes.end()}), restShape}),
                  IntTuple::tuple({IntTuple::tuple({strides.begin(), strides.end()}), restStride}));
  return coalesce(combined);
}

Result<Layout> checkTilerRank(const Layout& layout, const Tiler& tiler, const char* operation) {
  if (tiler.modes.size() > layout.rank())
    return makeError(std::string(operation) + ": the tiler has " + std::to_string(tiler.modes.size()) +
                     " modes but the layout " + toString(layout) + " has rank " +
                     std::to_string(layout.rank()));
  return layout;
}

// Applies `operation` to mode i of `layout` and tiler mode i, keeping the other modes.
template <class Operation>
Result<Layout> byMode(const Layout& layout, const Tiler& tiler, const char* name, Operation operation) {
  if (Result<Layout> ok = checkTilerRank(layout, tiler, name); !ok) return ok;
  std::vector<Layout> modes;
  for (size_t i = 0; i < layout.rank(); ++i) {
    if (i >= tiler.modes.size()) {
      modes.push_back(layout.mode(i));
      continue;
    }
    Result<Layout> mode = operation(layout.mode(i), tiler.modes[i]);
    if (!mode) return mode;
    modes.push_back(*mode);
  }
  return concatenate(modes);
}

std::vector<Layout> topModes(const Layout& layout) {
  std::vector<Layout> modes;
  if (layout.shape().isLeaf()) return {layout};
  for (size_t i = 0; i < layout.rank(); ++i) modes.push_back(layout.mode(i));
  return modes;
}

// ((a0,b0),(a1,b1),...) -> ((a0,a1,...),(b0,b1,...,rest...)) for the first `count` modes.
Layout unzipTiles(const Layout& divided, size_t count) {
  std::vector<Layout> tiles, rests;
  for (size_t i = 0; i < divided.rank(); ++i) {
    if (i < count) {
      tiles.push_back(divided.mode(i).mode(0));
      rests.push_back(divided.mode(i).mode(1));
    } else {
      rests.push_back(divided.mode(i));
    }
  }
  return concatenate({concatenate(tiles), concatenate(rests)});
}

Result<Layout> logicalDivideWhole(const Layout& layout, const Layout& tiler) {
  Result<Layout> rest = complementImpl(tiler, coalesce(layout).shape());
  if (!rest) return wrap("logical_divide", rest.error());
  Result<Layout> result = composition(layout, concatenate({tiler, *rest}));
  if (!result) return wrap("logical_divide", result.error());
  return result;
}

Result<Layout> logicalProductWhole(const Layout& block, const Layout& tiler) {
  Result<Layout> rest = complement(block, block.size() * tiler.cosize());
  if (!rest) return wrap("logical_product", rest.error());
  Result<Layout> repeated = composition(*rest, tiler);
  if (!repeated) return wrap("logical_product", repeated.error());
  return concatenate({block, *repeated});
}

}  // namespace

// CuTe composes B mode by mode, which is exact only when B's modes do not
// carry into each other through A's modes; CuTe leaves that to the caller.
// We check R(i) == A(B(i)) (A coalesced, as CuTe extends it past its size) on
// every index, or on an evenly spread sample of 2^16 of them for huge layouts.
static std::string findMismatch(const Layout& coalescedA, const Layout& b, const Layout& result) {
  constexpr int64_t kChecked = int64_t{1} << 16;
  int64_t n = b.size(), step = n <= kChecked ? 1 : n / kChecked;
  for (int64_t i = 0; i < n; i = (i + step < n || i == n - 1) ? i + step : n - 1) {
    int64_t expected = coalescedA(b(i)), got = result(i);
    if (expected != got)
      return "B's modes do not split along A's modes: at B coordinate " + toString(b.coordinateOf(i)) +
             ", A(B(c)) = A(" + std::to_string(b(i)) + ") = " + std::to_string(expected) +
             " but composing mode by mode gives " + std::to_string(got);
  }
  return "";
}

Result<Layout> composition(const Layout& a, const Layout& b) {
  for (const Layout* operand : {&a, &b})
    if (std::string problem = malformed(*operand); !problem.empty()) return makeError("composition: " + problem);
  Layout coalescedA = coalesce(a);
  Result<Layout> result = composeImpl(flatModes(coalescedA), b.shape(), b.stride());
  std::string mismatch = result ? findMismatch(coalescedA, b, *result) : result.error().message;
  if (!mismatch.empty())
    return makeError("cannot compose " + toString(a) + " with " + toString(b) + ": " + mismatch);
  return result;
}

Result<Layout> composition(const Layout& a, const Tiler& tiler) {
  if (!tiler.byMode) return composition(a, tiler.modes[0]);
  return byMode(a, tiler, "composition",
                [](const Layout& l, const Layout& t) { return composition(l, t); });
}

Result<Layout> complement(const Layout& layout, int64_t cotarget) {
  Result<Layout> result = complementImpl(layout, IntTuple(cotarget));
  if (!result) return wrap("complement", result.error());
  return result;
}

Result<Layout> complement(const Layout& layout) { return complement(layout, filter(layout).cosize()); }

Result<Layout> logicalDivide(const Layout& layout, const Tiler& tiler) {
  if (!tiler.byMode) return logicalDivideWhole(layout, tiler.modes[0]);
  return byMode(layout, tiler, "logical_divide", logicalDivideWhole);
}

Result<Layout> zippedDivide(const Layout& layout, const Tiler& tiler) {
  Result<Layout> divided = logicalDivide(layout, tiler);
  if (!divided || !tiler.byMode) return divided;
  return unzipTiles(*divided, tiler.modes.size());
}

Result<Layout> tiledDivide(const Layout& layout, const Tiler& tiler) {
  Result<Layout> zipped = zippedDivide(layout, tiler);
  if (!zipped) return zipped;
  std::vector<Layout> modes{zipped->mode(0)};
  for (const Layout& rest : topModes(zipped->mode(1))) modes.push_back(rest);
  return concatenate(modes);
}

Result<Layout> flatDivide(const Layout& layout, const Tiler& tiler) {
  Result<Layout> zipped = zippedDivide(layout, tiler);
  if (!zipped) return zipped;
  std::vector<Layout> modes = topModes(zipped->mode(0));
  for (const Layout& rest : topModes(zipped->mode(1))) modes.push_back(rest);
  return concatenate(modes);
}

Result<Layout> logicalProduct(const Layout& block, const Tiler& tiler) {
  if (!tiler.byMode) return logicalProductWhole(block, tiler.modes[0]);
  return byMode(block, tiler, "logical_product", logicalProductWhole);
}

Result<Layout> zippedProduct(const Layout& block, const Tiler& tiler) {
  Result<Layout> product = logicalProduct(block, tiler);
  if (!product || !tiler.byMode) return product;
  return unzipTiles(*product, tiler.modes.size());
}

static Result<Layout> rankedProduct(const Layout& block, const Layout& tiler, bool raked) {
  size_t rank = std::max(block.rank(), tiler.rank());
  Result<Layout> product = logicalProductWhole(padToRank(block, rank), padToRank(tiler, rank));
  if (!product) return product;
  Layout blocks = product->mode(0), tiles = product->mode(1);
  std::vector<Layout> modes;
  for (size_t i = 0; i < rank; ++i) {
    Layout b = rank == 1 ? blocks : blocks.mode(i), t = rank == 1 ? tiles : tiles.mode(i);
    modes.push_back(coalesce(raked ? concatenate({t, b}) : concatenate({b, t})));
  }
  return concatenate(modes);
}

Result<Layout> blockedProduct(const Layout& block, const Layout& tiler) {
  return rankedProduct(block, tiler, false);
}

Result<Layout> rakedProduct(const Layout& block, const Layout& tiler) {
  return rankedProduct(block, tiler, true);
}

Layout rightInverse(const Layout& layout) {
  if (!malformed(layout).empty()) return Layout();  // 1:0, the inverse of nothing
  FlatModes f = flatModes(coalesce(layout));
  std::vector<int64_t> prefix{1};
  for (int64_t s : f.shapes) prefix.push_back(prefix.back() * s);
  std::vector<size_t> order(f.shapes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return f.strides[x] < f.strides[y]; });
  std::vector<int64_t> shapes{1}, strides{0};
  int64_t next = 1;
  for (size_t i : order) {
    if (f.strides[i] != next) continue;
    shapes.push_back(f.shapes[i]);
    strides.push_back(prefix[i]);
    next = f.shapes[i] * f.strides[i];
  }
  return coalesce(fromFlat(shapes, strides));
}

Result<Layout> leftInverse(const Layout& layout) {
  if (std::string problem = malformed(layout); !problem.empty()) return makeError("left_inverse: " + problem);
  FlatModes f = flatModes(coalesce(layout));
  std::vector<int64_t> prefix{1};
  for (int64_t s : f.shapes) prefix.push_back(prefix.back() * s);
  std::vector<size_t> order(f.shapes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return f.strides[x] < f.strides[y]; });
  std::vector<int64_t> shapes, strides{0};
  int64_t covered = 1;
  for (size_t i : order) {
    int64_t d = f.strides[i];
    if (d == 0) continue;
    if (d < 0) return makeError("left_inverse: negative strides are not supported");
    if (d % covered != 0)
      return makeError("left_inverse: " + toString(layout) + " is not invertible: stride " +
                       std::to_string(d) + " is not a multiple of " + std::to_string(covered));
    shapes.push_back(d / covered);
    strides.push_back(prefix[i]);
    covered = d;
  }
  shapes.push_back(f.shapes[order.back()]);
  return coalesce(fromFlat(shapes, strides));
}

}  // namespace argus::layout
