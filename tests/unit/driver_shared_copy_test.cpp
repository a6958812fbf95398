// copy(shared, global) lowers as one copy in 16-byte vectors when the tile sema
// builds for it is used by nothing else (codegen/shared_copy.cpp): the vector
// path, the per-element path beside it, and the cases that keep the plain load
// and store. Whether the vectors put every element in its place is checked on
// the H200 (bench/gpu_check.py runs examples/gemm.ag against torch at ragged sizes);
// the interpreter runs the IR, which the fusion does not change.
#include <gtest/gtest.h>

#include <string>

#include "hopper_test_util.h"
#include "test_sources.h"

namespace {

using argus::testing::hopper::compile;
using argus::testing::hopper::errorsOf;
using argus::testing::hopper::ptxasReport;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SharedCopy, GemmTilesMoveInSixteenByteVectors) {
  auto c = compile("gemm.ag", argus::testing::readExample("gemm.ag"), "sm_80");
  ASSERT_EQ(errorsOf(*c), "");
  const std::string& ptx = c->ptx();
  // Two copies: (64, 16) f32 of A and (16, 64) of B, 256 four-element chunks each over 128 threads.
  EXPECT_EQ(count(ptx, "ld.global.v4.u32"), 4);
  EXPECT_EQ(count(ptx, "st.shared.v4.u32"), 4);
  // Beside them, for tiles at the edge or unaligned, the per-element copy with bounds.
  EXPECT_EQ(count(ptx, "ld.global.b32"), 16);
  EXPECT_EQ(ptxasReport(compile("gemm.ag", argus::testing::readExample("gemm.ag"))->ptx()).find("error"),
            std::string::npos);
}

// A buffer in `swizzle`, filled by `body` and read back whole.
std::string copySource(const std::string& swizzle, const std::string& body) {
  std::string text = argus::testing::readTestKernel("driver_shared_copy/swizzled_buffer_copy.ag");
  text.replace(text.find("SWIZZLE"), 7, swizzle);
  text.replace(text.find("BODY"), 4, body);
  return text;
}

TEST(SharedCopy, SwizzledBufferKeepsItsChunksWhole) {
  // (3, 3, 3) moves 8-element groups, whole bf16 chunks: vectors. (2, 2, 3) moves 4-element
  // groups and would split them: element by element only.
  auto whole = compile("k.ag", copySource("(3, 3, 3)", "copy(buf, x.tile((32, 64))[program_id(0), 0])"));
  ASSERT_EQ(errorsOf(*whole), "");
  EXPECT_EQ(count(whole->ptx(), "ld.global.v4.u32"), 2);  // 256 chunks over 128 threads
  EXPECT_EQ(ptxasReport(whole->ptx()).find("error"), std::string::npos);
  auto split = compile("k.ag", copySource("(2, 2, 3)", "copy(buf, x.tile((32, 64))[program_id(0), 0])"));
  ASSERT_EQ(errorsOf(*split), "");
  EXPECT_EQ(count(split->ptx(), "ld.global.v4"), 0);
  EXPECT_GT(count(split->ptx(), "ld.global.b16"), 0);
}

TEST(SharedCopy, FewerChunksThanThreadsStoreOncePerChunk) {
  // (8, 64) bf16 is 64 chunks for 128 threads: the replicas' stores are left out (a branch on
  // the thread id), and the vector path still assembles.
  const std::string text = argus::testing::readTestKernel("driver_shared_copy/fewer_chunks_than_threads.ag");
  auto c = compile("k.ag", text);
  ASSERT_EQ(errorsOf(*c), "");
  EXPECT_EQ(count(c->ptx(), "ld.global.v4.u32"), 1);
  EXPECT_EQ(count(c->ptx(), "st.shared.v4.u32"), 1);
  EXPECT_NE(c->ptx().find("setp.lt.u32"), std::string::npos);  // the owner test, tid < 64
  EXPECT_EQ(ptxasReport(c->ptx()).find("error"), std::string::npos);
}

TEST(SharedCopy, ATileUsedTwiceKeepsThePlainLoadAndStore) {
  auto c = compile("k.ag", copySource("(3, 3, 3)",
                                      "t = load(x.tile((32, 64))[program_id(0), 0])\n"
                                      "    store(buf, t)\n"
                                      "    y.tile((32, 64))[program_id(0), 0] = t"));
  ASSERT_EQ(errorsOf(*c), "");
  EXPECT_EQ(count(c->ptx(), "ld.global.v4"), 0);
  EXPECT_GT(count(c->ptx(), "ld.global.b16"), 0);
}

}  // namespace
