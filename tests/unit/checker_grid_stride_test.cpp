// Which indices the blocks of a grid-stride loop visit together
// (checker/grid_stride.h), the arithmetic behind AG2040's launch for a
// persistent kernel whose loop over tiles leaves some to no block.
#include <gtest/gtest.h>

#include "checker/grid_stride.h"

namespace argus::checker {
namespace {

std::vector<int64_t> iota(int64_t n, int64_t scale = 1, int64_t divisor = 1) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) v[static_cast<size_t>(b)] = b * scale / divisor;
  return v;
}

TEST(GridStride, EveryBlockStartingAtItsIdAndSteppingByTheGridVisitsEverything) {
  EXPECT_EQ(firstIndexNoBlockVisits(iota(132), std::vector<int64_t>(132, 132), 264), std::nullopt);
}

TEST(GridStride, ClustersOfTwoSteppingByEveryBlockSkipTheSecondHalf) {
  // for pair in range(program_id(0) // 2, n, num_programs(0)): 66 starts, step 132.
  EXPECT_EQ(firstIndexNoBlockVisits(iota(132, 1, 2), std::vector<int64_t>(132, 132), 131 + 132), 66);
  // Stepping by the clusters, num_programs(0) // 2, visits every pair.
  EXPECT_EQ(firstIndexNoBlockVisits(iota(132, 1, 2), std::vector<int64_t>(132, 66), 65 + 66), std::nullopt);
}

TEST(GridStride, ATooLongStepOrALateStartLeavesTheFirstGap) {
  EXPECT_EQ(firstIndexNoBlockVisits(iota(132), std::vector<int64_t>(132, 264), 131 + 264), 132);
  EXPECT_EQ(firstIndexNoBlockVisits(iota(4, 1), {4, 4, 4, 4}, 8), std::nullopt);
  std::vector<int64_t> late = iota(4);
  for (int64_t& s : late) s += 1;  // range(program_id(0) + 1, ...): index 0 is nobody's
  EXPECT_EQ(firstIndexNoBlockVisits(late, {4, 4, 4, 4}, 8), 0);
}

TEST(GridStride, NegativeStartsCountFromTheirFirstIndexInRangeAndBadStepsDecideNothing) {
  EXPECT_EQ(firstIndexNoBlockVisits({-3, -2}, {2, 2}, 6), std::nullopt);  // 1, 3, 5 and 0, 2, 4
  EXPECT_EQ(firstIndexNoBlockVisits({0, 1}, {0, 2}, 4), std::nullopt);
  EXPECT_EQ(firstIndexNoBlockVisits({}, {}, 4), std::nullopt);
}

}  // namespace
}  // namespace argus::checker
