// Thread-value layouts: (thread, value) -> offset in a column-major tile of
// rows x cols elements (offset = row + rows * col), CuTe's convention for MMA
// and copy atoms (e.g. SM80_16x8x16_F32BF16BF16F32_TN's ALayout/BLayout/CLayout).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "layout/layout.h"
#include "layout/result.h"

namespace argus::layout {

struct TVLayout {
  Layout layout;       // rank 2: (threads, values) -> tile offset
  int64_t rows = 1;    // tile extent of the first (fastest) coordinate
  int64_t cols = 1;
  std::string rowName = "row", colName = "col";

  int64_t threads() const { return layout.mode(0).size(); }
  int64_t values() const { return layout.mode(1).size(); }
  // The tile coordinate held by `thread` as its `value`-th element.
  int64_t offset(int64_t thread, int64_t value) const {
    return layout.mode(0)(thread) + layout.mode(1)(value);
  }
  int64_t row(int64_t thread, int64_t value) const { return offset(thread, value) % rows; }
  int64_t col(int64_t thread, int64_t value) const { return offset(thread, value) / rows; }
};

// Checked construction from a user layout: rank 2, offsets inside the tile.
Result<TVLayout> makeTVLayout(const Layout& layout, int64_t rows, int64_t cols);

// The inverse map, tile offset -> index i of (thread, value) with thread =
// i % threads() and value = i / threads(); an error if two (thread, value)
// pairs hold the same element.
Result<Layout> tileToThreadValue(const TVLayout& tv);

// mma.sync.m16n8k16 operand fragments. `operand` is 'A' (tile M x K = 16 x 16,
// dtype bf16 or f16), 'B' (tile N x K = 8 x 16, as CuTe stores it; bf16/f16) or
// 'C'/'D' (tile M x N = 16 x 8, accumulator f32 or f16).
Result<TVLayout> mmaM16N8K16(char operand, std::string_view dtype);

// The accumulator (D) fragment of wgmma.mma_async.m64nNk16 (sm_90a): 128 threads
// of one warpgroup hold a 64 x N tile (rows m, columns n), warp w of the group
// the rows 16w..16w+15; N is a multiple of 8 up to 256, dtype f32 or f16.
Result<TVLayout> wgmmaM64NK16Accumulator(int64_t n, std::string_view dtype);

// The A fragment wgmma.mma_async.m64nNk16 reads from registers: a 64 x 16 tile (m, k),
// warp w of the group the rows 16w..16w+15 as mma.m16n8k16's A fragment; bf16 or f16.
Result<TVLayout> wgmmaM64NK16A(std::string_view dtype);

// ldmatrix.sync.aligned.m8n8.xN(.trans).b16 destination fragments. The N 8x8
// matrices tile the result as: x1 -> 8x8; x2 -> 16x8 (matrix j at rows 8j..);
// x4 -> 16x16 (matrix j at rows 8(j%2).., cols 8(j/2)..), the order in which
// an mma A fragment is loaded. Value v of a thread is element v%2 of register v/2.
// stmatrix's source fragments are the same layouts.
Result<TVLayout> ldmatrix(int matrices, bool transpose);

}  // namespace argus::layout
