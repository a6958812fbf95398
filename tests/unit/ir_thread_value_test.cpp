// The IR's register layouts against the layout algebra's instruction fragments: the mma
// and wgmma accumulators the IR distributes are the PTX ISA's (layout/tv_layout.cpp, whose
// tests check the ISA's tables), and threadValueLayout is the distribution's own function.
#include <gtest/gtest.h>

#include <set>

#include "ir/parse.h"
#include "ir/thread_value.h"
#include "layout/layout.h"
#include "layout/swizzle.h"

namespace argus::ir {
namespace {

// Every (thread, value) of `layout` over `numWarps` warps lands where Distribution says.
void expectSameFunction(const Layout& layout, int64_t numWarps) {
  const Distribution dist = Distribution::of(layout, numWarps);
  const layout::TVLayout tv = threadValueLayout(layout, numWarps);
  ASSERT_EQ(tv.values(), dist.valuesPerThread) << layoutStr(layout);
  const std::vector<int64_t> shape = layout.shape();
  for (int64_t t = 0; t < 32 * numWarps; ++t)
    for (int64_t v = 0; v < dist.valuesPerThread; ++v) {
      std::vector<int64_t> c = dist.coordinate(t, v);
      int64_t offset = 0, scale = 1;
      for (size_t d = 0; d < c.size(); ++d) {
        offset += c[d] * scale;
        scale *= shape[d];
      }
      ASSERT_EQ(tv.offset(t, v), offset) << layoutStr(layout) << " warps " << numWarps << " t " << t << " v " << v;
    }
}

TEST(IrThreadValue, MmaAtomIsTheIsaAccumulator) {
  const layout::TVLayout ir = threadValueLayout(Layout::mma(16, 8, 1, 1), 1);
  const layout::TVLayout isa = *layout::mmaM16N8K16('C', "f32");
  ASSERT_EQ(ir.rows, isa.rows);
  ASSERT_EQ(ir.cols, isa.cols);
  ASSERT_EQ(ir.values(), isa.values());
  for (int64_t t = 0; t < 32; ++t)
    for (int64_t v = 0; v < isa.values(); ++v) ASSERT_EQ(ir.offset(t, v), isa.offset(t, v)) << t << " " << v;
  EXPECT_EQ(layout::toString(ir.layout), layout::toString(isa.layout));
}

TEST(IrThreadValue, WgmmaAccumulatorIsTheIsaFragment) {
  for (int64_t n : {8, 64, 128, 256})
    for (int64_t groups : {1, 2}) {
      const layout::TVLayout ir = threadValueLayout(Layout::wgmmaAccumulator(64 * groups, n, groups), 4 * groups);
      const layout::TVLayout isa = *layout::wgmmaM64NK16Accumulator(n, "f32");
      ASSERT_EQ(ir.values(), isa.values());
      for (int64_t t = 0; t < 128 * groups; ++t)
        for (int64_t v = 0; v < isa.values(); ++v) {
          // Warpgroup g holds rows 64g.. with the one-warpgroup fragment.
          ASSERT_EQ(ir.row(t, v), 64 * (t / 128) + isa.row(t % 128, v)) << "N " << n << " t " << t << " v " << v;
          ASSERT_EQ(ir.col(t, v), isa.col(t % 128, v)) << "N " << n << " t " << t << " v " << v;
        }
    }
}

TEST(IrThreadValue, TiledMmaFollowsTheDocumentedFormula) {
  // types.h: row = wm*(BM/warpsM) + rm*16 + h*8 + g, col = wn*(BN/warpsN) + rn*8 + 2*q + e,
  // v = ((rm*RN + rn)*2 + h)*2 + e, warp = wm*warpsN + wn.
  const int64_t bm = 128, bn = 64, warpsM = 2, warpsN = 2;
  const layout::TVLayout tv = threadValueLayout(Layout::mma(bm, bn, warpsM, warpsN), 4);
  const int64_t rmCount = bm / warpsM / 16, rnCount = bn / warpsN / 8;
  for (int64_t t = 0; t < 128; ++t)
    for (int64_t v = 0; v < tv.values(); ++v) {
      const int64_t lane = t % 32, warp = t / 32, g = lane / 4, q = lane % 4;
      const int64_t e = v % 2, h = v / 2 % 2, rn = v / 4 % rnCount, rm = v / 4 / rnCount;
      ASSERT_LT(rm, rmCount);
      ASSERT_EQ(tv.row(t, v), warp / warpsN * (bm / warpsM) + rm * 16 + h * 8 + g) << t << " " << v;
      ASSERT_EQ(tv.col(t, v), warp % warpsN * (bn / warpsN) + rn * 8 + 2 * q + e) << t << " " << v;
    }
}

TEST(IrThreadValue, EveryLayoutKindIsItsDistribution) {
  expectSameFunction(Layout::canonical({1024}), 4);
  expectSameFunction(Layout::canonical({16}), 4);          // replicated lanes and warps
  expectSameFunction(Layout::canonical({64, 64}), 4);
  expectSameFunction(Layout::canonical({4, 8, 64}), 4);
  expectSameFunction(Layout::vectorized({32, 256}, 8), 4);
  expectSameFunction(Layout{{64, 64}, 1u}, 4);             // reduced axis 0
  expectSameFunction(Layout{{64, 64}, 2u}, 8);             // reduced axis 1
  expectSameFunction(Layout::mma(64, 64, 2, 2), 4);
  expectSameFunction(Layout::mma(128, 128, 2, 2), 8);      // leftover warps are replicas
  Layout reducedMma = Layout::mma(64, 64, 2, 2);
  reducedMma.reducedMask = 2u;
  expectSameFunction(reducedMma, 4);
  expectSameFunction(Layout::wgmmaAccumulator(128, 256, 2), 8);
}

TEST(IrThreadValue, PrimaryOwnersCoverEveryElementOnce) {
  for (const Layout& layout : {Layout::canonical({16}), Layout::mma(64, 32, 4, 1), Layout::vectorized({8, 64}, 8),
                               Layout::wgmmaAccumulator(64, 24, 1)}) {
    const int64_t warps = layout.isMma() ? layout.warpsM * layout.warpsN : 4;
    const Distribution dist = Distribution::of(layout, warps);
    const layout::TVLayout tv = threadValueLayout(layout, warps);
    std::set<int64_t> held;
    for (int64_t t = 0; t < 32 * warps; ++t) {
      if (!dist.isPrimaryOwner(t)) continue;
      for (int64_t v = 0; v < tv.values(); ++v) EXPECT_TRUE(held.insert(tv.offset(t, v)).second) << layoutStr(layout);
    }
    EXPECT_EQ(static_cast<int64_t>(held.size()), tv.rows * tv.cols) << layoutStr(layout);
  }
}

TEST(IrThreadValue, LayoutTextRoundTrips) {
  for (const Layout& layout : {Layout::canonical({4, 1024}), Layout{{4, 1024}, 2u}, Layout::vectorized({4096}, 8),
                               Layout::mma(64, 64, 2, 2), Layout::wgmmaAccumulator(128, 128, 2)}) {
    LayoutParseResult parsed = parseLayoutText(layoutStr(layout));
    ASSERT_TRUE(parsed.ok) << parsed.error;
    EXPECT_EQ(parsed.layout, layout);
  }
  LayoutParseResult bad = parseLayoutText("#mma<[64, 64], warps=[2]>");
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.error.rfind("column ", 0), 0u) << bad.error;
  EXPECT_FALSE(parseLayoutText("#blocked<[64]> extra").ok);
  EXPECT_FALSE(parseLayoutText("#striped<[64]>").ok);
}

TEST(IrThreadValue, ProblemsAreNamed) {
  EXPECT_EQ(layoutProblem(Layout::mma(64, 64, 2, 2), 4), "");
  EXPECT_NE(layoutProblem(Layout::mma(64, 64, 2, 2), 2), "");
  EXPECT_NE(layoutProblem(Layout::mma(40, 64, 2, 2), 4), "");
  EXPECT_NE(layoutProblem(Layout::wgmmaAccumulator(64, 260, 1), 4), "");
  EXPECT_NE(layoutProblem(Layout::vectorized({12}, 8), 4), "");
  EXPECT_EQ(layoutProblem(Layout::canonical({3, 5}), 4), "");
}

TEST(IrThreadValue, SharedSwizzleIsTheAlgebrasSwizzle) {
  // ir::Swizzle (without column panels) is CuTe's Swizzle<B, M, S> of layout/swizzle.h.
  int checked = 0;
  for (int bits = 1; bits <= 3; ++bits)
    for (int base = 0; base <= 4; ++base)
      for (int shift = bits; shift <= 5; ++shift) {
        Swizzle ir;
        ir.bits = bits;
        ir.base = base;
        ir.shift = shift;
        const layout::Swizzle algebra = *layout::Swizzle::make(bits, base, shift);
        for (int64_t x = 0; x < (int64_t{1} << 13); ++x) ASSERT_EQ(ir.apply(x), algebra(x)) << bits << base << shift << " at " << x;
        ++checked;
      }
  EXPECT_EQ(checked, 60);
}

}  // namespace
}  // namespace argus::ir
