#include "layout/layout.h"

#include <algorithm>

namespace argus::layout {

int64_t Layout::cosize() const {
  std::vector<int64_t> shapes = leaves(shape_), strides = leaves(stride_);
  int64_t highest = 0;
  for (size_t i = 0; i < shapes.size(); ++i)
    if (strides[i] > 0) highest += (shapes[i] - 1) * strides[i];
  return highest + 1;
}

static int64_t offsetOfIndex(const IntTuple& shape, const IntTuple& stride, int64_t index) {
  if (shape.isLeaf()) return index * stride.value();
  int64_t offset = 0;
  const auto& modes = shape.children();
  for (size_t i = 0; i < modes.size(); ++i) {
    if (i + 1 == modes.size()) return offset + offsetOfIndex(modes[i], stride.mode(i), index);
    int64_t extent = product(modes[i]);
    if (extent <= 0) continue;  // malformed (unchecked) layouts never divide by zero
    offset += offsetOfIndex(modes[i], stride.mode(i), index % extent);
    index /= extent;
  }
  return offset;
}

int64_t Layout::operator()(int64_t index) const { return offsetOfIndex(shape_, stride_, index); }

static Result<int64_t> offsetOfCoordinate(const IntTuple& shape, const IntTuple& stride,
                                          const IntTuple& coordinate) {
  if (coordinate.isLeaf()) return offsetOfIndex(shape, stride, coordinate.value());
  if (shape.isLeaf() || shape.rank() != coordinate.rank())
    return makeError("coordinate " + toString(coordinate) + " does not match shape " +
                     toString(shape));
  int64_t offset = 0;
  for (size_t i = 0; i < shape.rank(); ++i) {
    Result<int64_t> part = offsetOfCoordinate(shape.mode(i), stride.mode(i), coordinate.mode(i));
    if (!part) return part;
    offset += *part;
  }
  return offset;
}

Result<int64_t> Layout::operator()(const IntTuple& coordinate) const {
  return offsetOfCoordinate(shape_, stride_, coordinate);
}

IntTuple Layout::coordinateOf(int64_t index) const {
  std::vector<int64_t> extents = leaves(shape_), coordinate;
  for (size_t i = 0; i < extents.size(); ++i) {
    if (i + 1 == extents.size() || extents[i] <= 0) {
      coordinate.push_back(index);
    } else {
      coordinate.push_back(index % extents[i]);
      index /= extents[i];
    }
  }
  size_t next = 0;
  return unflattenLike(shape_, coordinate, next);
}

Result<Layout> makeLayout(const IntTuple& shape, const IntTuple& stride) {
  if (!congruent(shape, stride))
    return makeError("shape " + toString(shape) + " and stride " + toString(stride) +
                     " do not have the same structure");
  for (int64_t s : leaves(shape))
    if (s <= 0) return makeError("shape " + toString(shape) + " has a non-positive extent");
  if (shape.rank() == 0) return makeError("a layout needs at least one mode");
  return Layout(shape, stride);
}

Layout makeLayout(const IntTuple& shape) { return Layout(shape, compactColMajor(shape)); }
Layout makeColMajor(const IntTuple& shape) { return makeLayout(shape); }
Layout makeRowMajor(const IntTuple& shape) { return Layout(shape, compactRowMajor(shape)); }

Result<Layout> makeOrderedLayout(const IntTuple& shape, const IntTuple& order) {
  std::vector<int64_t> extents = leaves(shape), ranks = leaves(order);
  if (extents.size() != ranks.size())
    return makeError("order " + toString(order) + " does not match shape " + toString(shape));
  std::vector<size_t> byOrder(extents.size());
  for (size_t i = 0; i < byOrder.size(); ++i) byOrder[i] = i;
  std::stable_sort(byOrder.begin(), byOrder.end(),
                   [&](size_t a, size_t b) { return ranks[a] < ranks[b]; });
  std::vector<int64_t> strides(extents.size());
  int64_t current = 1;
  for (size_t i : byOrder) {
    strides[i] = current;
    current *= extents[i];
  }
  size_t next = 0;
  return Layout(shape, unflattenLike(shape, strides, next));
}

Layout concatenate(const std::vector<Layout>& modes) {
  std::vector<IntTuple> shapes, strides;
  for (const Layout& m : modes) {
    shapes.push_back(m.shape());
    strides.push_back(m.stride());
  }
  return Layout(IntTuple::tuple(std::move(shapes)), IntTuple::tuple(std::move(strides)));
}

Layout padToRank(const Layout& layout, size_t rank) {
  if (layout.rank() >= rank) return layout;
  std::vector<Layout> modes;
  for (size_t i = 0; i < layout.rank(); ++i) modes.push_back(layout.mode(i));
  while (modes.size() < rank) modes.push_back(Layout());
  return concatenate(modes);
}

Layout flatten(const Layout& layout) {
  return Layout(flatten(layout.shape()), flatten(layout.stride()));
}

// Builds a layout from flat lists: one mode is a plain leaf, none is 1:0.
static Layout fromFlat(const std::vector<int64_t>& shapes, const std::vector<int64_t>& strides) {
  if (shapes.empty()) return Layout();
  if (shapes.size() == 1) return Layout(shapes[0], strides[0]);
  std::vector<IntTuple> s(shapes.begin(), shapes.end()), d(strides.begin(), strides.end());
  return Layout(IntTuple::tuple(std::move(s)), IntTuple::tuple(std::move(d)));
}

Layout coalesce(const Layout& layout) {
  std::vector<int64_t> shapes = leaves(layout.shape()), strides = leaves(layout.stride());
  std::vector<int64_t> outShapes, outStrides;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i] == 1) continue;  // a size-1 mode contributes nothing
    if (!outShapes.empty() && strides[i] == outShapes.back() * outStrides.back()) {
      outShapes.back() *= shapes[i];  // contiguous continuation of the previous mode
      continue;
    }
    outShapes.push_back(shapes[i]);
    outStrides.push_back(strides[i]);
  }
  if (outShapes.empty()) return Layout(1, 0);
  return fromFlat(outShapes, outStrides);
}

Layout coalesceModes(const Layout& layout) {
  if (layout.shape().isLeaf()) return coalesce(layout);
  std::vector<Layout> modes;
  for (size_t i = 0; i < layout.rank(); ++i) modes.push_back(coalesce(layout.mode(i)));
  return concatenate(modes);
}

Layout coalesce(const Layout& layout, const IntTuple& profile) {
  if (profile.isLeaf() || layout.shape().isLeaf()) return coalesce(layout);
  std::vector<Layout> modes;
  for (size_t i = 0; i < layout.rank(); ++i)
    modes.push_back(i < profile.rank() ? coalesce(layout.mode(i), profile.mode(i)) : layout.mode(i));
  return concatenate(modes);
}

Layout filter(const Layout& layout) {
  std::vector<int64_t> shapes = leaves(layout.shape()), strides = leaves(layout.stride());
  std::vector<int64_t> keptShapes, keptStrides;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i] == 1 || strides[i] == 0) continue;
    keptShapes.push_back(shapes[i]);
    keptStrides.push_back(strides[i]);
  }
  return coalesce(fromFlat(keptShapes, keptStrides));
}

std::vector<IndexTerm> indexTerms(const Layout& layout) {
  std::vector<int64_t> shapes = leaves(layout.shape()), strides = leaves(layout.stride());
  std::vector<IndexTerm> terms;
  int64_t divisor = 1;
  for (size_t i = 0; i < shapes.size(); ++i) {
    bool last = i + 1 == shapes.size();
    if (strides[i] != 0) terms.push_back({divisor, last ? 0 : shapes[i], strides[i]});
    if (shapes[i] > 0) divisor *= shapes[i];
  }
  return terms;
}

std::string toString(const Layout& layout) {
  return toString(layout.shape()) + ":" + toString(layout.stride());
}

}  // namespace argus::layout
