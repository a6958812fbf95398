// Layout: CuTe's hierarchical (shape : stride) function from coordinates to
// offsets. Shape and stride are congruent IntTuples; an integer index is read
// as a colexicographic (first mode fastest) coordinate, and the last mode is
// unbounded, as in CuTe, so that compositions may index past size().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layout/int_tuple.h"
#include "layout/result.h"

namespace argus::layout {

class Layout {
 public:
  Layout() : shape_(1), stride_(0) {}  // 1:0
  // Callers guarantee congruence; use makeLayout(shape, stride) for checked input.
  Layout(IntTuple shape, IntTuple stride) : shape_(std::move(shape)), stride_(std::move(stride)) {}

  const IntTuple& shape() const { return shape_; }
  const IntTuple& stride() const { return stride_; }
  size_t rank() const { return shape_.rank(); }
  int depth() const { return layout::depth(shape_); }
  int64_t size() const { return product(shape_); }
  // One past the largest offset (CuTe's cosize for non-negative strides).
  int64_t cosize() const;
  // Mode i as a layout (CuTe's layout<i> / get<i>); i < rank().
  Layout mode(size_t i) const { return Layout(shape_.mode(i), stride_.mode(i)); }

  // Offset of the index-th element (colexicographic order).
  int64_t operator()(int64_t index) const;
  // Offset of a coordinate: an integer, or a tuple whose modes are integers or
  // coordinates of the corresponding shape modes (CuTe's crd2idx).
  Result<int64_t> operator()(const IntTuple& coordinate) const;
  // The natural (congruent to shape) coordinate of an index.
  IntTuple coordinateOf(int64_t index) const;

  bool operator==(const Layout& other) const {
    return shape_ == other.shape_ && stride_ == other.stride_;
  }
  bool operator!=(const Layout& other) const { return !(*this == other); }

 private:
  IntTuple shape_;
  IntTuple stride_;
};

// Checked construction: shape and stride congruent, shape leaves positive.
Result<Layout> makeLayout(const IntTuple& shape, const IntTuple& stride);
// Compact column-major (CuTe's default, LayoutLeft) layout of a shape.
Layout makeLayout(const IntTuple& shape);
Layout makeColMajor(const IntTuple& shape);
Layout makeRowMajor(const IntTuple& shape);
// Compact layout whose modes get increasing strides in the order given by
// `order` (congruent to shape; smaller order value = faster mode).
Result<Layout> makeOrderedLayout(const IntTuple& shape, const IntTuple& order);
// Concatenates layouts as the modes of a new layout: make_layout(A, B, ...).
Layout concatenate(const std::vector<Layout>& modes);
// Appends 1:0 modes until `rank` (CuTe's append<R>).
Layout padToRank(const Layout& layout, size_t rank);

// (s0,s1,...):(d0,d1,...) with all leaves as top-level modes.
Layout flatten(const Layout& layout);
// Simplest layout with the same function on [0, size): depth <= 1.
Layout coalesce(const Layout& layout);
// Coalesces each top-level mode separately, keeping the rank (CuTe's
// coalesce(layout, Step<_1,_1,...>{})).
Layout coalesceModes(const Layout& layout);
// Coalesces at the leaves of `profile`: a tuple profile recurses into the
// corresponding modes (others are kept), an integer coalesces that whole mode.
Layout coalesce(const Layout& layout, const IntTuple& profile);
// Drops stride-0 and size-1 modes, then coalesces (CuTe's filter).
Layout filter(const Layout& layout);

// The index -> offset function as a sum of ((index / divisor) % modulus) * stride
// terms, one per flattened mode with a non-zero stride (modulus 0: no modulo,
// the unbounded last mode). Codegen and the checker build their index
// arithmetic and SMT terms from these.
struct IndexTerm {
  int64_t divisor = 1, modulus = 0, stride = 0;
};
std::vector<IndexTerm> indexTerms(const Layout& layout);

// CuTe notation without static underscores: `(2,3):(1,2)`, `8:1`.
std::string toString(const Layout& layout);

}  // namespace argus::layout
