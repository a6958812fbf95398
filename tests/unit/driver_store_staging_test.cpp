// Stores of 16-bit mma tiles go to global memory through per-warp shared slices
// (codegen/store_staging.cpp) on sm_90 and sm_90a, when the slices fit: what the
// PTX holds, that the launch's shared memory counts them, and the fallbacks.
// Whether the staged stores put every element in its place is checked on the
// H200 (bench/gpu_check.py and bench_gpu.py run these kernels against torch).
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/codegen.h"
#include "driver/compilation.h"
#include "driver/metadata.h"
#include "ir/bulk.h"
#include "ir/ir.h"
#include "hopper_test_util.h"
#include "test_sources.h"

namespace {

std::unique_ptr<argus::Compilation> compileExample(const std::string& name, const std::string& arch,
                                                   std::string text = {}) {
  argus::CompileOptions options;
  options.arch = arch;
  if (text.empty()) text = argus::testing::readExample(name);
  return std::make_unique<argus::Compilation>(argus::SourceFile(name, text), options);
}

bool has(const std::string& ptx, const std::string& what) { return ptx.find(what) != std::string::npos; }

int64_t buffersBytes(const argus::ir::Function& fn) { return argus::staticSharedBytes(fn); }

// A map of the slices' TMA stores into tensor `name`: one box row of 16 x 64 (1 on leading axes), the
// slices' 128-byte swizzle.
void expectStoreMap(const argus::ir::Function& fn, const argus::ir::TensorMapUse& map, const std::string& name,
                    const std::vector<int64_t>& box) {
  EXPECT_EQ(fn.params[map.param].name, name);
  EXPECT_TRUE(map.store);
  EXPECT_EQ(map.box, box);
  EXPECT_EQ(map.swizzleBytes, 128);
}

// How many coordinates the first rank-`rank` TMA store in `ptx` names (0 when there is none).
int bulkStoreCoordinates(const std::string& ptx, int rank) {
  const size_t store =
      ptx.find("cp.async.bulk.tensor." + std::to_string(rank) + "d.global.shared::cta.bulk_group [");
  if (store == std::string::npos) return 0;
  const size_t open = ptx.find('{', store);
  const std::string coordinates = ptx.substr(open, ptx.find('}', open) - open);
  return 1 + static_cast<int>(std::count(coordinates.begin(), coordinates.end(), ','));
}

TEST(StoreStaging, HopperGemmEpilogueGoesThroughStmatrixAndSixteenByteRows) {
  auto c = compileExample("gemm_persistent.ag", "sm_90a");
  const std::string& ptx = c->ptx();
  ASSERT_FALSE(c->hasErrors());
  EXPECT_TRUE(has(ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16"));
  EXPECT_TRUE(has(ptx, "ld.shared.v4.u32"));
  EXPECT_TRUE(has(ptx, "st.global.v4.u32"));
  EXPECT_TRUE(has(ptx, "bar.warp.sync -1;"));
  // Tiles at the tensor's edge keep the element stores.
  EXPECT_TRUE(has(ptx, "st.global.b16"));
  // 8 consumer warps x 2 KiB, counted in what the launch passes.
  const argus::ir::Function& fn = *c->ir().functions.at(0);
  EXPECT_EQ(argus::codegen::storeStagingBytes(fn, "sm_90a", 0), 8 * 2048);
  EXPECT_GE(argus::codegen::sharedMemoryBytes(fn, "sm_90a"), buffersBytes(fn) + 8 * 2048);
  EXPECT_TRUE(has(argus::kernelMetadataJson(c->ir(), "sm_90a"),
                  "\"dynamic_shared_bytes\": " + std::to_string(argus::codegen::sharedMemoryBytes(fn, "sm_90a"))));
}

TEST(StoreStaging, MmaSyncGemmStagesOnSm90ButNotOnSm80) {
  auto hopper = compileExample("gemm_tc.ag", "sm_90");
  ASSERT_FALSE(hopper->hasErrors());
  EXPECT_TRUE(has(hopper->ptx(), "stmatrix.sync.aligned.m8n8.x4.shared.b16"));
  auto ampere = compileExample("gemm_tc.ag", "sm_80");
  ASSERT_FALSE(ampere->hasErrors());
  EXPECT_FALSE(has(ampere->ptx(), "stmatrix"));
  EXPECT_TRUE(has(ampere->ptx(), "st.global.u32"));  // the 32-bit pair stores
  const argus::ir::Function& fn = *ampere->ir().functions.at(0);
  EXPECT_EQ(argus::codegen::sharedMemoryBytes(fn, "sm_90") - argus::codegen::sharedMemoryBytes(fn, "sm_80"),
            fn.numWarps * 2048);
}

TEST(StoreStaging, SkippedWhereTheSlicesWouldNotFit) {
  // 196672 bytes of stages plus 30000 more fit in 227 KiB; 16 KiB of slices would not.
  std::string text = argus::testing::readExample("gemm_persistent.ag");
  const std::string anchor = "    w_s = shared(bf16, (BN, BK), swizzle=(3, 3, 3))\n";
  size_t at = text.find(anchor);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + anchor.size(), "    pad = shared(u8, (30000,))\n");
  auto c = compileExample("gemm_persistent.ag", "sm_90a", text);
  ASSERT_FALSE(c->hasErrors());
  EXPECT_FALSE(has(c->ptx(), "stmatrix"));
  EXPECT_TRUE(has(c->ptx(), "st.global.u32"));
  const argus::ir::Function& fn = *c->ir().functions.at(0);
  EXPECT_LE(argus::codegen::sharedMemoryBytes(fn, "sm_90a"), argus::codegen::maxSharedBytesPerBlock("sm_90a"));
  EXPECT_EQ(argus::codegen::storeStagingBytes(fn, "sm_90a", argus::codegen::sharedMemoryBytes(fn, "sm_90a")), 0);
}

TEST(StoreStaging, HopperSlicesGoToGlobalMemoryByTmaStores) {
  auto c = compileExample("gemm_persistent.ag", "sm_90a");
  ASSERT_FALSE(c->hasErrors());
  const std::string& ptx = c->ptx();
  // Lane 0 stores each 16 x 64 slice with one TMA store, after the warp's writes are
  // fenced for the async proxy, and waits for TMA to read it before the next write.
  EXPECT_TRUE(has(ptx, "fence.proxy.async.shared::cta;"));
  EXPECT_TRUE(has(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"));
  EXPECT_TRUE(has(ptx, "cp.async.bulk.commit_group;"));
  EXPECT_TRUE(has(ptx, "cp.async.bulk.wait_group.read 0;"));
  // C's map comes after the loads' maps, optional, with the slices' box and swizzle.
  const argus::ir::Function& fn = *c->ir().functions.at(0);
  std::vector<argus::ir::TensorMapUse> maps = argus::codegen::kernelTensorMaps(fn, "sm_90a");
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_FALSE(maps[0].store);
  expectStoreMap(fn, maps[2], "C", {16, 64});
  EXPECT_TRUE(has(argus::kernelMetadataJson(c->ir(), "sm_90a"), "\"store\": true"));
  // TMA's 128-byte swizzle is a function of the address: the slices start 1024-byte aligned.
  const int64_t staging = argus::codegen::storeStagingBytes(fn, "sm_90a", 0);
  EXPECT_EQ((argus::codegen::sharedMemoryBytes(fn, "sm_90a") - staging) % 1024, 0);
  EXPECT_EQ(argus::codegen::storeStagingOffset(1), 1024);
  // Unaligned rows and pre-Hopper targets keep the ordinary stores.
  EXPECT_TRUE(has(ptx, "st.global.v4.u32"));
  auto ampere = compileExample("gemm_tc.ag", "sm_80");
  ASSERT_FALSE(ampere->hasErrors());
  EXPECT_FALSE(has(ampere->ptx(), "cp.async.bulk"));
  EXPECT_TRUE(argus::codegen::kernelTensorMaps(*ampere->ir().functions.at(0), "sm_80").empty());
}

TEST(StoreStaging, AttentionOutputOfRankThreeGoesThroughSlicesAndTma) {
  // o is (BH, S, 128) and each store a (BM, 64) tile of one head: the slices and the TMA
  // store address the last two axes, with the head as TMA's outermost coordinate.
  auto c = compileExample("attention_wgmma.ag", "sm_90a");
  ASSERT_FALSE(c->hasErrors());
  const std::string& ptx = c->ptx();
  EXPECT_TRUE(has(ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16"));
  EXPECT_TRUE(has(ptx, "st.global.v4.u32"));
  EXPECT_TRUE(has(ptx, "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group"));
  EXPECT_FALSE(has(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"));
  const argus::ir::Function& fn = *c->ir().functions.at(0);
  std::vector<argus::ir::TensorMapUse> maps = argus::codegen::kernelTensorMaps(fn, "sm_90a");
  ASSERT_EQ(maps.size(), 3u);  // k and v (loads), o (store)
  expectStoreMap(fn, maps[2], "o", {1, 16, 64});
  EXPECT_EQ(argus::codegen::storeStagingBytes(fn, "sm_90a", 0), 8 * 2048);
  EXPECT_EQ(bulkStoreCoordinates(ptx, 3), 3);  // innermost first: column, row, head
  EXPECT_EQ(argus::testing::hopper::ptxasReport(ptx).find("error"), std::string::npos);
}

TEST(StoreStaging, RankFourOutputGoesByAFourDimensionalTmaStore) {
  // y is (B, 2, M, 64) and the tile sits at [b, 1, i, 0]: the slices' TMA store takes four
  // coordinates, innermost first (column, row, 1, b), and the map's box is 1 x 1 x 16 x 64.
  const std::string text = argus::testing::readTestKernel("driver_store_staging/rank_four_output.ag");
  auto c = compileExample("k.ag", "sm_90a", text);
  ASSERT_FALSE(c->hasErrors());
  const std::string& ptx = c->ptx();
  EXPECT_EQ(bulkStoreCoordinates(ptx, 4), 4);
  const argus::ir::Function& fn = *c->ir().functions.at(0);
  std::vector<argus::ir::TensorMapUse> maps = argus::codegen::kernelTensorMaps(fn, "sm_90a");
  ASSERT_EQ(maps.size(), 1u);
  expectStoreMap(fn, maps[0], "y", {1, 1, 16, 64});
  EXPECT_EQ(argus::testing::hopper::ptxasReport(ptx).find("error"), std::string::npos);
}

TEST(StoreStaging, RankThreeOutputsStoreInPairsWithoutStmatrix) {
  // Before sm_90 there is no stmatrix: a tile inside the tensor goes out as 32-bit pairs,
  // whatever the tensor's rank (the mma.sync attention's o is (BH, S, D)).
  auto c = compileExample("attention.ag", "sm_80");
  ASSERT_FALSE(c->hasErrors());
  EXPECT_TRUE(has(c->ptx(), "st.global.u32"));
  EXPECT_FALSE(has(c->ptx(), "stmatrix"));
}

TEST(StoreStaging, TmaStoresOnlyTensorsTheKernelNeverReads) {
  // TMA writes complete asynchronously, through the async proxy: a tensor the
  // kernel also reads (here A and W) would race with them.
  auto c = compileExample("gemm_persistent.ag", "sm_90a");
  ASSERT_FALSE(c->hasErrors());
  const argus::ir::Function& fn = *c->ir().functions.at(0);
  for (size_t p = 0; p < fn.params.size(); ++p) {
    const bool output = fn.params[p].name == "C";
    EXPECT_EQ(argus::ir::tensorOnlyStoredTo(fn, p), output) << fn.params[p].name;
  }
  EXPECT_FALSE(argus::ir::tensorOnlyStoredTo(fn, fn.params.size()));
}

}  // namespace
