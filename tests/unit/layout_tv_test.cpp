// Thread-value layouts against the PTX ISA's fragment tables
// (mma.m16n8k16 with .bf16/.f16 operands and .f32 accumulators; ldmatrix).
#include <gtest/gtest.h>

#include <set>

#include "layout/print.h"
#include "layout/tv_layout.h"

namespace argus::layout {
namespace {

// groupID = lane >> 2, threadID_in_group = lane % 4 (PTX ISA, "Matrix fragments for mma.m16n8k16").
int64_t group(int64_t lane) { return lane >> 2; }
int64_t inGroup(int64_t lane) { return lane % 4; }

TEST(ThreadValueLayouts, MmaAOperandMatchesPtx) {
  TVLayout a = *mmaM16N8K16('A', "bf16");
  ASSERT_EQ(a.threads(), 32);
  ASSERT_EQ(a.values(), 8);
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t i = 0; i < 8; ++i) {
      // row = groupID for a0,a1,a4,a5 and groupID + 8 for a2,a3,a6,a7;
      // col = threadID_in_group * 2 + (i & 1), + 8 for a4..a7.
      int64_t row = group(lane) + ((i >> 1) & 1) * 8;
      int64_t col = inGroup(lane) * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      ASSERT_EQ(a.row(lane, i), row) << "lane " << lane << " a" << i;
      ASSERT_EQ(a.col(lane, i), col) << "lane " << lane << " a" << i;
    }
  // A few entries spelled out.
  EXPECT_EQ(a.row(0, 0), 0);
  EXPECT_EQ(a.col(0, 0), 0);
  EXPECT_EQ(a.row(5, 3), 9);   // lane 5: groupID 1 (+8), threadID_in_group 1: col 3
  EXPECT_EQ(a.col(5, 3), 3);
  EXPECT_EQ(a.row(31, 7), 15);
  EXPECT_EQ(a.col(31, 7), 15);
  EXPECT_EQ(toString(a.layout), "((4,8),(2,2,2)):((32,1),(16,8,128))");
  EXPECT_TRUE(mmaM16N8K16('A', "f16").ok());
  EXPECT_FALSE(mmaM16N8K16('A', "f32").ok());
}

TEST(ThreadValueLayouts, MmaBOperandMatchesPtx) {
  TVLayout b = *mmaM16N8K16('B', "bf16");  // CuTe's (n, k) tile, 8 x 16
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t i = 0; i < 4; ++i) {
      // row (k) = threadID_in_group * 2 + (i & 1), + 8 for b2,b3; col (n) = groupID.
      int64_t k = inGroup(lane) * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      ASSERT_EQ(b.row(lane, i), group(lane)) << "lane " << lane << " b" << i;
      ASSERT_EQ(b.col(lane, i), k) << "lane " << lane << " b" << i;
    }
  EXPECT_EQ(b.col(6, 3), 13);  // lane 6: threadID_in_group 2 -> k = 4 + 1 + 8
  EXPECT_EQ(b.row(6, 3), 1);
}

TEST(ThreadValueLayouts, MmaAccumulatorMatchesPtx) {
  TVLayout c = *mmaM16N8K16('C', "f32");
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t i = 0; i < 4; ++i) {
      // row = groupID for c0,c1 and groupID + 8 for c2,c3; col = threadID_in_group * 2 + (i & 1).
      ASSERT_EQ(c.row(lane, i), group(lane) + (i >= 2 ? 8 : 0));
      ASSERT_EQ(c.col(lane, i), inGroup(lane) * 2 + (i & 1));
    }
  EXPECT_EQ(c.row(9, 2), 10);
  EXPECT_EQ(c.col(9, 2), 2);
}

TEST(ThreadValueLayouts, WgmmaAccumulatorMatchesPtx) {
  // PTX ISA, "Register fragment of matrix D" for wgmma .m64nNk16: warp w of the warpgroup
  // holds rows 16w..16w+15; d_i sits at row 16w + groupID (+8 when i % 4 >= 2) and
  // column 8 * (i / 4) + 2 * threadID_in_group + (i % 2).
  for (int64_t n : {8, 16, 64, 136, 256}) {
    TVLayout d = *wgmmaM64NK16Accumulator(n, "f32");
    ASSERT_EQ(d.threads(), 128);
    ASSERT_EQ(d.values(), n / 2);
    ASSERT_EQ(d.rows, 64);
    ASSERT_EQ(d.cols, n);
    std::set<int64_t> offsets;
    for (int64_t t = 0; t < 128; ++t)
      for (int64_t i = 0; i < n / 2; ++i) {
        int64_t lane = t % 32, warp = t / 32;
        ASSERT_EQ(d.row(t, i), 16 * warp + group(lane) + (i % 4 >= 2 ? 8 : 0)) << "N " << n << " t " << t << " d" << i;
        ASSERT_EQ(d.col(t, i), 8 * (i / 4) + 2 * inGroup(lane) + i % 2) << "N " << n << " t " << t << " d" << i;
        offsets.insert(d.offset(t, i));
      }
    EXPECT_EQ(static_cast<int64_t>(offsets.size()), 64 * n) << "N " << n;
  }
  EXPECT_EQ(toString(wgmmaM64NK16Accumulator(64, "f32")->layout), "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))");
  EXPECT_TRUE(wgmmaM64NK16Accumulator(8, "f16").ok());
  EXPECT_FALSE(wgmmaM64NK16Accumulator(12, "f32").ok());
  EXPECT_FALSE(wgmmaM64NK16Accumulator(264, "f32").ok());
  EXPECT_FALSE(wgmmaM64NK16Accumulator(64, "bf16").ok());
}

TEST(ThreadValueLayouts, WgmmaRegisterAMatchesPtx) {
  // PTX ISA, wgmma .m64nNk16 "Register fragment of matrix A": each warp's 16 rows as
  // mma.m16n8k16's A fragment, warp w at rows 16w...
  TVLayout a = *wgmmaM64NK16A("bf16");
  ASSERT_EQ(a.threads(), 128);
  ASSERT_EQ(a.values(), 8);
  std::set<int64_t> offsets;
  for (int64_t t = 0; t < 128; ++t)
    for (int64_t i = 0; i < 8; ++i) {
      int64_t lane = t % 32;
      ASSERT_EQ(a.row(t, i), 16 * (t / 32) + group(lane) + ((i >> 1) & 1) * 8) << "t " << t << " a" << i;
      ASSERT_EQ(a.col(t, i), inGroup(lane) * 2 + (i & 1) + (i >= 4 ? 8 : 0)) << "t " << t << " a" << i;
      offsets.insert(a.offset(t, i));
    }
  EXPECT_EQ(offsets.size(), 64u * 16u);
  EXPECT_TRUE(wgmmaM64NK16A("f16").ok());
  EXPECT_FALSE(wgmmaM64NK16A("f32").ok());
}

TEST(ThreadValueLayouts, FragmentsCoverTheirTilesOnce) {
  for (char operand : {'A', 'B', 'C'}) {
    TVLayout tv = *mmaM16N8K16(operand, operand == 'C' ? "f32" : "bf16");
    std::set<int64_t> offsets;
    for (int64_t i = 0; i < tv.layout.size(); ++i) offsets.insert(tv.layout(i));
    EXPECT_EQ(static_cast<int64_t>(offsets.size()), tv.rows * tv.cols) << operand;
  }
  for (int count : {1, 2, 4})
    for (bool trans : {false, true}) {
      TVLayout tv = *ldmatrix(count, trans);
      std::set<int64_t> offsets;
      for (int64_t i = 0; i < tv.layout.size(); ++i) offsets.insert(tv.layout(i));
      EXPECT_EQ(static_cast<int64_t>(offsets.size()), tv.rows * tv.cols) << count << trans;
      EXPECT_EQ(tv.threads(), 32);
      EXPECT_EQ(tv.values(), 2 * count);
    }
}

TEST(ThreadValueLayouts, LdmatrixMatchesPtx) {
  // Each 8x8 matrix: lane holds row lane/4, columns 2*(lane%4) and +1 (register j for matrix j).
  TVLayout x4 = *ldmatrix(4, false);
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t v = 0; v < 8; ++v) {
      int64_t matrix = v / 2;
      ASSERT_EQ(x4.row(lane, v), (matrix % 2) * 8 + lane / 4);
      ASSERT_EQ(x4.col(lane, v), (matrix / 2) * 8 + 2 * (lane % 4) + v % 2);
    }
  // x4 loads exactly the mma A fragment.
  EXPECT_EQ(x4.layout, mmaM16N8K16('A', "f16")->layout);
  TVLayout trans = *ldmatrix(4, true);
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t v = 0; v < 8; ++v) {
      int64_t matrix = v / 2;
      ASSERT_EQ(trans.row(lane, v), (matrix % 2) * 8 + 2 * (lane % 4) + v % 2);
      ASSERT_EQ(trans.col(lane, v), (matrix / 2) * 8 + lane / 4);
    }
  EXPECT_FALSE(ldmatrix(3, false).ok());
}

TEST(ThreadValueLayouts, InverseFindsTheHolder) {
  for (char operand : {'A', 'B', 'C'}) {
    TVLayout tv = *mmaM16N8K16(operand, operand == 'C' ? "f32" : "bf16");
    Result<Layout> inverse = tileToThreadValue(tv);
    ASSERT_TRUE(inverse.ok()) << inverse.error().message;
    for (int64_t offset = 0; offset < tv.rows * tv.cols; ++offset) {
      int64_t i = (*inverse)(offset);
      ASSERT_EQ(tv.offset(i % tv.threads(), i / tv.threads()), offset) << operand;
    }
  }
  // Broadcast: every thread holds element 0.
  TVLayout broadcast = *makeTVLayout(Layout(IntTuple::tuple({32, 1}), IntTuple::tuple({0, 0})), 1, 1);
  EXPECT_FALSE(tileToThreadValue(broadcast).ok());
  EXPECT_FALSE(makeTVLayout(Layout(8, 1), 8, 1).ok());                                          // rank 1
  EXPECT_FALSE(makeTVLayout(Layout(IntTuple::tuple({4, 4}), IntTuple::tuple({1, 4})), 4, 2).ok());  // outside
}

TEST(ThreadValueLayouts, PictureNamesTheHolders) {
  Result<std::string> picture = printThreadValues(*mmaM16N8K16('C', "f32"));
  ASSERT_TRUE(picture.ok());
  // Row 0: T0V0 T0V1 T1V0 T1V1 ...; row 8 starts with T0V2.
  EXPECT_NE(picture->find(" 0  |  T0V0 |  T0V1 |  T1V0 |  T1V1 |  T2V0 |"), std::string::npos) << *picture;
  EXPECT_NE(picture->find(" 8  |  T0V2 |  T0V3 |  T1V2 |"), std::string::npos) << *picture;
}

}  // namespace
}  // namespace argus::layout
