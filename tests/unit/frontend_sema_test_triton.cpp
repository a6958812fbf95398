// Sema: the IR of the pieces a Triton user expects (float promotion, new axes,
// reshape). Their diagnostics, nan and the help for Triton habits are golden
// files: tests/golden/diagnostics/triton_*.ag.
#include "frontend_sema_test_util.h"

namespace argus::testing {
namespace {

const ir::Op* lastOp(const ir::Block& block, ir::OpKind kind) {
  const ir::Op* found = nullptr;
  for (const auto& op : block.ops) {
    if (op->kind == kind) found = op.get();
    for (const ir::Block& r : op->regions)
      if (const ir::Op* inner = lastOp(r, kind)) found = inner;
  }
  return found;
}

TEST(SemaPromotion, SixteenBitWithF32IsAnF32Operation) {
  // Before: AG3005 "operands of '*' have different dtypes: bf16 and f32", with a fix-it casting down to bf16.
  auto a = analyzeSource(
      "@kernel(grid=(1,), warps=4)\n"
      "def k(x: Tensor[bf16, (64,)], s: Tensor[f32, (64,)], h: Tensor[f16, (64,)], y: Tensor[f32, (64,)]):\n"
      "    p = load(x) * load(s)\n"
      "    q = load(h) + load(x)\n"
      "    y.tile((64,))[0] = maximum(p, q)\n");
  ASSERT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  // bf16 and f16 are widened exactly (a cast each), then multiplied, added, compared in f32.
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Cast), 3);
  const ir::Op* mul = nullptr;
  for (const auto& op : fn->body.ops)
    if (op->kind == ir::OpKind::Binary && op->attrs.binary == ir::BinaryKind::Mul) mul = op.get();
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(fn->typeOf(mul->results[0]).dtype, ir::DType::F32);
}

TEST(SemaNewAxes, RowVectorScalesAMatrix) {
  // Before: AG4024 "slices are not supported" for w[None, :]; AG4002 for t * w.
  auto a = analyzeSource(
      "@kernel(grid=(1,), warps=4)\n"
      "def k(x: Tensor[f32, (4, 64)], w: Tensor[f32, (64,)], c: Tensor[f32, (4,)], y: Tensor[f32, (4, 64)]):\n"
      "    t = load(x)\n"
      "    y.tile((4, 64))[0, 0] = t * load(w)[None, :] + expand_dims(load(c), 1)\n");
  ASSERT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  // Each vector is reshaped once, straight into the layout its broadcast wants.
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Reshape), 2);
  EXPECT_EQ(countOps(fn->body, ir::OpKind::ConvertLayout), 0);
  EXPECT_TRUE(ir::verify(*fn).empty());
}

TEST(SemaNewAxes, ColumnAndReshape) {
  auto a = analyzeSource(
      "@kernel(grid=(1,), warps=4)\n"
      "def k(x: Tensor[f32, (64,)], y: Tensor[f32, (64, 64)], z: Tensor[f32, (8, 8)]):\n"
      "    t = load(x)\n"
      "    y.tile((64, 64))[0, 0] = t[:, None] * t[None, :]\n"
      "    z.tile((8, 8))[0, 0] = reshape(t, (8, 8))\n");
  ASSERT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  const ir::Op* last = lastOp(fn->body, ir::OpKind::Reshape);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(fn->typeOf(last->results[0]).shape, (std::vector<int64_t>{8, 8}));
}

}  // namespace
}  // namespace argus::testing
