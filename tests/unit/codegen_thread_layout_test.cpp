// The bit-field view of tile distributions that codegen builds on.
#include <gtest/gtest.h>

#include "codegen/thread_layout.h"

namespace argus::codegen {
namespace {

using ir::Layout;

TEST(ThreadLayout, OneDimensionalTileOverFourWarps) {
  ThreadLayout map;
  std::string why;
  ASSERT_TRUE(analyzeThreadLayout(Layout::canonical({1024}), 4, map, &why)) << why;
  ASSERT_EQ(map.numThreadBits, 7);
  for (int b = 0; b < 7; ++b) {
    EXPECT_EQ(map.bits[b].dim, 0);
    EXPECT_EQ(map.bits[b].step, int64_t{1} << b);
  }
  ASSERT_EQ(map.numValues(), 8);
  EXPECT_EQ(map.valueCoord[3], std::vector<int64_t>{384});
  EXPECT_EQ(map.ownerMask, 0u);
  EXPECT_EQ(map.laneBitsOf(0), 31u);
  EXPECT_EQ(map.warpBitsOf(0), 96u);
}

TEST(ThreadLayout, ValueBitStepsOfATwoDimensionalTile) {
  ThreadLayout map;
  ASSERT_TRUE(analyzeThreadLayout(Layout::canonical({128, 16}), 4, map, nullptr));
  std::vector<std::vector<int64_t>> steps;
  ASSERT_TRUE(valueBitSteps(map, steps));
  ASSERT_EQ(static_cast<int64_t>(int64_t{1} << steps.size()), map.numValues());
  for (int64_t v = 0; v < map.numValues(); ++v) {
    std::vector<int64_t> sum(2, 0);
    for (size_t b = 0; b < steps.size(); ++b)
      if ((v >> b) & 1) sum[0] += steps[b][0], sum[1] += steps[b][1];
    EXPECT_EQ(sum, map.valueCoord[static_cast<size_t>(v)]) << "value " << v;
  }
}

TEST(ThreadLayout, ValuesThatAreNotBitLinearHaveNoSteps) {
  ThreadLayout map;
  ASSERT_TRUE(analyzeThreadLayout(Layout::canonical({1024}), 4, map, nullptr));
  map.valueCoord[3] = {0};  // no longer value 1's step plus value 2's
  std::vector<std::vector<int64_t>> steps;
  EXPECT_FALSE(valueBitSteps(map, steps));
  map.valueCoord.pop_back();  // seven values: not a power of two
  EXPECT_FALSE(valueBitSteps(map, steps));
}

TEST(ThreadLayout, SmallTileIsReplicated) {
  ThreadLayout map;
  ASSERT_TRUE(analyzeThreadLayout(Layout::canonical({16}), 4, map, nullptr));
  EXPECT_EQ(map.numValues(), 1);
  EXPECT_EQ(map.replicaLaneBits(), 16u);  // lane bit 4
  EXPECT_EQ(map.replicaWarpBits(), 96u);  // both warp bits
  EXPECT_EQ(map.ownerMask, 16u | 96u);
}

TEST(ThreadLayout, ReducedAxisBitsAreReplicas) {
  ThreadLayout map;
  Layout reduced{{64, 64}, 1u};  // axis 0 reduced: shape (1, 64)
  ASSERT_TRUE(analyzeThreadLayout(reduced, 4, map, nullptr));
  EXPECT_EQ(map.shape, (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(map.numValues(), 2);
  EXPECT_EQ(map.laneBitsOf(1), 31u);
  EXPECT_EQ(map.warpBitsOf(-1), 96u);  // the warps spread axis 0 in the parent
  EXPECT_EQ(map.ownerMask, 96u);
}

TEST(ThreadLayout, ManyLayoutsAreBitLinear) {
  // analyzeThreadLayout checks the model against ir::Distribution itself.
  int checked = 0;
  for (int64_t warps : {1, 2, 4, 8, 32})
    for (int64_t a : {1, 2, 8, 32, 128})
      for (int64_t b : {1, 4, 16, 64, 256})
        for (uint32_t mask = 0; mask < 4; ++mask) {
          ThreadLayout map;
          std::string why;
          EXPECT_TRUE(analyzeThreadLayout(Layout{{a, b}, mask}, warps, map, &why))
              << a << "x" << b << " mask " << mask << " warps " << warps << ": " << why;
          ++checked;
        }
  for (int64_t warps : {4, 16})
    for (uint32_t mask = 0; mask < 8; ++mask) {
      ThreadLayout map;
      std::string why;
      EXPECT_TRUE(analyzeThreadLayout(Layout{{4, 8, 64}, mask}, warps, map, &why)) << why;
      ++checked;
    }
  EXPECT_EQ(checked, 516);
}

TEST(ThreadLayout, RejectsNonPowersOfTwo) {
  ThreadLayout map;
  std::string why;
  EXPECT_FALSE(analyzeThreadLayout(Layout::canonical({48}), 4, map, &why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(analyzeThreadLayout(Layout::canonical({64}), 3, map, &why));
}

TEST(ThreadLayout, LinearIndex) {
  EXPECT_EQ(linearIndex({2, 3}, {4, 8}), 19);
  EXPECT_EQ(linearIndex({0, 0, 5}, {2, 2, 8}), 5);
}

}  // namespace
}  // namespace argus::codegen
