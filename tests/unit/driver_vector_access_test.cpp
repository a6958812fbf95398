// 16-bit row kernels move their data in 16-byte accesses (ir/vector_layout.h,
// codegen/vector_access.cpp): the layout the compiler picks, the predicated
// ld/st.global.v4.b32 beside the element path it falls back to, note AG5022 where a
// layout prevents it, and the bf16 row examples on the interpreter at ragged sizes
// against a double reference (the interpreter runs the IR, which layouts do not
// change; the PTX of both paths is checked on the H200 by bench/bench_gpu.py at ragged
// and misaligned sizes).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>
#include <string>

#include "hopper_test_util.h"
#include "test_sources.h"

namespace {

using argus::interp::ArgValue;
using argus::interp::HostTensor;
using argus::testing::hopper::errorsOf;
using argus::testing::hopper::ptxasReport;

// Compiles through PTX, so that every diagnostic (the notes of ir/vector_layout too) is there.
std::unique_ptr<argus::Compilation> compile(const std::string& name, const std::string& text, const std::string& arch) {
  auto c = argus::testing::hopper::compile(name, text, arch);
  c->ptx();
  return c;
}

size_t count(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

std::string notesOf(argus::Compilation& c) {
  std::string out;
  for (const argus::Diagnostic& d : c.diagnostics())
    if (d.severity != argus::Severity::Error) out += std::string(d.code()) + " " + d.message + "\n";
  return out;
}

// The vec of the layout of every tile-typed result of a load in `c`'s only kernel.
std::vector<int64_t> loadVecs(argus::Compilation& c) {
  std::vector<int64_t> out;
  const auto& fn = *c.ir().functions.at(0);
  for (const auto& op : fn.body.ops)
    if (op->kind == argus::ir::OpKind::Load && fn.typeOf(op->results[0]).isTile())
      out.push_back(fn.typeOf(op->results[0]).layout.vec);
  return out;
}

TEST(VectorAccess, Bf16SoftmaxMovesSixteenBytesPerThread) {
  auto c = compile("softmax_bf16.ag", argus::testing::readExample("softmax_bf16.ag"), "sm_90");
  ASSERT_EQ(errorsOf(*c), "");
  EXPECT_EQ(notesOf(*c), "");
  EXPECT_EQ(loadVecs(*c), std::vector<int64_t>{8});
  const std::string& ptx = c->ptx();
  // BLOCK = 4096 over 8 warps: 16 elements per thread, two groups of 8, each one predicated
  // 16-byte access; beside them the element path for unaligned rows.
  EXPECT_EQ(count(ptx, R"(@%p\d+ ld\.global\.v4\.b32)"), 2u) << ptx;
  EXPECT_EQ(count(ptx, R"(@%p\d+ st\.global\.v4\.b32)"), 2u) << ptx;
  EXPECT_EQ(count(ptx, R"(ld\.global\.b16)"), 16u);
  EXPECT_EQ(count(ptx, R"(st\.global\.b16)"), 16u);
  // The f32 results are narrowed two at a time into the words the vector stores write.
  EXPECT_GE(count(ptx, R"(cvt\.rn\.bf16x2\.f32)"), 8u);
  EXPECT_EQ(ptxasReport(ptx).find("error"), std::string::npos);
}

TEST(VectorAccess, NormsVectorizeEveryRowAndVectorOperand) {
  auto ln = compile("layernorm_bf16.ag", argus::testing::readExample("layernorm_bf16.ag"), "sm_90");
  ASSERT_EQ(errorsOf(*ln), "");
  // No note for the row's first element, a one-element tile read as the statistics' shift:
  // one access per thread whatever its shape (it was noted before the small-tile check came first).
  EXPECT_EQ(notesOf(*ln), "");
  EXPECT_EQ(loadVecs(*ln), (std::vector<int64_t>{8, 1, 8, 8}));  // x, x[r, 0], w, b
  EXPECT_EQ(count(ln->ptx(), R"(@%p\d+ ld\.global\.v4\.b32)"), 6u);
  EXPECT_EQ(count(ln->ptx(), R"(@%p\d+ st\.global\.v4\.b32)"), 2u);
  EXPECT_EQ(ptxasReport(ln->ptx()).find("error"), std::string::npos);
  auto rms = compile("rmsnorm_bf16.ag", argus::testing::readExample("rmsnorm_bf16.ag"), "sm_80");
  ASSERT_EQ(errorsOf(*rms), "");
  EXPECT_EQ(loadVecs(*rms), (std::vector<int64_t>{8, 8}));  // x, w
  EXPECT_EQ(count(rms->ptx(), R"(@%p\d+ ld\.global\.v4\.b32)"), 4u);
}

TEST(VectorAccess, TheAlignmentTestGuardsTheVectorPath) {
  // Base address, row length and column offset, block-uniform: one branch per access site.
  auto c = compile("softmax_bf16.ag", argus::testing::readExample("softmax_bf16.ag"), "sm_90");
  const std::string& ir = c->llvmIR();
  EXPECT_EQ(count(ir, R"(%vec\.aligned\d* = )"), 2u) << "one test for the load, one for the store";
  EXPECT_EQ(count(ir, R"(load\.vec:)"), 1u);
  EXPECT_EQ(count(ir, R"(store\.vec:)"), 1u);
  // The two paths meet as 32-bit words: 16 bf16 values in 8 phis.
  EXPECT_EQ(count(ir, R"(= phi i32 )"), 8u) << ir;
}

TEST(VectorAccess, F32KernelsKeepTheCanonicalLayout) {
  for (const char* name : {"softmax.ag", "layernorm.ag", "vadd.ag"}) {
    auto c = compile(name, argus::testing::readExample(name), "sm_90");
    ASSERT_EQ(errorsOf(*c), "") << name;
    for (int64_t vec : loadVecs(*c)) EXPECT_EQ(vec, 1) << name;
    EXPECT_EQ(count(c->ptx(), R"(ld\.global\.v4\.b32)"), 0u) << name;
  }
}

TEST(VectorAccess, ElementwiseBf16AndTwoDimensionalTiles) {
  const std::string text = argus::testing::readTestKernel("driver_vector_access/f16_axpy_rows.ag");
  auto c = compile("axpy.ag", text, "sm_90");
  ASSERT_EQ(errorsOf(*c), "");
  EXPECT_EQ(notesOf(*c), "");
  EXPECT_EQ(loadVecs(*c), (std::vector<int64_t>{8, 8}));
  // (16, 128) over 128 threads: 16 elements, two 16-byte groups per thread and tensor.
  EXPECT_EQ(count(c->ptx(), R"(@%p\d+ ld\.global\.v4\.b32)"), 4u);
  EXPECT_EQ(count(c->ptx(), R"(@%p\d+ st\.global\.v4\.b32)"), 2u);
  EXPECT_EQ(ptxasReport(c->ptx()).find("error"), std::string::npos);
}

TEST(VectorAccess, HintWhenTheLayoutPreventsIt) {
  // Rows of 4 elements: no 8-element groups.
  const std::string narrow = R"(@kernel(grid=(cdiv(M, 64),), warps=4)
def k(x: Tensor[bf16, (M, 4)], y: Tensor[bf16, (M, 4)]):
    y.tile((64, 4))[program_id(0), 0] = load(x.tile((64, 4))[program_id(0), 0])
)";
  auto c = compile("narrow.ag", narrow, "sm_90");
  ASSERT_EQ(errorsOf(*c), "");
  const std::string notes = notesOf(*c);
  EXPECT_NE(notes.find("AG5022 this bf16 load moves 2 bytes per thread per instruction, not 16: the tile's last "
                       "extent (4) is not a multiple of 8"),
            std::string::npos)
      << notes;
  EXPECT_EQ(count(c->ptx(), R"(ld\.global\.v4)"), 0u);
  // A tile too small for the block: 256 elements in groups of 8 would leave 96 of 128 threads idle.
  const std::string small = R"(@kernel(grid=(M,), warps=4)
def k(x: Tensor[bf16, (M, 256)], y: Tensor[bf16, (M, 256)]):
    y.tile((256,))[program_id(0), 0] = load(x.tile((256,))[program_id(0), 0])
)";
  auto s = compile("small.ag", small, "sm_90");
  ASSERT_EQ(errorsOf(*s), "");
  EXPECT_NE(notesOf(*s).find("AG5022"), std::string::npos) << notesOf(*s);
  // Tiles that meet a dot or shared memory keep their layout without a note: those paths move
  // their data in wide accesses by other means.
  for (const char* name : {"gemm.ag", "gemm_tc.ag", "attention.ag"}) {
    auto g = compile(name, argus::testing::readExample(name), "sm_90");
    EXPECT_EQ(notesOf(*g).find("AG5022"), std::string::npos) << name << ": " << notesOf(*g);
  }
}

// Softmax rows in double from the bf16 inputs.
std::vector<double> softmaxReference(const HostTensor& x, int64_t m, int64_t n) {
  std::vector<double> out(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < n; ++c) mx = std::max(mx, x.get(static_cast<size_t>(r * n + c)));
    for (int64_t c = 0; c < n; ++c) sum += std::exp(x.get(static_cast<size_t>(r * n + c)) - mx);
    for (int64_t c = 0; c < n; ++c)
      out[static_cast<size_t>(r * n + c)] = std::exp(x.get(static_cast<size_t>(r * n + c)) - mx) / sum;
  }
  return out;
}

TEST(VectorAccess, RowExamplesOnTheInterpreterAtRaggedSizes) {
  // Small BLOCK so that the interpreter is quick; rows of 8 (one group per thread), 61 (not a
  // multiple of 8) and 256 (the whole tile).
  std::mt19937 rng(19);
  for (int64_t n : {8, 61, 256}) {
    const int64_t m = 3;
    argus::CompileOptions options;
    options.arch = "sm_90";
    options.defines = {{"BLOCK", "256"}, {"W", "1"}};
    argus::Compilation small(argus::SourceFile("softmax_bf16.ag", argus::testing::readExample("softmax_bf16.ag")),
                             options);
    (void)small.ir();
    ASSERT_EQ(errorsOf(small), "");
    EXPECT_EQ(notesOf(small), "");
    ASSERT_EQ(small.ir().functions.size(), 1u);
    EXPECT_EQ(loadVecs(small), std::vector<int64_t>{8});
    HostTensor x = argus::testing::hopper::randomBf16({m, n}, rng);
    HostTensor y = HostTensor::zeros(argus::ir::DType::BF16, {m, n});
    std::vector<ArgValue> args = {&x, &y};
    auto error = argus::interp::run(*small.ir().functions[0], args);
    ASSERT_FALSE(error) << error->message;
    std::vector<double> want = softmaxReference(x, m, n);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(y.get(i), want[i], 4e-3 * want[i] + 1e-6) << "n=" << n << " element " << i;
  }
}

}  // namespace
