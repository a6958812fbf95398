#include "layout/int_tuple.h"

#include <algorithm>

namespace argus::layout {

IntTuple IntTuple::tuple(std::vector<IntTuple> children) {
  IntTuple t;
  t.children_ = std::move(children);
  return t;
}

bool IntTuple::operator==(const IntTuple& other) const {
  if (leaf_ != other.leaf_) return false;
  if (leaf_) return value_ == other.value_;
  return children_ == other.children_;
}

int64_t product(const IntTuple& t) {
  if (t.isLeaf()) return t.value();
  int64_t result = 1;
  for (const IntTuple& c : t.children()) result *= product(c);
  return result;
}

int depth(const IntTuple& t) {
  if (t.isLeaf()) return 0;
  int deepest = 0;
  for (const IntTuple& c : t.children()) deepest = std::max(deepest, depth(c));
  return 1 + deepest;
}

static void collectLeaves(const IntTuple& t, std::vector<int64_t>& out) {
  if (t.isLeaf()) {
    out.push_back(t.value());
    return;
  }
  for (const IntTuple& c : t.children()) collectLeaves(c, out);
}

std::vector<int64_t> leaves(const IntTuple& t) {
  std::vector<int64_t> out;
  collectLeaves(t, out);
  return out;
}

IntTuple flatten(const IntTuple& t) {
  if (t.isLeaf()) return t;
  std::vector<IntTuple> children;
  for (int64_t v : leaves(t)) children.emplace_back(v);
  return IntTuple::tuple(std::move(children));
}

bool congruent(const IntTuple& a, const IntTuple& b) {
  if (a.isLeaf() || b.isLeaf()) return a.isLeaf() && b.isLeaf();
  if (a.rank() != b.rank()) return false;
  for (size_t i = 0; i < a.rank(); ++i)
    if (!congruent(a.mode(i), b.mode(i))) return false;
  return true;
}

IntTuple unflattenLike(const IntTuple& profile, const std::vector<int64_t>& values, size_t& next) {
  if (profile.isLeaf()) return IntTuple(next < values.size() ? values[next++] : 0);
  std::vector<IntTuple> children;
  for (const IntTuple& c : profile.children()) children.push_back(unflattenLike(c, values, next));
  return IntTuple::tuple(std::move(children));
}

IntTuple compactColMajor(const IntTuple& shape, int64_t start) {
  std::vector<int64_t> strides;
  int64_t current = start;
  for (int64_t s : leaves(shape)) {
    strides.push_back(current);
    current *= s;
  }
  size_t next = 0;
  return unflattenLike(shape, strides, next);
}

IntTuple compactRowMajor(const IntTuple& shape, int64_t start) {
  std::vector<int64_t> sizes = leaves(shape);
  std::vector<int64_t> strides(sizes.size());
  int64_t current = start;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = current;
    current *= sizes[i];
  }
  size_t next = 0;
  return unflattenLike(shape, strides, next);
}

static IntTuple ceilDivImpl(const IntTuple& shape, int64_t& divisor) {
  if (shape.isLeaf()) {
    int64_t s = shape.value();
    int64_t quotient = (s + divisor - 1) / divisor;
    divisor = (divisor + s - 1) / s;
    return IntTuple(quotient);
  }
  std::vector<IntTuple> children;
  for (const IntTuple& c : shape.children()) children.push_back(ceilDivImpl(c, divisor));
  return IntTuple::tuple(std::move(children));
}

IntTuple ceilDiv(const IntTuple& shape, int64_t divisor) {
  if (divisor <= 0) return shape;
  return ceilDivImpl(shape, divisor);
}

std::string toString(const IntTuple& t) {
  if (t.isLeaf()) return std::to_string(t.value());
  std::string out = "(";
  for (size_t i = 0; i < t.children().size(); ++i) {
    if (i) out += ",";
    out += toString(t.children()[i]);
  }
  return out + ")";
}

}  // namespace argus::layout
