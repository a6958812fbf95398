// cp.async lowering on its own (IR built directly, no frontend): the builder
// text, a bf16 copy into a swizzled buffer with commit and wait, the
// whole-chunk form for tiles inside the tensor, the zero-fill form at its
// edges, the unaligned fallback, and ptxas accepting the result.
#include <gtest/gtest.h>
#include <unistd.h>

#include <llvm/IR/LLVMContext.h>

#include "codegen/async_copy.h"
#include "codegen/codegen.h"
#include "codegen_test_kernels.h"

namespace argus::codegen {
namespace {

using namespace testing;

const char* kPtxas = "/usr/local/cuda/bin/ptxas";

TEST(AsyncCopyText, ChunkSizesPickTheCacheMode) {
  EXPECT_EQ(cpAsyncText(16), "@$3 cp.async.cg.shared.global [$0], [$1], 16, $2;");
  EXPECT_EQ(cpAsyncText(8), "@$3 cp.async.ca.shared.global [$0], [$1], 8, $2;");
  EXPECT_EQ(cpAsyncText(4), "@$3 cp.async.ca.shared.global [$0], [$1], 4, $2;");
  EXPECT_EQ(cpAsyncWholeChunkText(16), "cp.async.cg.shared.global [$0], [$1], 16;");
  EXPECT_EQ(cpAsyncWholeChunkText(8), "cp.async.ca.shared.global [$0], [$1], 8;");
}

// y = x through a swizzled shared buffer: copy_async, commit, wait 0, barrier, load, store.
// With `batched`, x is (B, M, N) and the copy reads the tile of batch program_id(1).
std::unique_ptr<Function> copyThroughShared(DType dtype, Swizzle swizzle, bool batched = false) {
  KernelBuilder k("async_copy", 4);
  ValueId x = batched ? k.tensor("x", dtype, {"B", "M", "N"}) : k.tensor("x", dtype, {"M", "N"});
  ValueId y = k.tensor("y", dtype, {"M", "N"});
  k.sizeParams();
  Type sharedType = Type::shared(dtype, {32, 64});
  sharedType.swizzle = swizzle;
  ValueId buffer = k.b.make(OpKind::AllocShared, {}, sharedType, {});
  ValueId zero = k.i32(0);
  ValueId row = k.binary(BinaryKind::Mul, k.programId(0), k.i32(32));
  ValueId dst = k.view(buffer, {zero, zero}, {32, 64});
  k.fn->values[dst].type.swizzle = swizzle;
  ValueId src = batched ? k.view(x, {k.programId(1), row, zero}, {32, 64}) : k.view(x, {row, zero}, {32, 64});
  k.b.create(OpKind::CopyAsync, {dst, src}, {}, {});
  k.b.create(OpKind::CommitGroup, {}, {}, {});
  Attrs wait;
  argus::ir::WaitGroupAttrs(wait).pending(0);
  k.b.create(OpKind::WaitGroup, {}, {}, {}, wait);
  k.b.create(OpKind::Barrier, {}, {}, {});
  ValueId tile = k.load(dst);
  k.store(k.view(y, {row, zero}, {32, 64}), tile);
  return std::move(k.fn);
}

std::string emit(std::unique_ptr<Function> fn, const std::string& arch, bool assemble) {
  EXPECT_TRUE(verify(*fn).empty());
  auto module = moduleOf(std::move(fn));
  Options options;
  options.arch = arch;
  DiagnosticSink diags;
  std::string ptx;
  EXPECT_TRUE(emitPTX(*module, options, diags, &ptx));
  EXPECT_TRUE(diags.diagnostics().empty());
  if (assemble && access(kPtxas, X_OK) == 0) {
    DiagnosticSink asmDiags;
    auto cubin = assembleCubin(ptx, arch, kPtxas, asmDiags);
    EXPECT_TRUE(cubin.has_value()) << ptx;
  }
  return ptx;
}

TEST(AsyncCopyPtx, Bf16CopyIntoASwizzledBuffer) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    std::string ptx = emit(copyThroughShared(DType::BF16, Swizzle{3, 3, 3}), arch, true);
    EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find(", 16, %r"), std::string::npos) << "the zero-fill form carries src-size";
    // A tile wholly inside the tensor (a uniform test of its origin against the sizes)
    // copies whole chunks: no src-size, no predicate. The copy is 32 x 64 bf16 over 4
    // warps: 256 chunks, two per thread, in each of the whole-chunk and zero-fill paths.
    size_t whole = 0, zeroFill = 0;
    for (size_t at = ptx.find("cp.async.cg.shared.global"); at != std::string::npos;
         at = ptx.find("cp.async.cg.shared.global", at + 1)) {
      std::string line = ptx.substr(at, ptx.find('\n', at) - at);
      bool predicated = ptx.rfind('@', at) != std::string::npos && ptx.rfind('@', at) > ptx.rfind('\n', at);
      if (line.find(", 16;") != std::string::npos && !predicated) ++whole;
      if (line.find(", 16, %r") != std::string::npos && predicated) ++zeroFill;
    }
    EXPECT_EQ(whole, 2u) << ptx;
    EXPECT_EQ(zeroFill, 2u) << ptx;
    EXPECT_NE(ptx.find("cp.async.commit_group;"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.wait_group 0;"), std::string::npos);
    EXPECT_NE(ptx.find("xor.b"), std::string::npos) << "the swizzle";
    EXPECT_NE(ptx.find("ld.global.b16"), std::string::npos) << "the fallback for unaligned rows";
  }
}

// A 2-D tile of a 3-D tensor (attention's k.tile((BN, D))[bh, j, 0]): the inside test
// spans one element of the leading axis. (It once paired the tile's extents with the
// tensor's axes from the first, reading past the tile's shape: under the ASan build this
// test then fails with a heap-buffer-overflow in tileInside.)
TEST(AsyncCopyPtx, ATileOfAHigherRankTensorCopiesWholeChunks) {
  std::string ptx = emit(copyThroughShared(DType::BF16, Swizzle{3, 3, 3}, /*batched=*/true), "sm_80", true);
  EXPECT_NE(ptx.find("cp.async.cg.shared.global [%r"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("], 16;"), std::string::npos) << "the whole-chunk form";
  EXPECT_NE(ptx.find(", 16, %r"), std::string::npos) << "the zero-fill form";
}

TEST(AsyncCopyPtx, SwizzleThatSplitsChunksCopiesSynchronously) {
  // Swizzle<1, 0, 1> moves single elements: a 16-byte chunk is not contiguous, so no cp.async.
  std::string ptx = emit(copyThroughShared(DType::F32, Swizzle{1, 0, 1}), "sm_80", true);
  EXPECT_EQ(ptx.find("cp.async.cg"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.shared."), std::string::npos);
  EXPECT_NE(ptx.find("cp.async.wait_group 0;"), std::string::npos);
}

}  // namespace
}  // namespace argus::codegen
