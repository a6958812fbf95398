// Emits PTX for the reference kernels on every target and assembles it with
// ptxas, then checks that the instructions the lowering promises are there.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <regex>

#include "codegen/codegen.h"
#include "codegen_test_kernels.h"

namespace argus::codegen {
namespace {

using namespace testing;

const char* kPtxas = "/usr/local/cuda/bin/ptxas";

bool havePtxas() { return access(kPtxas, X_OK) == 0; }

std::string describe(const DiagnosticSink& diags) {
  std::string text;
  for (const Diagnostic& d : diags.diagnostics()) {
    text += std::string(d.code()) + ": " + d.message + "\n";
    for (const std::string& n : d.notes) text += "  note: " + n + "\n";
  }
  return text;
}

size_t count(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

class CodegenPtx : public ::testing::TestWithParam<std::string> {
 protected:
  // Emits PTX for `fn` and assembles it; fails the test on any diagnostic but
  // one warning of code `expectedWarning`, when given.
  std::string compile(std::unique_ptr<Function> fn, std::string* llvmIR = nullptr, const char* expectedWarning = nullptr) {
    auto module = moduleOf(std::move(fn));
    Options options;
    options.arch = GetParam();
    DiagnosticSink diags;
    std::string ptx;
    bool ok = emitPTX(*module, options, diags, &ptx, llvmIR);
    EXPECT_TRUE(ok) << describe(diags);
    if (expectedWarning) {
      EXPECT_EQ(diags.diagnostics().size(), 1u) << describe(diags);
      if (!diags.diagnostics().empty()) {
        EXPECT_EQ(std::string(diags.diagnostics()[0].code()), expectedWarning) << describe(diags);
        EXPECT_EQ(diags.diagnostics()[0].severity, Severity::Warning);
      }
    } else {
      EXPECT_TRUE(diags.diagnostics().empty()) << describe(diags);
    }
    EXPECT_NE(ptx.find(".target " + GetParam()), std::string::npos);
    if (!ok) return ptx;
    if (!havePtxas()) {
      ADD_FAILURE() << "unreachable: tests are skipped without ptxas";
      return ptx;
    }
    DiagnosticSink asmDiags;
    auto cubin = assembleCubin(ptx, GetParam(), kPtxas, asmDiags);
    EXPECT_TRUE(cubin.has_value()) << describe(asmDiags) << "\n" << ptx;
    if (cubin) {
      EXPECT_GT(cubin->size(), 64u);
    }
    return ptx;
  }
  void SetUp() override {
    if (!havePtxas()) GTEST_SKIP() << "ptxas not found at " << kPtxas << "; PTX cannot be assembled";
  }
};

TEST_P(CodegenPtx, VaddIsMaskedAndPredicated) {
  std::string llvmIR;
  std::string ptx = compile(makeVadd(), &llvmIR);
  EXPECT_NE(ptx.find(".visible .entry vadd("), std::string::npos);
  EXPECT_NE(ptx.find(".maxntid 128, 1, 1"), std::string::npos);
  EXPECT_GE(count(ptx, R"(@%p\d+ ld\.global\.b32)"), 8u) << ptx;  // 8 values per thread per input
  EXPECT_GE(count(ptx, R"(@%p\d+ st\.global\.b32)"), 8u) << ptx;
  EXPECT_NE(llvmIR.find("ptx_kernel void @vadd(ptr addrspace(1) noalias"), std::string::npos) << llvmIR;
  EXPECT_NE(llvmIR.find("!\"kernel\""), std::string::npos);
}

TEST_P(CodegenPtx, FusedGelu) {
  std::string ptx = compile(makeGelu());
  EXPECT_NE(ptx.find("fma.rn.f32"), std::string::npos);
  EXPECT_NE(ptx.find("ex2.approx"), std::string::npos);  // erf's exp
  EXPECT_GE(count(ptx, R"(@%p\d+ st\.global\.b32)"), 1u);
}

TEST_P(CodegenPtx, FusedGeluBf16) {
  std::string ptx = compile(makeGelu(DType::BF16));
  EXPECT_GE(count(ptx, R"(@%p\d+ ld\.global\.b16)"), 1u) << ptx;
  EXPECT_GE(count(ptx, R"(@%p\d+ st\.global\.b16)"), 1u) << ptx;
}

TEST_P(CodegenPtx, SoftmaxWithinWarps) {
  std::string ptx = compile(makeSoftmax(4, 128, 4));
  // Row of 128 over 32 lanes: 5 butterfly steps per reduction, two reductions.
  EXPECT_GE(count(ptx, R"(shfl\.sync\.bfly\.b32)"), 10u) << ptx;
  EXPECT_EQ(ptx.find("bar.sync"), std::string::npos) << "no cross-warp traffic expected";
  EXPECT_NE(ptx.find("ex2.approx"), std::string::npos);
}

TEST_P(CodegenPtx, SoftmaxAcrossWarps) {
  std::string ptx = compile(makeSoftmax(2, 1024, 4));
  EXPECT_GE(count(ptx, R"(shfl\.sync\.bfly\.b32)"), 10u);
  EXPECT_NE(ptx.find("bar.sync"), std::string::npos);
  EXPECT_NE(ptx.find("st.shared"), std::string::npos);
  EXPECT_NE(ptx.find("ld.shared"), std::string::npos);
}

TEST_P(CodegenPtx, TiledGemm) {
  std::string ptx = compile(makeGemm());
  EXPECT_NE(ptx.find("bar.sync"), std::string::npos);
  EXPECT_NE(ptx.find("st.shared"), std::string::npos);
  EXPECT_NE(ptx.find("ld.shared"), std::string::npos);
  EXPECT_NE(ptx.find("fma.rn.f32"), std::string::npos);
  EXPECT_GE(count(ptx, R"(@%p\d+ st\.global\.b32)"), 1u);
  EXPECT_NE(ptx.find(".shared .align 16 .b8"), std::string::npos) << ptx;
}

TEST_P(CodegenPtx, TiledGemmBf16) {
  // Two warps over a 32 x 32 accumulator fit no mma tile: FMAs, and AG5021 says why.
  std::string ptx = compile(makeGemm(DType::BF16, 32, 32, 16, 2), nullptr, "AG5021");
  EXPECT_NE(ptx.find("fma.rn.f32"), std::string::npos);
}

TEST_P(CodegenPtx, EveryElementwiseOp) {
  std::string ptx = compile(makeMathKernel());
  EXPECT_NE(ptx.find("sqrt.rn.f32"), std::string::npos);
  EXPECT_NE(ptx.find("div.rn.f32"), std::string::npos);
  EXPECT_NE(ptx.find("cvt.rmi.f32.f32"), std::string::npos);  // floor
}

TEST_P(CodegenPtx, ColumnSumAcrossWarps) {
  std::string ptx = compile(makeColumnSum());
  EXPECT_NE(ptx.find("bar.sync"), std::string::npos);
  EXPECT_EQ(count(ptx, R"(shfl\.sync)"), 0u) << "axis 0 has no lane bits";
}

TEST_P(CodegenPtx, RowStatsWithReplicasAndConversion) {
  std::string ptx = compile(makeRowStats());
  EXPECT_GE(count(ptx, R"(shfl\.sync\.bfly\.b32)"), 6u);  // 3 lane bits, min and prod
  EXPECT_NE(ptx.find("st.shared"), std::string::npos);    // the layout conversion
}

TEST_P(CodegenPtx, IntegersLoopsAndBranches) {
  std::string ptx = compile(makeIntegerKernel());
  EXPECT_GE(count(ptx, R"(@%p\d+ ld\.global\.u8)"), 2u) << ptx;  // i8 and bool
  EXPECT_GE(count(ptx, R"(@%p\d+ st\.global\.b16)"), 1u);        // f16
}

INSTANTIATE_TEST_SUITE_P(Targets, CodegenPtx, ::testing::Values("sm_80", "sm_90", "sm_90a"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace argus::codegen
