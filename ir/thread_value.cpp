#include "ir/thread_value.h"

#include "layout/int_tuple.h"

namespace argus::ir {

std::vector<Distribution::Digit> fragmentDigits(const layout::Layout& mode, int64_t rows) {
  std::vector<Distribution::Digit> digits;
  const std::vector<int64_t> extents = layout::leaves(mode.shape());
  const std::vector<int64_t> strides = layout::leaves(mode.stride());
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] <= 1) continue;
    const bool movesColumn = strides[i] >= rows;
    digits.push_back({movesColumn ? 1 : 0, extents[i], movesColumn ? strides[i] / rows : strides[i]});
  }
  return digits;
}

layout::TVLayout threadValueLayout(const Layout& irLayout, int64_t numWarps) {
  const Distribution dist = Distribution::of(irLayout, numWarps);
  const std::vector<int64_t> shape = irLayout.shape();
  // Column-major strides of the tile: coordinate d moves the offset by tileStride[d].
  std::vector<int64_t> tileStride(shape.size(), 1);
  for (size_t d = 1; d < shape.size(); ++d) tileStride[d] = tileStride[d - 1] * shape[d - 1];
  std::vector<layout::IntTuple> threadShape, threadStride, valueShape, valueStride;
  // Digits of reduced axes are replicas for threads and take no part in the value index.
  auto addThreadDigits = [&](const std::vector<Distribution::Digit>& digits, int64_t span) {
    int64_t covered = 1;
    for (const Distribution::Digit& digit : digits) {
      const bool reduced = irLayout.isReduced(static_cast<size_t>(digit.dim));
      threadShape.emplace_back(digit.extent);
      threadStride.emplace_back(reduced ? 0 : digit.stride * tileStride[static_cast<size_t>(digit.dim)]);
      covered *= digit.extent;
    }
    if (covered < span) {  // ids beyond the digits hold replicas
      threadShape.emplace_back((span + covered - 1) / covered);
      threadStride.emplace_back(0);
    }
  };
  addThreadDigits(dist.laneDigits, 32);
  addThreadDigits(dist.warpDigits, dist.numWarps);
  for (const Distribution::Digit& digit : dist.valueDigits) {
    if (irLayout.isReduced(static_cast<size_t>(digit.dim))) continue;
    valueShape.emplace_back(digit.extent);
    valueStride.emplace_back(digit.stride * tileStride[static_cast<size_t>(digit.dim)]);
  }
  if (valueShape.empty()) {
    valueShape.emplace_back(1);
    valueStride.emplace_back(0);
  }
  int64_t rows = shape.empty() ? 1 : shape[0], cols = 1;
  for (size_t d = 1; d < shape.size(); ++d) cols *= shape[d];
  // A mode of one leaf is that leaf, as CuTe writes it.
  auto mode = [](const std::vector<layout::IntTuple>& leaves) {
    return leaves.size() == 1 ? leaves[0] : layout::IntTuple::tuple(leaves);
  };
  layout::Layout tv(layout::IntTuple::tuple({mode(threadShape), mode(valueShape)}),
                    layout::IntTuple::tuple({mode(threadStride), mode(valueStride)}));
  return layout::TVLayout{std::move(tv), rows, cols, "row", "col"};
}

std::string layoutProblem(const Layout& layout, int64_t numWarps) {
  const std::vector<int64_t> shape = layout.parent;
  int64_t elements = 1;
  for (int64_t extent : shape) {
    if (extent < 1) return "every extent must be positive";
    if (extent > (int64_t{1} << 31) / elements) return "a register tile holds at most 2^31 elements";
    elements *= extent;
  }
  if (numWarps < 1) return "a block has at least one warp";
  if (layout.isMma()) {
    if (shape.size() != 2) return "an mma layout is two-dimensional";
    if (layout.warpsM < 1 || layout.warpsN < 1) return "an mma layout's warp grid must be positive";
    if (layout.warpsM * layout.warpsN > numWarps)
      return "its warp grid needs " + std::to_string(layout.warpsM * layout.warpsN) + " warps, but the block has " +
             std::to_string(numWarps);
    if (layout.wgmma) {
      if (shape[0] != 16 * layout.warpsM) return "a wgmma tile has 64 rows per warpgroup";
      if (shape[1] % 8 != 0 || shape[1] > 256) return "a wgmma tile has a multiple of 8 columns, at most 256";
      return "";
    }
    if (shape[0] % (16 * layout.warpsM) != 0 || shape[1] % (8 * layout.warpsN) != 0)
      return "each warp's part of an mma tile must be whole 16 x 8 atoms: rows a multiple of " +
             std::to_string(16 * layout.warpsM) + " and columns a multiple of " + std::to_string(8 * layout.warpsN);
    return "";
  }
  if (layout.vec > 1 && (shape.empty() || shape.back() % layout.vec != 0))
    return "vec=" + std::to_string(layout.vec) + " must divide the last extent";
  return "";
}

}  // namespace argus::ir
