// Sema: finer points of constants, views, builtins and device functions.
#include "frontend_sema_test_util.h"

namespace argus::testing {
namespace {

const ir::Op* firstOp(const ir::Block& block, ir::OpKind kind) {
  for (const auto& op : block.ops) {
    if (op->kind == kind) return op.get();
    for (const ir::Block& r : op->regions)
      if (const ir::Op* found = firstOp(r, kind)) return found;
  }
  return nullptr;
}

TEST(SemaConstants, FoldIntoShapesAndGrid) {
  auto a = analyzeSource(
      "@kernel(grid=(cdiv(N, B * 2),))\n"
      "def k(x: Tensor[f32, (N,)], B: const = 32):\n"
      "    H = B // 16 * 8\n"
      "    x.tile((H,))[0] = zeros(f32, (cdiv(100, 4) // 25 * H,))\n");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->grid[0].str(fn->sizeNames), "cdiv(N, 64)");
  const ir::Op* store = firstOp(fn->body, ir::OpKind::Store);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(fn->typeOf(store->operands[1]).shape, std::vector<int64_t>{16});
}

TEST(SemaConstants, AbsOfTheMostNegativeIntegerDoesNotOverflow) {
  // Folding abs(-2^63) negated a signed int64 (undefined behaviour under -fsanitize=undefined).
  auto a = analyzeSource(
      "@kernel(grid=(cdiv(N, B),))\n"
      "def k(x: Tensor[f32, (N,)], B: const = 128):\n"
      "    C = abs(-9223372036854775807 - 1)\n"
      "    x.tile((B,))[0] = load(x.tile((B,))[0]) * C\n");
  EXPECT_EQ(a->diagText(), "");
  EXPECT_NE(a->kernel("k"), nullptr);
}

TEST(SemaConstants, DefinesOfEveryKind) {
  sema::Options options;
  options.defines = {{"S", "0.5"}, {"FLAG", "True"}, {"B", "0x40"}};
  auto a = analyzeSource(
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (N,)], S: const = 1.0, FLAG: const = False, B: const = 8):\n"
      "    t = load(x.tile((B,))[0])\n"
      "    if FLAG:\n"
      "        t = t * S\n"
      "    x.tile((B,))[0] = t\n",
      options);
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(countOps(fn->body, ir::OpKind::If), 0);  // folded on FLAG
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Binary), 1);
  const ir::Op* load = firstOp(fn->body, ir::OpKind::Load);
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(fn->typeOf(load->results[0]).shape, std::vector<int64_t>{64});
}

TEST(SemaBuiltins, RuntimeCdivIsAddSubDiv) {
  auto a = analyzeSource(
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (N,)]):\n"
      "    for i in range(cdiv(N, 64)):\n"
      "        x.tile((64,))[i] = zeros(f32, (64,))\n");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  std::vector<ir::BinaryKind> kinds;
  for (const auto& op : fn->body.ops)
    if (op->kind == ir::OpKind::Binary) kinds.push_back(op->attrs.binary);
  EXPECT_EQ(kinds, (std::vector<ir::BinaryKind>{ir::BinaryKind::Add, ir::BinaryKind::Sub, ir::BinaryKind::Div}));
}

TEST(SemaViews, SubViewsComposeOffsetsOnTheBuffer) {
  auto a = analyzeSource(
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (N, 64)]):\n"
      "    buf = shared(f32, (3, 32, 64))\n"
      "    half = buf[2].tile((16, 32))[1, 1]\n"
      "    x.tile((16, 32))[0, 0] = load(half)\n");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  const ir::Op* view = nullptr;
  for (const auto& op : fn->body.ops)
    if (op->kind == ir::OpKind::View && fn->values[op->results[0]].name == "half") view = op.get();
  ASSERT_NE(view, nullptr);
  ASSERT_EQ(view->operands.size(), 4u);
  EXPECT_EQ(fn->typeOf(view->operands[0]).kind, ir::TypeKind::Shared);
  std::vector<int64_t> offsets;
  for (size_t i = 1; i < 4; ++i) offsets.push_back(fn->values[view->operands[i]].def->attrs.i);
  EXPECT_EQ(offsets, (std::vector<int64_t>{2, 16, 32}));
}

TEST(SemaBuiltins, ReductionsKeepRankOrReduceAll) {
  auto a = analyzeSource(
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (M, N)], y: Tensor[f32, (M,)]):\n"
      "    t = load(x.tile((8, 32))[0, 0])\n"
      "    r = sum(t, axis=-1)\n"
      "    s = max(t)\n"
      "    x.tile((8, 32))[0, 0] = t - r + s\n");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  const ir::Op* reduce = firstOp(fn->body, ir::OpKind::Reduce);
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->attrs.i, 1);
  EXPECT_EQ(fn->typeOf(reduce->results[0]).shape, (std::vector<int64_t>{8, 1}));
  ASSERT_NE(firstOp(fn->body, ir::OpKind::ReduceAll), nullptr);
}

TEST(SemaBuiltins, WhereBroadcastsScalarsIntoTheConditionLayout) {
  auto a = analyzeSource(
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (N,)], s: f32):\n"
      "    t = load(x.tile((64,))[0], other=-inf)\n"
      "    x.tile((64,))[0] = where(t > s, 1.0, s)\n");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  const ir::Op* select = firstOp(fn->body, ir::OpKind::Select);
  ASSERT_NE(select, nullptr);
  EXPECT_TRUE(fn->typeOf(select->results[0]).isTile());
  const ir::Op* load = firstOp(fn->body, ir::OpKind::Load);
  ASSERT_EQ(load->operands.size(), 2u);  // other=-inf
}

TEST(SemaDevice, ConstantsAndTuplesPassThrough) {
  auto a = analyzeSource(
      "@device\n"
      "def pair(v, n: const):\n"
      "    return v * n, v + n\n"
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (N,)]):\n"
      "    a, b = pair(load(x.tile((64,))[0]), 2)\n"
      "    x.tile((64,))[0] = a + b\n");
  EXPECT_EQ(a->diagText(), "");
  ASSERT_NE(a->kernel("k"), nullptr);
  bool sawParam = false;
  for (const sema::Symbol& s : a->result.symbols)
    if (s.name == "n" && s.kind == sema::Symbol::Kind::Parameter) sawParam = true;
  EXPECT_TRUE(sawParam);
}

TEST(SemaDevice, ErrorsInsideAreReportedOnceWithTheCallSites) {
  auto a = analyzeSource(
      "@device\n"
      "def f(v):\n"
      "    return v + missing\n"
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (N,)]):\n"
      "    t = f(load(x.tile((64,))[0]))\n"
      "    u = f(load(x.tile((64,))[1]))\n");
  int count = 0;
  for (const Diagnostic& d : a->diags.diagnostics()) count += std::string(d.code()) == "AG3001";
  EXPECT_EQ(count, 1) << a->diagText();
  ASSERT_NE(a->find("AG3001"), nullptr);
  EXPECT_EQ(a->find("AG3001")->labels.size(), 1u);
}

TEST(SemaControl, BranchesConvertLayoutsToAgree) {
  auto a = analyzeSource(
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (M, N)], s: f32):\n"
      "    t = load(x.tile((8, 32))[0, 0])\n"
      "    r = load(x.tile((8, 1))[0, 0])\n"
      "    if s > 0.0:\n"
      "        r = sum(t, axis=1)\n"
      "    x.tile((8, 1))[0, 0] = r\n");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("k");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(countOps(fn->body, ir::OpKind::ConvertLayout), 1);
}

TEST(SemaSyntaxErrors, FunctionsWithSyntaxErrorsStayQuiet) {
  auto a = analyzeSource(
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (N,)]):\n"
      "    t = load(x.tile((64,))[0]\n"
      "    x.tile((64,))[0] = t + undefined_name\n");
  ASSERT_TRUE(a->diags.hasErrors()) << a->diagText();
  for (const Diagnostic& d : a->diags.diagnostics()) EXPECT_EQ(d.code()[2], '1') << d.message;
  EXPECT_TRUE(a->result.module->functions.empty());
}

}  // namespace
}  // namespace argus::testing
