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

// An error inside a device function called twice: tests/golden/diagnostics/device_error_in_body_reported_once.ag.

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

// Folding into shapes and the grid, abs of the most negative integer, a runtime cdiv,
// sub-view offsets, reductions, where with scalars, and branches that convert layouts
// to agree: the IR in tests/golden/ir/sema_*.ag.

}  // namespace
}  // namespace argus::testing
