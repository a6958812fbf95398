// Sema: the examples analyse cleanly into verified IR with the expected shape.
#include "frontend_sema_test_util.h"

namespace argus::testing {
namespace {

std::string example(const std::string& name) {
  return readSourceFile(std::string(ARGUS_SOURCE_DIR) + "/examples/" + name);
}

TEST(SemaExamples, VaddBuildsVerifiedIr) {
  auto a = analyzeSource(example("vadd.ag"), {}, "vadd.ag");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("vadd");
  ASSERT_NE(fn, nullptr);
  EXPECT_TRUE(ir::verify(*fn).empty());
  ASSERT_EQ(fn->params.size(), 4u);
  EXPECT_EQ(fn->params[0].kind, ir::ParamKind::Tensor);
  EXPECT_EQ(fn->params[3].kind, ir::ParamKind::Size);
  EXPECT_EQ(fn->params[3].name, "N");
  EXPECT_EQ(fn->sizeNames, std::vector<std::string>{"N"});
  EXPECT_EQ(fn->grid[0].str(fn->sizeNames), "cdiv(N, 1024)");
  EXPECT_EQ(fn->grid[1].str(fn->sizeNames), "1");
  EXPECT_EQ(fn->numWarps, 4);
  ASSERT_EQ(fn->constants.size(), 1u);
  EXPECT_EQ(fn->constants[0], (std::pair<std::string, int64_t>{"BLOCK", 1024}));
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Load), 2);
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Store), 1);
}

TEST(SemaExamples, GemmCarriesTheAccumulator) {
  auto a = analyzeSource(example("gemm.ag"), {}, "gemm.ag");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("gemm");
  ASSERT_NE(fn, nullptr);
  EXPECT_TRUE(ir::verify(*fn).empty());
  EXPECT_EQ(fn->sizeNames, (std::vector<std::string>{"M", "K", "N"}));
  EXPECT_EQ(countOps(fn->body, ir::OpKind::AllocShared), 2);
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Dot), 1);
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Barrier), 2);
  const ir::Op* loop = nullptr;
  for (const auto& op : fn->body.ops)
    if (op->kind == ir::OpKind::For) loop = op.get();
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->results.size(), 1u);  // acc
  EXPECT_EQ(fn->values[loop->results[0]].name, "acc");
  EXPECT_EQ(fn->typeOf(loop->results[0]), ir::Type::tile(ir::DType::F32, ir::Layout::canonical({64, 64})));
}

TEST(SemaExamples, SoftmaxBroadcastsReductionsForFree) {
  auto a = analyzeSource(example("softmax.ag"), {}, "softmax.ag");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("softmax");
  ASSERT_NE(fn, nullptr);
  EXPECT_TRUE(ir::verify(*fn).empty());
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Reduce), 2);
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Broadcast), 2);
  EXPECT_EQ(countOps(fn->body, ir::OpKind::ConvertLayout), 0);
  ASSERT_EQ(fn->requirements.size(), 1u);
  EXPECT_EQ(fn->requirements[0].condition.str(fn->sizeNames), "N <= 1024");
  EXPECT_EQ(fn->requirements[0].text, "a row must fit in one tile: N <= BN");
}

TEST(SemaExamples, GeluInlinesTheDeviceFunction) {
  auto a = analyzeSource(example("gelu.ag"), {}, "gelu.ag");
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("scale_bias_gelu");
  ASSERT_NE(fn, nullptr);
  EXPECT_TRUE(ir::verify(*fn).empty());
  EXPECT_EQ(fn->params[3].kind, ir::ParamKind::Scalar);
  EXPECT_EQ(countOps(fn->body, ir::OpKind::Unary), 1);  // erf
  EXPECT_EQ(a->result.module->functions.size(), 1u);
}

TEST(SemaDefines, OverrideConstants) {
  sema::Options options;
  options.defines = {{"BLOCK", "256"}};
  auto a = analyzeSource(example("vadd.ag"), options);
  EXPECT_EQ(a->diagText(), "");
  const ir::Function* fn = a->kernel("vadd");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->grid[0].str(fn->sizeNames), "cdiv(N, 256)");
}

TEST(SemaDefines, BadAndUnusedDefines) {
  sema::Options options;
  options.defines = {{"BLOCK", "big"}, {"NOPE", "3"}};
  auto a = analyzeSource(example("vadd.ag"), options);
  ASSERT_NE(a->find("AG0005"), nullptr) << a->diagText();
  EXPECT_EQ(a->find("AG0005")->message, "-D BLOCK=big: 'big' is not an integer, a float or a bool");
  ASSERT_NE(a->find("AG0006"), nullptr);
  EXPECT_EQ(a->find("AG0006")->severity, Severity::Warning);
}

// A -D whose name no kernel parameter can have is an error, not "unused"
// (the registry's AG0006 names it as a name: -D {0:name}).
TEST(SemaDefines, NamesThatAreNotNames) {
  sema::Options options;
  options.defines = {{"a-b", "1"}, {"x y", "2"}, {"9N", "3"}};
  auto a = analyzeSource(example("vadd.ag"), options);
  EXPECT_EQ(a->find("AG0006"), nullptr) << a->diagText();
  std::vector<std::string> messages;
  for (const Diagnostic& d : a->diags.diagnostics())
    if (std::string(d.code()) == "AG0005") messages.push_back(d.message);
  ASSERT_EQ(messages.size(), 3u) << a->diagText();
  EXPECT_EQ(messages[0], "-D a-b=1: 'a-b' is not a name; -D sets a const parameter, as in -D BM=128");
}

TEST(SemaDefines, HugeNonPowerOfTwoExtentDoesNotOverflow) {
  // Searching the powers of two around 2^63-1 computed 2^62 * 2 (signed overflow).
  sema::Options options;
  options.defines = {{"BLOCK", "9223372036854775807"}};
  auto a = analyzeSource(example("vadd.ag"), options);
  const Diagnostic* d = a->find("AG4003");
  ASSERT_NE(d, nullptr) << a->diagText();
  EXPECT_NE(d->message.find("the nearest are 4611686018427387904 and 9223372036854775808"), std::string::npos)
      << d->message;
  ASSERT_FALSE(d->notes.empty());
  EXPECT_NE(d->notes[0].find("-D BLOCK=4611686018427387904)"), std::string::npos) << d->notes[0];
}

TEST(SemaDefines, ConstWithoutValueNeedsDefine) {
  const char* src =
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (N,)], B: const):\n"
      "    x.tile((B,))[0] = zeros(f32, (B,))\n";
  auto a = analyzeSource(src);
  ASSERT_NE(a->find("AG3029"), nullptr) << a->diagText();
  sema::Options options;
  options.defines = {{"B", "64"}};
  auto b = analyzeSource(src, options);
  EXPECT_EQ(b->diagText(), "");
}

TEST(SemaNames, UnknownNameSuggestsAndFixes) {
  auto a = analyzeSource(
      "@kernel(grid=(1,))\n"
      "def k(x: Tensor[f32, (N,)]):\n"
      "    value = load(x.tile((64,))[0])\n"
      "    x.tile((64,))[0] = valeu\n");
  const Diagnostic* d = a->find("AG3001");
  ASSERT_NE(d, nullptr) << a->diagText();
  EXPECT_EQ(d->message, "unknown name 'valeu'; did you mean 'value'?");
  ASSERT_EQ(d->fixits.size(), 1u);
  EXPECT_EQ(d->fixits[0].replacement, "value");
  EXPECT_EQ(a->file->slice(d->fixits[0].range), "valeu");
  EXPECT_TRUE(a->result.module->functions.empty());
}

TEST(SemaNames, SymbolsAndReferences) {
  auto a = analyzeSource(example("vadd.ag"));
  const sema::Symbol* local = nullptr;
  const sema::Symbol* size = nullptr;
  for (const sema::Symbol& s : a->result.symbols) {
    if (s.name == "i" && s.kind == sema::Symbol::Kind::Local) local = &s;
    if (s.name == "N" && s.kind == sema::Symbol::Kind::Size) size = &s;
  }
  ASSERT_NE(local, nullptr);
  EXPECT_EQ(local->references.size(), 3u);
  EXPECT_EQ(local->typeDescription, "i32 scalar");
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(size->references.size(), 3u);  // y, out, grid
}

TEST(SemaTypes, ExprTypesRecordTiles) {
  auto a = analyzeSource(example("vadd.ag"));
  bool sawTile = false;
  for (const auto& [id, type] : a->result.exprTypes)
    if (type.isTile() && type.shape == std::vector<int64_t>{1024}) sawTile = true;
  EXPECT_TRUE(sawTile);
}

// Recursion through several device functions: tests/golden/diagnostics/device_mutual_recursion.ag.

// The IR of literals adapting, a loaded column's broadcast, an if/elif that yields, a
// static if, and the launch grid: tests/golden/ir/sema_*.ag; max's fix-it:
// tests/golden/diagnostics/sema_fixit_max_two_operands.ag.

}  // namespace
}  // namespace argus::testing
