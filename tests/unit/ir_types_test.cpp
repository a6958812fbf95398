#include <gtest/gtest.h>

#include <map>

#include "ir/types.h"

namespace argus::ir {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::Bool, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16,
                  DType::U32, DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64,
                  DType::F8E4M3, DType::F8E5M2}) {
    auto back = dtypeFromName(dtypeName(t));
    ASSERT_TRUE(back.has_value()) << dtypeName(t);
    EXPECT_EQ(*back, t);
  }
  EXPECT_STREQ(dtypeName(DType::F32), "f32");
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::F8E4M3), "f8e4m3");
  EXPECT_FALSE(dtypeFromName("float").has_value());
}

TEST(DType, Properties) {
  EXPECT_EQ(dtypeBits(DType::Bool), 1);
  EXPECT_EQ(dtypeBits(DType::BF16), 16);
  EXPECT_EQ(dtypeBits(DType::F8E5M2), 8);
  EXPECT_EQ(dtypeBits(DType::U64), 64);
  EXPECT_TRUE(isFloat(DType::F8E4M3));
  EXPECT_FALSE(isFloat(DType::I32));
  EXPECT_TRUE(isInteger(DType::U8));
  EXPECT_FALSE(isInteger(DType::Bool));
  EXPECT_FALSE(isInteger(DType::F16));
  EXPECT_TRUE(isSigned(DType::I64));
  EXPECT_FALSE(isSigned(DType::U32));
  EXPECT_FALSE(isSigned(DType::F32));
}

TEST(TypeStr, Forms) {
  EXPECT_EQ(Type::tile(DType::F32, Layout::canonical({64, 64})).str(), "tile<f32, [64, 64], #blocked<[64, 64]>>");
  Type reduced = Type::tile(DType::F32, Layout{{4, 1024}, 0b10});
  EXPECT_EQ(reduced.str(), "tile<f32, [4, 1], #blocked<[4, 1024], reduced=[1]>>");
  EXPECT_EQ(reduced.shape, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(Type::scalar(DType::I32).str(), "i32");
  EXPECT_EQ(Type::voidType().str(), "void");
  EXPECT_EQ(Type::tensor(DType::BF16, {-1, 64}).str(), "tensor<bf16, [?, 64]>");
  EXPECT_EQ(Type::shared(DType::F16, {2, 64, 32}).str(), "shared<f16, [2, 64, 32]>");
  EXPECT_EQ(Type::view(MemSpace::Shared, DType::F16, {64, 32}).str(), "view<shared, f16, [64, 32]>");
  EXPECT_EQ(Type::view(MemSpace::Global, DType::F32, {1024}).str(), "view<global, f32, [1024]>");
  EXPECT_EQ(Type::tile(DType::F32, Layout{{8, 4, 2}, 0b101}).str(),
            "tile<f32, [1, 4, 1], #blocked<[8, 4, 2], reduced=[0, 2]>>");
}

TEST(TypeNumElements, Kinds) {
  EXPECT_EQ(Type::tile(DType::F32, Layout::canonical({64, 32})).numElements(), 2048);
  EXPECT_EQ(Type::tile(DType::F32, Layout{{64, 32}, 1}).numElements(), 32);
  EXPECT_EQ(Type::scalar(DType::F32).numElements(), 1);
  EXPECT_EQ(Type::tensor(DType::F32, {-1, 4}).numElements(), -1);
  EXPECT_EQ(Type::shared(DType::F32, {2, 8}).numElements(), 16);
}

TEST(Distribution, Vector1024FourWarps) {
  Distribution d = Distribution::of(Layout::canonical({1024}), 4);
  EXPECT_EQ(d.lanes, (std::vector<int64_t>{32}));
  EXPECT_EQ(d.warps, (std::vector<int64_t>{4}));
  EXPECT_EQ(d.values, (std::vector<int64_t>{8}));
  EXPECT_EQ(d.valuesPerThread, 8);
  // Thread 37 = warp 1, lane 5; value 2 is at 5 + 32 * (1 + 4 * 2).
  EXPECT_EQ(d.coordinate(37, 2), (std::vector<int64_t>{5 + 32 * 9}));
  EXPECT_TRUE(d.isPrimaryOwner(127));
}

TEST(Distribution, Square64FourWarps) {
  Distribution d = Distribution::of(Layout::canonical({64, 64}), 4);
  EXPECT_EQ(d.lanes, (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(d.warps, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(d.values, (std::vector<int64_t>{16, 2}));
  EXPECT_EQ(d.valuesPerThread, 32);
  // value 3 -> k = (1, 1); thread 37: l = (0, 5), w = (1, 0).
  EXPECT_EQ(d.coordinate(37, 3), (std::vector<int64_t>{1 + 4 * 1, 5 + 32}));
}

TEST(Distribution, NarrowShapesHaveReplicas) {
  Distribution column = Distribution::of(Layout::canonical({16, 1}), 4);
  EXPECT_EQ(column.lanes, (std::vector<int64_t>{16, 1}));
  EXPECT_EQ(column.warps, (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(column.isPrimaryOwner(15));
  EXPECT_FALSE(column.isPrimaryOwner(16));  // lane bit 4 is a replica bit
  EXPECT_FALSE(column.isPrimaryOwner(32));  // every warp but 0 is a replica
  EXPECT_EQ(column.coordinate(16 + 3, 0), (std::vector<int64_t>{3, 0}));

  Distribution row = Distribution::of(Layout::canonical({1, 8}), 2);
  EXPECT_EQ(row.lanes, (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(row.coordinate(13, 0), (std::vector<int64_t>{0, 5}));
  EXPECT_FALSE(row.isPrimaryOwner(13));
}

TEST(Distribution, ReducedAxisIsReplicated) {
  // (4, 1024) reduced along 1: L = (1, 32), W = (4, 1); lanes of a row are replicas.
  Distribution d = Distribution::of(Layout{{4, 1024}, 0b10}, 4);
  EXPECT_EQ(d.valuesPerThread, 1);
  EXPECT_EQ(d.coordinate(32 * 2 + 7, 0), (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE(d.isPrimaryOwner(32 * 2));
  EXPECT_FALSE(d.isPrimaryOwner(32 * 2 + 7));
}

// Checks the defining property for one layout: every element of the tile has
// exactly one primary owner (thread, value), every thread's values are distinct
// in-bounds elements, and valueIndexOf inverts coordinate.
void checkCoverage(const Layout& layout, int64_t warps) {
  SCOPED_TRACE(Type::tile(DType::F32, layout).str() + " warps=" + std::to_string(warps));
  Distribution d = Distribution::of(layout, warps);
  std::vector<int64_t> shape = layout.shape();
  int64_t total = 1;
  for (int64_t e : shape) total *= e;
  auto linear = [&](const std::vector<int64_t>& c) {
    int64_t idx = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      EXPECT_GE(c[i], 0);
      EXPECT_LT(c[i], shape[i]);
      idx = idx * shape[i] + c[i];
    }
    return idx;
  };
  std::vector<int> primaryCount(static_cast<size_t>(total), 0), heldCount(static_cast<size_t>(total), 0);
  for (int64_t t = 0; t < warps * 32; ++t) {
    std::map<int64_t, int> mine;
    for (int64_t v = 0; v < d.valuesPerThread; ++v) {
      std::vector<int64_t> c = d.coordinate(t, v);
      int64_t idx = linear(c);
      if (idx < 0 || idx >= total) return;
      EXPECT_EQ(++mine[idx], 1) << "thread " << t << " holds an element twice";
      heldCount[static_cast<size_t>(idx)]++;
      if (d.isPrimaryOwner(t)) primaryCount[static_cast<size_t>(idx)]++;
      EXPECT_EQ(d.valueIndexOf(t, c), v);
    }
  }
  int64_t replicas = warps * 32 * d.valuesPerThread / total;
  for (int64_t i = 0; i < total; ++i) {
    EXPECT_EQ(primaryCount[static_cast<size_t>(i)], 1) << "element " << i;
    EXPECT_EQ(heldCount[static_cast<size_t>(i)], replicas) << "element " << i;
  }
}

TEST(Distribution, EveryElementHasOnePrimaryOwner) {
  std::vector<std::vector<int64_t>> shapes = {
      {1024}, {4, 1024}, {64, 64}, {16, 1}, {1, 8}, {2, 2}, {1}, {32}, {128, 16},
      {8, 4, 2}, {2, 256}, {256, 2}, {16, 64}, {1, 1}, {64, 8, 4}, {4096}};
  for (const auto& shape : shapes)
    for (int64_t warps : {1, 2, 4, 8}) {
      uint32_t rankMask = (1u << shape.size()) - 1;
      for (uint32_t mask = 0; mask <= rankMask; ++mask) checkCoverage(Layout{shape, mask}, warps);
    }
}

// Vectorized layouts (ir/vector_layout.h): the same coverage, with V consecutive elements of the
// last axis per thread as the lowest value digit.
TEST(Distribution, VectorizedLayoutsCoverEveryElementOnce) {
  std::vector<std::vector<int64_t>> shapes = {{4096}, {1024}, {256}, {8}, {4, 1024}, {16, 128}, {64, 8}, {2, 4, 64}};
  for (const auto& shape : shapes)
    for (int64_t warps : {1, 2, 4, 8, 16}) {
      uint32_t rankMask = (1u << shape.size()) - 1;
      for (uint32_t mask = 0; mask <= rankMask; ++mask) {
        Layout layout{shape, mask};
        layout.vec = 8;
        checkCoverage(layout, warps);
      }
    }
}

TEST(Distribution, VectorizedLayoutGivesEachThreadAdjacentElements) {
  // (4096) over 8 warps, vec 8: thread t holds 8 * t .. 8 * t + 7, then the same 2048 further.
  Distribution d = Distribution::of(Layout::vectorized({4096}, 8), 8);
  EXPECT_EQ(d.valuesPerThread, 16);
  for (int64_t t : {0, 1, 31, 32, 255})
    for (int64_t v = 0; v < 16; ++v)
      EXPECT_EQ(d.coordinate(t, v), (std::vector<int64_t>{v % 8 + 8 * t + 2048 * (v / 8)})) << t << " " << v;
  // (16, 128) over 4 warps: 16 lanes along a row (8 elements each), 2 rows per warp.
  Distribution two = Distribution::of(Layout::vectorized({16, 128}, 8), 4);
  EXPECT_EQ(two.coordinate(17, 3), (std::vector<int64_t>{1, 8 + 3}));
  EXPECT_EQ(two.coordinate(32, 0), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(Type::tile(DType::BF16, Layout::vectorized({4, 1024}, 8)).str(), "tile<bf16, [4, 1024], #blocked<[4, 1024], vec=8>>");
  EXPECT_NE(Layout::vectorized({64}, 8), Layout::canonical({64}));
}

// Broadcast is free: a thread holding element c of (P, R') also holds the
// element c with the axes of R \ R' zeroed in (P, R).
TEST(Distribution, BroadcastNeedsNoCommunication) {
  std::vector<std::vector<int64_t>> shapes = {{4, 1024}, {64, 64}, {16, 2}, {8, 4, 2}, {2, 2}};
  for (const auto& shape : shapes)
    for (int64_t warps : {1, 4, 8}) {
      uint32_t full = (1u << shape.size()) - 1;
      for (uint32_t reduced = 0; reduced <= full; ++reduced)
        for (uint32_t kept = 0; kept <= full; ++kept) {
          if ((kept & ~reduced) != 0) continue;  // R' must be a subset of R
          Distribution from = Distribution::of(Layout{shape, reduced}, warps);
          Distribution to = Distribution::of(Layout{shape, kept}, warps);
          for (int64_t t = 0; t < warps * 32; ++t)
            for (int64_t v = 0; v < to.valuesPerThread; ++v) {
              std::vector<int64_t> c = to.coordinate(t, v);
              for (size_t a = 0; a < c.size(); ++a)
                if ((reduced >> a) & 1u) c[a] = 0;
              ASSERT_GE(from.valueIndexOf(t, c), 0) << "thread " << t << " value " << v;
            }
        }
    }
}

}  // namespace
}  // namespace argus::ir
