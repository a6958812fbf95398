// Diagnostics of code generation: resource limits, targets, ptxas, unsupported
// constructs, malformed IR. None of them may crash or leak LLVM's text.
#include <gtest/gtest.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "codegen_test_kernels.h"

namespace argus::codegen {
namespace {

using namespace testing;

const char* kPtxas = "/usr/local/cuda/bin/ptxas";

struct Result {
  bool ok = false;
  DiagnosticSink diags;
  std::string ptx;
};

std::unique_ptr<Result> compile(std::unique_ptr<Function> fn, const std::string& arch = "sm_90") {
  auto module = moduleOf(std::move(fn));
  auto r = std::make_unique<Result>();
  Options options;
  options.arch = arch;
  r->ok = emitPTX(*module, options, r->diags, &r->ptx);
  return r;
}

const Diagnostic& only(const Result& r) {
  EXPECT_EQ(r.diags.diagnostics().size(), 1u);
  return r.diags.diagnostics().front();
}

TEST(CodegenDiagnostics, SharedMemoryOverTheStaticLimit) {
  auto r = compile(makeGemm(DType::F32, 128, 128, 256));  // two 128 KiB buffers
  ASSERT_FALSE(r->ok);
  const Diagnostic& d = only(*r);
  EXPECT_STREQ(d.code(), "AG5001");
  EXPECT_EQ(d.severity, Severity::Error);
  EXPECT_NE(d.message.find("kernel 'gemm' needs 262144 bytes"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("'a_s' 131072"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("sm_90 allows at most 232448 bytes"), std::string::npos) << d.message;
  EXPECT_EQ(d.range, (SourceRange{200, 210}));  // b_s crossed the limit
  ASSERT_EQ(d.labels.size(), 1u);
  EXPECT_EQ(d.labels[0].range, (SourceRange{100, 110}));
  EXPECT_FALSE(d.notes.empty());
}

TEST(CodegenDiagnostics, ExactlyFortyEightKibFits) {
  auto r = compile(makeGemm(DType::F32, 128, 64, 32));  // 16 KiB + 8 KiB
  EXPECT_TRUE(r->ok);
  KernelBuilder k("full", 4);
  ValueId out = k.tensor("Out", DType::F32, {"4"});
  k.sizeParams();
  k.shared(DType::F32, {12288}, "buf");  // 49152 bytes
  k.store(k.view(out, {k.i32(0)}, {4}), k.splat(k.f32(1.0), Layout::canonical({4})));
  EXPECT_TRUE(compile(std::move(k.fn))->ok);
}

TEST(CodegenDiagnostics, OverFortyEightKibMovesToDynamicSharedMemory) {
  KernelBuilder k("almost", 4);
  ValueId x = k.tensor("X", DType::F32, {"N"});
  ValueId out = k.tensor("Out", DType::F32, {"1"});
  k.sizeParams();
  k.shared(DType::F32, {12286}, "buf");  // 49144 bytes, padded to 49152; the cross-warp sum needs 16 more
  ValueId total = k.reduceAll(ReduceKind::Sum, k.load(k.view(x, {k.i32(0)}, {1024})));
  k.store(k.view(out, {k.i32(0)}, {1}), k.splat(total, Layout::canonical({1})));
  EXPECT_EQ(dynamicSharedBytes(*k.fn, "sm_90"), 49168);
  auto r = compile(std::move(k.fn));
  ASSERT_TRUE(r->ok);
  EXPECT_NE(r->ptx.find(".extern .shared .align 16 .b8 argus_dynamic_smem[]"), std::string::npos) << r->ptx;
}

TEST(CodegenDiagnostics, ScratchCountsTowardsTheLimit) {
  KernelBuilder k("over", 4);
  ValueId x = k.tensor("X", DType::F32, {"N"});
  ValueId out = k.tensor("Out", DType::F32, {"1"});
  k.sizeParams();
  k.shared(DType::F32, {58112}, "buf");  // 232448 bytes, the sm_90 maximum; the cross-warp sum needs 16 more
  ValueId total = k.reduceAll(ReduceKind::Sum, k.load(k.view(x, {k.i32(0)}, {1024})));
  k.store(k.view(out, {k.i32(0)}, {1}), k.splat(total, Layout::canonical({1})));
  auto r = compile(std::move(k.fn));
  ASSERT_FALSE(r->ok);
  const Diagnostic& d = only(*r);
  EXPECT_STREQ(d.code(), "AG5001");
  EXPECT_NE(d.message.find("needs 232464 bytes"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("scratch 16"), std::string::npos) << d.message;
}

TEST(CodegenDiagnostics, UnsupportedTarget) {
  auto r = compile(makeVadd(), "sm_75");
  ASSERT_FALSE(r->ok);
  EXPECT_STREQ(only(*r).code(), "AG5002");
  EXPECT_NE(only(*r).message.find("'sm_75'"), std::string::npos);
  EXPECT_FALSE(isSupportedTarget("sm_100"));
  EXPECT_TRUE(isSupportedTarget("sm_90a"));
}

TEST(CodegenDiagnostics, PtxasMissing) {
  DiagnosticSink diags;
  auto cubin = assembleCubin(".version 7.8\n.target sm_90\n.address_size 64\n", "sm_90", "/nonexistent/bin/ptxas", diags);
  EXPECT_FALSE(cubin.has_value());
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  const Diagnostic& d = diags.diagnostics()[0];
  EXPECT_STREQ(d.code(), "AG5004");
  EXPECT_NE(d.message.find("'/nonexistent/bin/ptxas'"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("No such file or directory"), std::string::npos) << d.message;
  EXPECT_FALSE(d.notes.empty());
}

TEST(CodegenDiagnostics, PtxasNotExecutable) {
  DiagnosticSink diags;
  std::string notExecutable = std::string(ARGUS_SOURCE_DIR) + "/CMakeLists.txt";
  EXPECT_FALSE(assembleCubin("", "sm_90", notExecutable, diags).has_value());
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_STREQ(diags.diagnostics()[0].code(), "AG5004");
  EXPECT_NE(diags.diagnostics()[0].message.find("not executable"), std::string::npos);
}

TEST(CodegenDiagnostics, PtxasRejectsBadPtxAndIsQuoted) {
  if (access(kPtxas, X_OK) != 0) GTEST_SKIP() << "ptxas not found at " << kPtxas;
  DiagnosticSink diags;
  std::string ptx = ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus.instruction; }\n";
  EXPECT_FALSE(assembleCubin(ptx, "sm_90", kPtxas, diags).has_value());
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  const Diagnostic& d = diags.diagnostics()[0];
  EXPECT_STREQ(d.code(), "AG5005");
  EXPECT_NE(d.message.find("for sm_90: "), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("ptxas"), std::string::npos) << d.message;  // ptxas's own words
}

TEST(CodegenDiagnostics, AssemblesValidPtx) {
  if (access(kPtxas, X_OK) != 0) GTEST_SKIP() << "ptxas not found at " << kPtxas;
  auto r = compile(makeVadd(), "sm_80");
  ASSERT_TRUE(r->ok);
  DiagnosticSink diags;
  auto cubin = assembleCubin(r->ptx, "sm_80", kPtxas, diags);
  ASSERT_TRUE(cubin.has_value());
  ASSERT_GE(cubin->size(), 4u);
  EXPECT_EQ((*cubin)[0], 0x7f);  // ELF
  EXPECT_EQ((*cubin)[1], 'E');
}

TEST(CodegenDiagnostics, PtxasRejectsBadPtxQuotesTheErrorNotTheVerboseReport) {
  if (access(kPtxas, X_OK) != 0) GTEST_SKIP() << "ptxas not found at " << kPtxas;
  DiagnosticSink diags;
  std::string ptx = ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus.instruction; }\n";
  std::vector<KernelResources> resources;
  EXPECT_FALSE(assembleCubin(ptx, "sm_90", kPtxas, diags, &resources).has_value());
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].message.find("ptxas info"), std::string::npos) << diags.diagnostics()[0].message;
}

TEST(CodegenDiagnostics, PtxasReportIsParsedPerKernel) {
  // ptxas 13.0's -v report, two kernels and a device function between them.
  const char* report =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n"
      "ptxas info    : Function properties for gemm\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers\n"
      "ptxas info    : Compile time = 139.433 ms\n"
      "ptxas info    : Function properties for helper\n"
      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'softmax' for 'sm_90a'\n"
      "ptxas info    : Function properties for softmax\n"
      "    16 bytes stack frame, 24 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 8 bytes smem, 380 bytes cmem[0]\n";
  std::vector<KernelResources> kernels = parsePtxasReport(report);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].kernel, "gemm");
  EXPECT_EQ(kernels[0].registers, 168);
  EXPECT_EQ(kernels[0].spillStoreBytes, 0);
  EXPECT_EQ(kernels[1].kernel, "softmax");
  EXPECT_EQ(kernels[1].registers, 255);
  EXPECT_EQ(kernels[1].stackBytes, 16);
  EXPECT_EQ(kernels[1].spillStoreBytes, 24);
  EXPECT_EQ(kernels[1].spillLoadBytes, 12);
  EXPECT_TRUE(parsePtxasReport("").empty());
  EXPECT_TRUE(parsePtxasReport("ptxas info    : Used 9999999999999999999 registers\n").empty());
}

TEST(CodegenDiagnostics, AssemblingCanReportEachKernelsRegisters) {
  if (access(kPtxas, X_OK) != 0) GTEST_SKIP() << "ptxas not found at " << kPtxas;
  auto r = compile(makeVadd(), "sm_90");
  ASSERT_TRUE(r->ok);
  DiagnosticSink diags;
  std::vector<KernelResources> resources;
  ASSERT_TRUE(assembleCubin(r->ptx, "sm_90", kPtxas, diags, &resources).has_value());
  ASSERT_EQ(resources.size(), 1u);
  EXPECT_EQ(resources[0].kernel, "vadd");
  EXPECT_GT(resources[0].registers, 0);
  EXPECT_LE(resources[0].registers, 255);
  EXPECT_EQ(resources[0].spillStoreBytes, 0);
}

TEST(CodegenDiagnostics, CancelledAssemblyStopsPtxasAndReportsNothing) {
  if (access(kPtxas, X_OK) != 0) GTEST_SKIP() << "ptxas not found at " << kPtxas;
  auto r = compile(makeVadd(), "sm_90");
  ASSERT_TRUE(r->ok);
  DiagnosticSink diags;
  std::vector<KernelResources> resources;
  int polls = 0;
  EXPECT_FALSE(assembleCubin(r->ptx, "sm_90", kPtxas, diags, &resources, [&] { return ++polls >= 1; }).has_value());
  EXPECT_TRUE(diags.diagnostics().empty());
  EXPECT_TRUE(resources.empty());
  EXPECT_GE(polls, 1);
  // Not cancelled: the same call assembles.
  EXPECT_TRUE(assembleCubin(r->ptx, "sm_90", kPtxas, diags, &resources, [] { return false; }).has_value());
  EXPECT_EQ(resources.size(), 1u);
}

TEST(CodegenDiagnostics, Float8IsNotSupportedYet) {
  KernelBuilder k("f8", 4);
  ValueId x = k.tensor("X", DType::F8E4M3, {"N"});
  k.sizeParams();
  (void)x;
  auto r = compile(std::move(k.fn));
  ASSERT_FALSE(r->ok);
  EXPECT_STREQ(only(*r).code(), "AG5006");
  EXPECT_NE(only(*r).message.find("f8e4m3"), std::string::npos) << only(*r).message;
}

TEST(CodegenDiagnostics, F64TranscendentalsPointAtTheOp) {
  KernelBuilder k("f64exp", 4);
  ValueId x = k.tensor("X", DType::F64, {"N"});
  k.sizeParams();
  ValueId tile = k.load(k.view(x, {k.i32(0)}, {128}));
  Attrs a;
  argus::ir::UnaryAttrs(a).unaryKind(UnaryKind::Exp);
  ValueId e = k.b.make(OpKind::Unary, {tile}, k.type(tile), {40, 46}, a);
  k.store(k.view(x, {k.i32(0)}, {128}), e);
  auto r = compile(std::move(k.fn));
  ASSERT_FALSE(r->ok);
  const Diagnostic& d = only(*r);
  EXPECT_STREQ(d.code(), "AG5006");
  EXPECT_EQ(d.range, (SourceRange{40, 46}));
  EXPECT_NE(d.message.find("exp on f64"), std::string::npos) << d.message;
  ASSERT_FALSE(d.notes.empty());
  EXPECT_NE(d.notes[0].find("cast(x, f32)"), std::string::npos);
}

TEST(CodegenDiagnostics, F64ArithmeticIsSupported) {
  KernelBuilder k("f64add", 4);
  ValueId x = k.tensor("X", DType::F64, {"N"});
  k.sizeParams();
  ValueId tile = k.load(k.view(x, {k.i32(0)}, {128}));
  ValueId r2 = k.unary(UnaryKind::Sqrt, k.binary(BinaryKind::Add, tile, tile));
  k.store(k.view(x, {k.i32(0)}, {128}), r2);
  auto r = compile(std::move(k.fn));
  EXPECT_TRUE(r->ok);
  EXPECT_NE(r->ptx.find("sqrt.rn.f64"), std::string::npos);
}

TEST(CodegenDiagnostics, MalformedIrIsAnInternalError) {
  auto fn = makeVadd();
  fn->params.pop_back();  // the body keeps four arguments for three parameters
  auto r = compile(std::move(fn));
  ASSERT_FALSE(r->ok);
  const Diagnostic& d = only(*r);
  EXPECT_STREQ(d.code(), "AG5003");
  EXPECT_NE(d.message.find("internal compiler error"), std::string::npos);
  EXPECT_NE(d.message.find("'vadd'"), std::string::npos);
}

TEST(CodegenModule, SeveralKernelsAndTheLlvmText) {
  auto module = std::make_unique<Module>();
  module->functions.push_back(makeVadd());
  module->functions.push_back(makeSoftmax());
  DiagnosticSink diags;
  std::string llvmIR, ptx;
  ASSERT_TRUE(emitLLVM(*module, Options{}, diags, &llvmIR));
  EXPECT_NE(llvmIR.find("target triple = \"nvptx64-nvidia-cuda\""), std::string::npos);
  EXPECT_NE(llvmIR.find("!\"maxntidx\", i32 128"), std::string::npos) << llvmIR;
  EXPECT_NE(llvmIR.find("define ptx_kernel void @softmax("), std::string::npos);
  ASSERT_TRUE(emitPTX(*module, Options{"sm_90a"}, diags, &ptx));
  EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos);
  EXPECT_NE(ptx.find(".version 8.0"), std::string::npos);
  EXPECT_NE(ptx.find(".entry vadd("), std::string::npos);
  EXPECT_NE(ptx.find(".entry softmax("), std::string::npos);
  EXPECT_TRUE(diags.diagnostics().empty());
}

}  // namespace
}  // namespace argus::codegen
