#include "layout/tv_layout.h"

#include <vector>

#include "layout/algebra.h"

namespace argus::layout {
namespace {

IntTuple tuple(std::initializer_list<IntTuple> children) { return IntTuple::tuple(children); }

// Threads are (threadID_in_group, groupID) = (lane % 4, lane / 4) in the PTX ISA's terms.
TVLayout make(IntTuple shape, IntTuple stride, int64_t rows, int64_t cols, const char* rowName,
              const char* colName) {
  return TVLayout{Layout(std::move(shape), std::move(stride)), rows, cols, rowName, colName};
}

}  // namespace

Result<TVLayout> makeTVLayout(const Layout& layout, int64_t rows, int64_t cols) {
  if (layout.rank() != 2)
    return makeError("a thread-value layout has two modes (thread, value), but " +
                     toString(layout) + " has " + std::to_string(layout.rank()));
  if (rows <= 0 || cols <= 0) return makeError("the tile extents must be positive");
  for (int64_t s : leaves(layout.stride()))
    if (s < 0) return makeError("a thread-value layout must not have negative strides");
  if (layout.cosize() > rows * cols)
    return makeError("the layout " + toString(layout) + " reaches offset " +
                     std::to_string(layout.cosize() - 1) + ", outside the " + std::to_string(rows) +
                     "x" + std::to_string(cols) + " tile");
  return TVLayout{layout, rows, cols};
}

Result<Layout> tileToThreadValue(const TVLayout& tv) {
  if (tv.layout.cosize() > (int64_t{1} << 24) || tv.layout.size() > (int64_t{1} << 24))
    return makeError("the thread-value layout " + toString(tv.layout) + " is too large to invert");
  std::vector<bool> held(static_cast<size_t>(tv.layout.cosize()), false);
  for (int64_t i = 0; i < tv.layout.size(); ++i) {
    int64_t offset = tv.layout(i);
    if (offset < 0 || held[static_cast<size_t>(offset)])
      return makeError("the thread-value layout " + toString(tv.layout) +
                       " is not injective: element " + std::to_string(offset) + " is held twice");
    held[static_cast<size_t>(offset)] = true;
  }
  return leftInverse(tv.layout);
}

Result<TVLayout> mmaM16N8K16(char operand, std::string_view dtype) {
  bool half = dtype == "bf16" || dtype == "f16";
  switch (operand) {
    case 'A':
      if (!half) return makeError("mma.m16n8k16 A operands are bf16 or f16, not '" + std::string(dtype) + "'");
      // a_i: row = groupID + 8*((i>>1)&1), col = 2*threadID_in_group + (i&1) + 8*(i>>2).
      return make(tuple({tuple({4, 8}), tuple({2, 2, 2})}), tuple({tuple({32, 1}), tuple({16, 8, 128})}),
                  16, 16, "m", "k");
    case 'B':
      if (!half) return makeError("mma.m16n8k16 B operands are bf16 or f16, not '" + std::string(dtype) + "'");
      // b_i: k = 2*threadID_in_group + (i&1) + 8*(i>>1), n = groupID.
      return make(tuple({tuple({4, 8}), tuple({2, 2})}), tuple({tuple({16, 1}), tuple({8, 64})}), 8, 16,
                  "n", "k");
    case 'C':
    case 'D':
      if (dtype != "f32" && dtype != "f16")
        return makeError("mma.m16n8k16 accumulators are f32 or f16, not '" + std::string(dtype) + "'");
      // c_i: row = groupID + 8*(i>>1), col = 2*threadID_in_group + (i&1).
      return make(tuple({tuple({4, 8}), tuple({2, 2})}), tuple({tuple({32, 1}), tuple({16, 8})}), 16, 8,
                  "m", "n");
    default:
      return makeError(std::string("mma.m16n8k16 has operands A, B and C, not '") + operand + "'");
  }
}

Result<TVLayout> wgmmaM64NK16Accumulator(int64_t n, std::string_view dtype) {
  if (dtype != "f32" && dtype != "f16")
    return makeError("wgmma accumulators are f32 or f16, not '" + std::string(dtype) + "'");
  if (n < 8 || n > 256 || n % 8 != 0)
    return makeError("wgmma.m64nNk16 has N a multiple of 8 from 8 to 256, not " + std::to_string(n));
  // d_i of thread t (warp w = t / 32 of the group): row = 16*w + groupID + 8*((i>>1)&1),
  // col = 8*(i>>2) + 2*threadID_in_group + (i&1); the 64 x N tile is column-major.
  return make(tuple({tuple({4, 8, 4}), tuple({2, 2, n / 8})}), tuple({tuple({128, 1, 16}), tuple({64, 8, 512})}),
              64, n, "m", "n");
}

Result<TVLayout> wgmmaM64NK16A(std::string_view dtype) {
  if (dtype != "bf16" && dtype != "f16")
    return makeError("wgmma A operands in registers are bf16 or f16, not '" + std::string(dtype) + "'");
  // a_i of thread t (warp w = t / 32): row = 16*w + groupID + 8*((i>>1)&1),
  // col = 2*threadID_in_group + (i&1) + 8*(i>>2); the 64 x 16 tile is column-major.
  return make(tuple({tuple({4, 8, 4}), tuple({2, 2, 2})}), tuple({tuple({128, 1, 16}), tuple({64, 8, 512})}), 64, 16,
              "m", "k");
}

Result<TVLayout> ldmatrix(int matrices, bool transpose) {
  // Without .trans a thread holds row lane/4, columns 2*(lane%4) + {0,1} of each
  // matrix; with .trans it holds the transposed element (row and column swap).
  switch (matrices) {
    case 1: {
      IntTuple t = transpose ? tuple({2, 8}) : tuple({16, 1});
      return make(tuple({tuple({4, 8}), 2}), tuple({t, transpose ? 1 : 8}), 8, 8, "row", "col");
    }
    case 2: {
      IntTuple t = transpose ? tuple({2, 16}) : tuple({32, 1});
      return make(tuple({tuple({4, 8}), tuple({2, 2})}), tuple({t, tuple({transpose ? 1 : 16, 8})}), 16, 8,
                  "row", "col");
    }
    case 4: {
      IntTuple t = transpose ? tuple({2, 16}) : tuple({32, 1});
      return make(tuple({tuple({4, 8}), tuple({2, 2, 2})}),
                  tuple({t, tuple({transpose ? 1 : 16, 8, 128})}), 16, 16, "row", "col");
    }
    default:
      return makeError("ldmatrix loads 1, 2 or 4 matrices, not " + std::to_string(matrices));
  }
}

}  // namespace argus::layout
