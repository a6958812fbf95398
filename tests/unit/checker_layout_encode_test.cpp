// The checker's symbolic distribution (checker/layout_encode.h) is the IR's: at every
// concrete thread and value it simplifies to Distribution::coordinate, and its ownership
// conditions hold exactly for Distribution::isPrimaryOwner. With the IR's own tests
// (ir_thread_value_test: the distribution is the ISA's fragment) and codegen's
// (codegen_thread_layout_test: its bit model is the distribution), the checker, the
// interpreter (which calls Distribution::coordinate) and codegen agree on who holds what.
#include <gtest/gtest.h>

#include "checker/layout_encode.h"

namespace argus::checker {
namespace {

int64_t numeral(const z3::expr& e) {
  z3::expr s = e.simplify();
  EXPECT_TRUE(s.is_numeral()) << s.to_string();
  return static_cast<int64_t>(s.get_numeral_uint64());
}

void expectAgrees(const ir::Layout& layout, int64_t numWarps) {
  z3::context ctx;
  const ir::Distribution dist = ir::Distribution::of(layout, numWarps);
  for (int64_t t = 0; t < 32 * numWarps; t += 3)
    for (int64_t v = 0; v < dist.valuesPerThread; v += 1 + dist.valuesPerThread / 7) {
      EncodedDistribution e = encodeDistribution(ctx, layout, dist, ctx.bv_val(t, 32), ctx.bv_val(v, 32), true);
      std::vector<int64_t> expected = dist.coordinate(t, v);
      ASSERT_EQ(e.coordinate.size(), expected.size());
      for (size_t d = 0; d < expected.size(); ++d)
        ASSERT_EQ(numeral(e.coordinate[d]), expected[d]) << ir::layoutStr(layout) << " t " << t << " v " << v << " axis " << d;
      bool owner = true;
      for (const z3::expr& condition : e.primaryOwner) owner = owner && condition.simplify().is_true();
      ASSERT_EQ(owner, dist.isPrimaryOwner(t)) << ir::layoutStr(layout) << " t " << t;
    }
}

TEST(CheckerLayoutEncode, AgreesWithTheDistribution) {
  expectAgrees(ir::Layout::canonical({1024}), 4);
  expectAgrees(ir::Layout::canonical({16}), 4);
  expectAgrees(ir::Layout::canonical({4, 8, 64}), 4);
  expectAgrees(ir::Layout::vectorized({32, 256}, 8), 4);
  expectAgrees(ir::Layout{{64, 64}, 1u}, 4);
  expectAgrees(ir::Layout{{64, 64}, 2u}, 8);
  expectAgrees(ir::Layout::mma(128, 128, 2, 2), 8);
  expectAgrees(ir::Layout::wgmmaAccumulator(128, 256, 2), 8);
}

TEST(CheckerLayoutEncode, OwnershipIsOptional) {
  z3::context ctx;
  const ir::Layout layout{{64, 64}, 1u};
  const ir::Distribution dist = ir::Distribution::of(layout, 4);
  EXPECT_TRUE(encodeDistribution(ctx, layout, dist, ctx.bv_val(5, 32), ctx.bv_val(0, 32), false).primaryOwner.empty());
  EXPECT_FALSE(encodeDistribution(ctx, layout, dist, ctx.bv_val(5, 32), ctx.bv_val(0, 32), true).primaryOwner.empty());
}

}  // namespace
}  // namespace argus::checker
