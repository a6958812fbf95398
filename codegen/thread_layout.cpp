#include "codegen/thread_layout.h"

namespace argus::codegen {

namespace {

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

int log2Exact(int64_t x) {
  int n = 0;
  while ((int64_t{1} << n) < x) ++n;
  return n;
}

}  // namespace

uint32_t ThreadLayout::laneBitsOf(int dim) const {
  uint32_t mask = 0;
  for (int b = 0; b < numThreadBits && b < 5; ++b)
    if (bits[b].dim == dim) mask |= 1u << b;
  return mask;
}

uint32_t ThreadLayout::warpBitsOf(int dim) const {
  uint32_t mask = 0;
  for (int b = 5; b < numThreadBits; ++b)
    if (bits[b].dim == dim) mask |= 1u << b;
  return mask;
}

uint32_t ThreadLayout::replicaLaneBits() const { return laneBitsOf(-1); }
uint32_t ThreadLayout::replicaWarpBits() const { return warpBitsOf(-1); }

int64_t linearIndex(const std::vector<int64_t>& coord, const std::vector<int64_t>& shape) {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + (d < coord.size() ? coord[d] : 0);
  return index;
}

bool valueBitSteps(const ThreadLayout& layout, std::vector<std::vector<int64_t>>& steps) {
  const int64_t n = layout.numValues();
  if (!isPowerOfTwo(n)) return false;
  steps.clear();
  for (int64_t bit = 1; bit < n; bit <<= 1) steps.push_back(layout.valueCoord[static_cast<size_t>(bit)]);
  for (int64_t v = 0; v < n; ++v) {
    std::vector<int64_t> predicted(static_cast<size_t>(layout.rank()), 0);
    for (size_t b = 0; b < steps.size(); ++b)
      if ((v >> b) & 1)
        for (size_t d = 0; d < predicted.size(); ++d) predicted[d] += steps[b][d];
    if (predicted != layout.valueCoord[static_cast<size_t>(v)]) return false;
  }
  return true;
}

bool analyzeThreadLayout(const ir::Layout& layout, int64_t numWarps, ThreadLayout& out,
                         std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (!isPowerOfTwo(numWarps) || numWarps > 32) return fail("the number of warps is not a power of two up to 32");
  for (int64_t e : layout.parent)
    if (!isPowerOfTwo(e)) return fail("a layout extent is not a power of two");
  out = ThreadLayout{};
  out.layout = layout;
  out.dist = ir::Distribution::of(layout, numWarps);
  out.shape = layout.shape();
  const int rank = static_cast<int>(out.shape.size());
  const int64_t numThreads = numWarps * 32;
  out.numThreadBits = log2Exact(numThreads);

  // Each thread-id bit alone: which coordinate does it move, and how far?
  out.bits.assign(out.numThreadBits, {});
  for (int b = 0; b < out.numThreadBits; ++b) {
    std::vector<int64_t> c = out.dist.coordinate(int64_t{1} << b, 0);
    for (int d = 0; d < rank; ++d) {
      if (c[d] == 0) continue;
      if (out.bits[b].dim >= 0 || !isPowerOfTwo(c[d]))
        return fail("thread-id bit " + std::to_string(b) + " does not move one coordinate by a power of two");
      out.bits[b] = {d, c[d]};
    }
    if (!out.dist.isPrimaryOwner(int64_t{1} << b)) out.ownerMask |= 1u << b;
  }
  const int64_t numValues = out.dist.valuesPerThread;
  out.valueCoord.reserve(numValues);
  for (int64_t v = 0; v < numValues; ++v) out.valueCoord.push_back(out.dist.coordinate(0, v));

  // Check the bit-linear model against the distribution: every thread with
  // value 0, and every value with the first and the last thread.
  auto predicted = [&](int64_t t, int64_t v) {
    std::vector<int64_t> c = out.valueCoord[v];
    for (int b = 0; b < out.numThreadBits; ++b)
      if (((t >> b) & 1) && out.bits[b].dim >= 0) c[out.bits[b].dim] += out.bits[b].step;
    return c;
  };
  for (int64_t t = 0; t < numThreads; ++t) {
    if (predicted(t, 0) != out.dist.coordinate(t, 0))
      return fail("the coordinates of thread " + std::to_string(t) + " are not bit-linear");
    bool owner = (static_cast<uint32_t>(t) & out.ownerMask) == 0;
    if (owner != out.dist.isPrimaryOwner(t))
      return fail("the primary owners are not a bit pattern (thread " + std::to_string(t) + ")");
  }
  for (int64_t v = 0; v < numValues; ++v)
    for (int64_t t : {int64_t{0}, numThreads - 1})
      if (predicted(t, v) != out.dist.coordinate(t, v))
        return fail("value " + std::to_string(v) + " of thread " + std::to_string(t) + " is not where the model puts it");
  return true;
}

}  // namespace argus::codegen
