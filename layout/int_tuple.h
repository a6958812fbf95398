// IntTuple: CuTe's hierarchical integer tuple, a tree whose leaves are integers.
// Shapes, strides and coordinates of layouts are IntTuples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace argus::layout {

class IntTuple {
 public:
  IntTuple() : leaf_(false) {}  // the empty tuple ()
  IntTuple(int64_t value) : leaf_(true), value_(value) {}  // NOLINT: a leaf converts implicitly
  IntTuple(int value) : IntTuple(static_cast<int64_t>(value)) {}  // NOLINT
  static IntTuple tuple(std::vector<IntTuple> children);

  bool isLeaf() const { return leaf_; }
  int64_t value() const { return value_; }  // meaningful for leaves only
  const std::vector<IntTuple>& children() const { return children_; }

  // Number of top-level modes: 1 for a leaf (CuTe's rank).
  size_t rank() const { return leaf_ ? 1 : children_.size(); }
  // Mode i (a leaf is its own mode 0); i must be < rank().
  const IntTuple& mode(size_t i) const { return leaf_ ? *this : children_[i]; }

  bool operator==(const IntTuple& other) const;
  bool operator!=(const IntTuple& other) const { return !(*this == other); }

 private:
  bool leaf_;
  int64_t value_ = 0;
  std::vector<IntTuple> children_;
};

// Product of all leaves (1 for the empty tuple): CuTe's size of a shape.
int64_t product(const IntTuple& t);
// 0 for a leaf, 1 + the deepest child for a tuple.
int depth(const IntTuple& t);
// The leaves in order (depth-first, left to right).
std::vector<int64_t> leaves(const IntTuple& t);
// A leaf stays a leaf; a tuple becomes the tuple of its leaves.
IntTuple flatten(const IntTuple& t);
// Same tree structure (leaves in the same places).
bool congruent(const IntTuple& a, const IntTuple& b);
// Rebuilds `values` (consumed from `next`) in the structure of `profile`.
IntTuple unflattenLike(const IntTuple& profile, const std::vector<int64_t>& values, size_t& next);
// Column-major (first mode fastest) compact strides for `shape`, starting at `start`.
IntTuple compactColMajor(const IntTuple& shape, int64_t start = 1);
// Row-major (last mode fastest) compact strides.
IntTuple compactRowMajor(const IntTuple& shape, int64_t start = 1);
// CuTe's ceil_div of a shape by an integer: divides the leading modes first.
IntTuple ceilDiv(const IntTuple& shape, int64_t divisor);
// CuTe notation: `8`, `(2,(3,4))`.
std::string toString(const IntTuple& t);

}  // namespace argus::layout
