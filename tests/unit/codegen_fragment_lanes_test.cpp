// Codegen's ldmatrix addressing for mma.sync operands against the PTX ISA: each lane's
// row address (codegen/fragment_lanes.h) put through ldmatrix's fragment (which lane
// receives which element of each 8x8 matrix, layout/tv_layout.h) must hand every lane
// exactly its elements of mma.m16n8k16's A and B fragments (layout/tv_layout.h, whose
// tests check the ISA's tables).
#include <gtest/gtest.h>

#include <utility>

#include "codegen/fragment_lanes.h"
#include "ir/types.h"
#include "layout/tv_layout.h"

namespace argus::codegen {
namespace {

// Block coordinate (row, col) of half `half` of register `reg` of `lane` after the load.
std::pair<int64_t, int64_t> loaded(const MatrixRowLanes& load, int64_t lane, int64_t reg, int64_t half) {
  const layout::TVLayout matrix = *layout::ldmatrix(1, load.transpose);
  // Register `reg` comes from matrix `reg`, whose row r is at the address lane 8 * reg + r gives.
  const int64_t row = matrix.row(lane, half), col = matrix.col(lane, half);
  const int64_t addressLane = 8 * reg + row;
  return {load.row.of(addressLane), load.col.of(addressLane) + col};
}

TEST(FragmentLanes, ALoadsTheMmaAFragment) {
  const MatrixRowLanes load = mmaOperandLanes(MmaOperandLoad::A);
  const layout::TVLayout a = *layout::mmaM16N8K16('A', "bf16");  // (m, k)
  ASSERT_EQ(load.matrices * 2, a.values());
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t reg = 0; reg < load.matrices; ++reg)
      for (int64_t half = 0; half < 2; ++half) {
        const int64_t i = 2 * reg + half;  // a_i
        EXPECT_EQ(loaded(load, lane, reg, half), std::make_pair(a.row(lane, i), a.col(lane, i)))
            << "lane " << lane << " a" << i;
      }
}

// B's fragment is given as (n, k) of one 8-column atom; registers 2j, 2j+1 are b0..b3 of atom j.
void expectBFragments(MmaOperandLoad which, bool storedByRows) {
  const MatrixRowLanes load = mmaOperandLanes(which);
  const layout::TVLayout b = *layout::mmaM16N8K16('B', "f16");  // (n, k), 8 x 16
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t reg = 0; reg < load.matrices; ++reg)
      for (int64_t half = 0; half < 2; ++half) {
        const int64_t atom = reg / 2, i = 2 * (reg % 2) + half;
        const int64_t n = 8 * atom + b.row(lane, i), k = b.col(lane, i);
        const std::pair<int64_t, int64_t> expected = storedByRows ? std::make_pair(k, n) : std::make_pair(n, k);
        EXPECT_EQ(loaded(load, lane, reg, half), expected) << "lane " << lane << " register " << reg << " half " << half;
      }
}

TEST(FragmentLanes, BStoredByRowsLoadsTheMmaBFragment) {
  expectBFragments(MmaOperandLoad::BByRowsX4, true);
  expectBFragments(MmaOperandLoad::BByRowsX2, true);
}

TEST(FragmentLanes, BStoredTransposedLoadsTheMmaBFragment) {
  expectBFragments(MmaOperandLoad::BTransposedX4, false);
  expectBFragments(MmaOperandLoad::BTransposedX2, false);
}

TEST(FragmentLanes, RowsAreWholeSixteenByteRowsInTheBlock) {
  // Each address starts an 8-element row inside the block the load covers.
  for (MmaOperandLoad which : {MmaOperandLoad::A, MmaOperandLoad::BByRowsX4, MmaOperandLoad::BByRowsX2,
                               MmaOperandLoad::BTransposedX4, MmaOperandLoad::BTransposedX2}) {
    const MatrixRowLanes load = mmaOperandLanes(which);
    for (int64_t lane = 0; lane < 32; ++lane) {
      EXPECT_EQ(load.col.of(lane) % 8, 0);
      EXPECT_LT(load.row.of(lane), 16);
      EXPECT_LT(load.col.of(lane), 16);
    }
  }
}

TEST(FragmentLanes, AccumulatorStorePutsEachElementInItsPlace) {
  // stmatrix is ldmatrix run backwards: register j's pair goes to matrix j's row lane / 4.
  const MatrixRowLanes store = accumulatorStoreLanes();
  const layout::TVLayout c = *layout::mmaM16N8K16('C', "f32");  // (m, n), 16 x 8
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t reg = 0; reg < store.matrices; ++reg)
      for (int64_t half = 0; half < 2; ++half) {
        const int64_t atom = reg / 2, i = 2 * (reg % 2) + half;  // c_i of atom `atom`
        EXPECT_EQ(loaded(store, lane, reg, half), std::make_pair(c.row(lane, i), 8 * atom + c.col(lane, i)))
            << "lane " << lane << " register " << reg << " half " << half;
      }
}

// A register tile in an mma accumulator layout, read as A: the element each half of each
// register holds (through the IR's distribution, the one the interpreter and the checker
// use) is the ISA's A fragment element for that thread.
void expectRegisterA(const ir::Layout& layout, int64_t numWarps, bool wgmma) {
  const ir::Distribution dist = ir::Distribution::of(layout, numWarps);
  const int64_t rowsPerWarp = layout.parent[0] / layout.warpsM, blocks = layout.parent[1] / 8;
  const layout::TVLayout mmaA = *layout::mmaM16N8K16('A', "bf16");
  const layout::TVLayout wgmmaA = *layout::wgmmaM64NK16A("bf16");
  for (int64_t t = 0; t < 32 * numWarps; ++t)
    for (int64_t m = 0; m < rowsPerWarp / 16; ++m)
      for (int64_t kb8 = 0; kb8 < blocks; kb8 += 2)
        for (int64_t reg = 0; reg < 4; ++reg)
          for (int64_t half = 0; half < 2; ++half) {
            const int64_t i = 2 * reg + half;
            int64_t row = (t / 32) * rowsPerWarp + 16 * m + mmaA.row(t % 32, i);
            if (wgmma) row = 64 * (t / 128) + wgmmaA.row(t % 128, i);  // one m atom per warp
            const int64_t col = 8 * kb8 + (wgmma ? wgmmaA.col(t % 128, i) : mmaA.col(t % 32, i));
            const int64_t v = accumulatorValueOfAFragment(m, kb8, blocks, reg) + half;
            EXPECT_EQ(dist.coordinate(t, v), (std::vector<int64_t>{row, col}))
                << ir::layoutStr(layout) << " t " << t << " m " << m << " kb8 " << kb8 << " a" << i;
          }
}

TEST(FragmentLanes, AccumulatorTilesAreRegisterAFragments) {
  expectRegisterA(ir::Layout::mma(64, 64, 4, 1), 4, false);   // attention's P @ V on mma.sync
  expectRegisterA(ir::Layout::mma(128, 32, 4, 1), 4, false);  // two atom rows per warp
  expectRegisterA(ir::Layout::wgmmaAccumulator(64, 64, 1), 4, true);
  expectRegisterA(ir::Layout::wgmmaAccumulator(128, 128, 2), 8, true);
}

}  // namespace
}  // namespace argus::codegen
