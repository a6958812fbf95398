// An f32 exp2 whose every use is a 16-bit cast or a sum along an axis is the
// hardware's ex2.approx.ftz alone (codegen/elementwise.cpp, docs/language.md);
// any other use keeps the full-range exp2 (range reduction, subnormal results).
#include <gtest/gtest.h>

#include <string>

#include "driver/compilation.h"

namespace {

std::string ptxOf(const std::string& body) {
  const std::string text =
      "@kernel(grid=(cdiv(M, 4),), warps=4)\n"
      "def rows(x: Tensor[f32, (M, 64)], y: Tensor[f32, (M, 64)], h: Tensor[bf16, (M, 64)]):\n"
      "    r = program_id(0)\n"
      "    t = load(x.tile((4, 64))[r, 0])\n"
      "    e = exp2(t)\n" +
      body;
  argus::CompileOptions options;
  options.arch = "sm_90";
  argus::Compilation c(argus::SourceFile("rows.ag", text), options);
  const std::string ptx = c.ptx();
  EXPECT_FALSE(c.hasErrors()) << text;
  return ptx;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Exp2Approximation, SummedOrNarrowedOnlyIsEx2ApproxFtz) {
  const std::string summed = ptxOf("    y.tile((4, 64))[r, 0] = t + sum(e, axis=1)\n");
  EXPECT_GT(count(summed, "ex2.approx.ftz.f32"), 0u);
  EXPECT_EQ(count(summed, "ex2.approx.f32"), 0u);
  EXPECT_EQ(count(summed, "cvt.rni.f32.f32"), 0u);  // no range reduction
  const std::string both = ptxOf("    h.tile((4, 64))[r, 0] = cast(e, bf16)\n"
                                 "    y.tile((4, 64))[r, 0] = t + sum(e, axis=1)\n");
  EXPECT_GT(count(both, "ex2.approx.ftz.f32"), 0u);
  EXPECT_EQ(count(both, "ex2.approx.f32"), 0u);
}

TEST(Exp2Approximation, AnyOtherUseKeepsTheFullRangeExp2) {
  // e / sum(e): e itself reaches memory, so its subnormal results must survive.
  const std::string divided = ptxOf("    y.tile((4, 64))[r, 0] = e / sum(e, axis=1)\n");
  EXPECT_EQ(count(divided, "ex2.approx.ftz.f32"), 0u);
  EXPECT_GT(count(divided, "ex2.approx.f32"), 0u);
  EXPECT_GT(count(divided, "cvt.rni.f32.f32"), 0u);
  // A maximum is not a sum: one flushed element could be the row's result.
  const std::string maximum = ptxOf("    y.tile((4, 64))[r, 0] = t + max(e, axis=1)\n");
  EXPECT_EQ(count(maximum, "ex2.approx.ftz.f32"), 0u);
}

}  // namespace
