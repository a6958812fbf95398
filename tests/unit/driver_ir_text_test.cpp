// The IR text is lossless and the passes can be run on it: every example (and every golden
// IR kernel) prints, parses and prints the same, before and after the passes; the passes run
// on parsed pre-pass IR give the compiler's IR; and codegen on parsed IR gives the compiler's
// PTX byte for byte. Then the parser's errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "driver/compilation.h"
#include "ir/parse.h"
#include "ir/passes.h"
#include "test_sources.h"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> kernelFiles() {
  std::vector<fs::path> out;
  for (const char* dir : {"examples", "examples/triton", "tests/golden/ir"})
    for (const auto& e : fs::directory_iterator(fs::path(ARGUS_SOURCE_DIR) / dir))
      if (e.path().extension() == ".ag") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

argus::CompileOptions optionsFor(const std::string& source) {
  argus::CompileOptions options;
  std::string arch = argus::testing::exampleArch(source);
  if (!arch.empty()) options.arch = arch;
  return options;
}

std::unique_ptr<argus::ir::Module> parseOrFail(const std::string& text) {
  argus::ir::IrParseResult parsed = argus::ir::parseIr(text);
  EXPECT_TRUE(parsed.module) << parsed.error << "\n" << text;
  return std::move(parsed.module);
}

class IrText : public ::testing::TestWithParam<fs::path> {};

TEST_P(IrText, PrintsParsesAndPrintsTheSameBeforeAndAfterThePasses) {
  const std::string source = argus::testing::readSource(GetParam());
  argus::CompileOptions before = optionsFor(source);
  before.passes = std::vector<std::string>{};
  argus::Compilation unpassed(argus::SourceFile(GetParam().filename().string(), source), before);
  const std::string printedBefore = argus::ir::print(unpassed.ir());
  ASSERT_FALSE(printedBefore.empty()) << "no kernel";
  auto parsedBefore = parseOrFail(printedBefore);
  ASSERT_TRUE(parsedBefore);
  EXPECT_EQ(argus::ir::print(*parsedBefore), printedBefore);

  // The passes on the parsed IR do what they do in the compiler.
  argus::Compilation compiled(argus::SourceFile(GetParam().filename().string(), source), optionsFor(source));
  const std::string printedAfter = argus::ir::print(compiled.ir());
  std::vector<const argus::ir::Pass*> all;
  for (const argus::ir::Pass& pass : argus::ir::policyPasses()) all.push_back(&pass);
  argus::DiagnosticSink passDiags;
  argus::ir::runPasses(*parsedBefore, all, argus::ir::PassContext{compiled.options().arch, nullptr, &passDiags});
  EXPECT_EQ(argus::ir::print(*parsedBefore), printedAfter);

  auto parsedAfter = parseOrFail(printedAfter);
  ASSERT_TRUE(parsedAfter);
  EXPECT_EQ(argus::ir::print(*parsedAfter), printedAfter);

  // Codegen reads nothing the text leaves out.
  const std::string& ptx = compiled.ptx();
  ASSERT_FALSE(ptx.empty());
  argus::codegen::Options codegenOptions;
  codegenOptions.arch = compiled.options().arch;
  argus::DiagnosticSink diags;
  std::string fromText;
  ASSERT_TRUE(argus::codegen::emitPTX(*parsedAfter, codegenOptions, diags, &fromText, nullptr));
  EXPECT_TRUE(fromText == ptx) << "codegen of the parsed IR differs from the compiler's PTX";
}

INSTANTIATE_TEST_SUITE_P(Kernels, IrText, ::testing::ValuesIn(kernelFiles()),
                         [](const auto& info) {
                           return info.param.parent_path().filename().string() + "_" + info.param.stem().string();
                         });

std::string errorOf(const std::string& text) {
  argus::ir::IrParseResult parsed = argus::ir::parseIr(text);
  EXPECT_FALSE(parsed.module);
  return parsed.error;
}

const char* kHeader =
    "kernel @k(%x.0: tensor<f32, [N]>, %N.1: i32 size)\n"
    "    grid (cdiv(N, 64), 1, 1) warps 4\n"
    "{\n";

TEST(IrParse, ErrorsSayWhereAndWhat) {
  EXPECT_EQ(errorOf(std::string(kHeader) + "  %2 = frobnicate %1 : i32\n}\n"),
            "line 4, column 8: unknown op 'frobnicate'");
  EXPECT_EQ(errorOf(std::string(kHeader) + "  %2 = add %1, %7 : i32\n}\n"),
            "line 4, column 16: %7 is used before it is defined");
  EXPECT_EQ(errorOf(std::string(kHeader) + "  %2 = add %1, %1 : i33\n}\n"),
            "line 4, column 21: unknown dtype 'i33'");
  EXPECT_EQ(errorOf(std::string(kHeader) + "  %2 = add %1, %1 : i32\n"),
            "line 5: the kernel ends before its closing '}'");
  EXPECT_NE(errorOf(std::string(kHeader) + "  %2 = add %1, %1 : f32\n}\n").find("is not valid IR"), std::string::npos);
  EXPECT_EQ(errorOf("kernel @k(%N.0: i32 size)\n    grid (cdiv(M, 64), 1, 1) warps 4\n{\n}\n"),
            "line 2, column 16: 'M' is not a runtime size of this kernel");
}

TEST(IrParse, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '(');
  EXPECT_NE(errorOf("kernel @k(%N.0: i32 size)\n    grid (" + deep + "N, 1, 1) warps 4\n{\n}\n").find("nested too deeply"),
            std::string::npos);
  std::string regions = kHeader;
  regions += "  %2 = const 0 : i32\n  %3 = const 1 : i32\n";
  for (int i = 0; i < 5000; ++i) regions += "  for %i." + std::to_string(10 + i) + " = %2 to %1 step %3 {\n";
  EXPECT_NE(errorOf(regions).find("nested too deeply"), std::string::npos);
}

TEST(IrParse, AttributesThePrinterWritesComeBack) {
  const std::string text = std::string(kHeader) +
                           "  %2 = const 0 : i32\n"
                           "  %3 = const 1 : i32\n"
                           "  %4 = const 2.5 : f32\n"
                           "  barrier after_mbarrier_init\n"
                           "  wait_group 1\n"
                           "  for %i.5 = %2 to %N.1 step %3 stages 3 specialize {\n"
                           "    yield\n"
                           "  }\n"
                           "}\n";
  auto module = parseOrFail(text);
  ASSERT_TRUE(module);
  EXPECT_EQ(argus::ir::print(*module), text);
}

}  // namespace

// tests/passes/NAME.ir: IR text whose first line is `// RUN: --pass=NAME [--arch=ARCH]`; the
// IR after those passes must equal NAME.ir.expected (ARGUS_UPDATE_GOLDEN=1 rewrites it).
namespace {

std::vector<fs::path> passFiles() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(ARGUS_SOURCE_DIR) / "tests/passes"))
    if (e.path().extension() == ".ir") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

class PassGolden : public ::testing::TestWithParam<fs::path> {};

TEST_P(PassGolden, IrAfterThePassesMatches) {
  const std::string text = argus::testing::readSource(GetParam());
  const std::string run = text.substr(0, text.find('\n'));
  ASSERT_EQ(run.rfind("// RUN:", 0), 0u) << "the first line must be '// RUN: --pass=NAME ...'";
  std::vector<const argus::ir::Pass*> passes;
  argus::ir::PassContext context;
  argus::DiagnosticSink diags;
  context.diags = &diags;
  std::istringstream words(run.substr(7));
  for (std::string w; words >> w;) {
    if (w.rfind("--pass=", 0) == 0) {
      const argus::ir::Pass* pass = argus::ir::findPass(w.substr(7));
      ASSERT_TRUE(pass) << "unknown pass in " << w;
      passes.push_back(pass);
    } else if (w.rfind("--arch=", 0) == 0) {
      context.arch = w.substr(7);
    } else {
      FAIL() << "unknown RUN option " << w;
    }
  }
  ASSERT_FALSE(passes.empty());
  argus::ir::IrParseResult parsed = argus::ir::parseIr(text);
  ASSERT_TRUE(parsed.module) << parsed.error;
  const std::string before = argus::ir::print(*parsed.module);
  argus::ir::runPasses(*parsed.module, passes, context);
  for (const argus::Diagnostic& d : diags.diagnostics()) ADD_FAILURE() << d.code() << " " << d.message;
  const std::string after = argus::ir::print(*parsed.module);
  EXPECT_NE(after, before) << "the passes changed nothing: the test would not notice them break";
  for (const auto& fn : parsed.module->functions) EXPECT_EQ(argus::ir::verify(*fn), std::vector<std::string>{});
  const fs::path expectedPath = fs::path(GetParam().string() + ".expected");
  if (std::getenv("ARGUS_UPDATE_GOLDEN")) {
    std::ofstream(expectedPath) << after;
    return;
  }
  ASSERT_TRUE(fs::exists(expectedPath)) << expectedPath << " is missing (ARGUS_UPDATE_GOLDEN=1 writes it)";
  EXPECT_EQ(after, argus::testing::readSource(expectedPath));
}

INSTANTIATE_TEST_SUITE_P(Files, PassGolden, ::testing::ValuesIn(passFiles()),
                         [](const auto& info) { return info.param.stem().string(); });

}  // namespace
