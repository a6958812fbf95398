// Stores of 16-bit mma tiles go to global memory through per-warp shared slices
// (codegen/store_staging.cpp) on sm_90 and sm_90a, when the slices fit: what the
// PTX holds, that the launch's shared memory counts them, and the fallbacks.
// Whether the staged stores put every element in its place is checked on the
// H200 (bench/gpu_check.py and bench_gpu.py run these kernels against torch).
#include <gtest/gtest.h>

#include "codegen/codegen.h"
#include "driver/compilation.h"
#include "driver/metadata.h"
#include "ir/ir.h"
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

}  // namespace
