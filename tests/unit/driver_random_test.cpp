// rand, randint and randint4x: Philox 4x32-10 as Triton computes it, bit for bit
// on the CPU interpreter (against a C++ reference first checked against
// Random123's known answers), and PTX that ptxas assembles.
#include <gtest/gtest.h>

#include <filesystem>

#include "driver/compilation.h"
#include "runtime/interp/interpreter.h"
#include "tests/unit/philox_reference.h"
#include "tests/unit/test_sources.h"

namespace {

using argus::interp::ArgValue;
using argus::interp::HostTensor;
using argus::ir::DType;
using argus::testing::philox4x32_10;
using argus::testing::tritonRandint4x;
using argus::testing::tritonUniform;

TEST(PhiloxReference, MatchesRandom123KnownAnswers) {
  // Random123 1.14, tests/kat_vectors: philox4x32 10 (counter, key) -> output.
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Every generator at once, each into its own output.
std::string wordsKernel() { return argus::testing::readTestKernel("driver_random/philox_words.ag"); }

TEST(Random, InterpreterMatchesTritonBitForBit) {
  argus::Compilation c(argus::SourceFile("words.ag", wordsKernel()), argus::CompileOptions{});
  const argus::ir::Module& module = c.ir();
  for (const argus::Diagnostic& d : c.diagnostics()) ADD_FAILURE() << d.code() << " " << d.message;
  ASSERT_EQ(module.functions.size(), 1u);
  const int64_t n = 300;  // three blocks, the last one partly past the end
  // Seeds of one and two words, negative (sign-extended) ones, and offsets that wrap past 2^31.
  for (int64_t seed : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{0x123456789abcdef}, int64_t{-5}})
    for (int64_t start : {int64_t{0}, int64_t{2147483547}}) {
      std::vector<HostTensor> out;
      for (int k = 0; k < 6; ++k) out.push_back(HostTensor::zeros(k == 4 ? DType::F32 : DType::U32, {n}));
      std::vector<ArgValue> args;
      for (HostTensor& t : out) args.emplace_back(&t);
      args.emplace_back(seed);
      args.emplace_back(start);
      auto error = argus::interp::run(*module.functions[0], args);
      ASSERT_FALSE(error) << error->message;
      for (int64_t i = 0; i < n; ++i) {
        uint32_t offset = static_cast<uint32_t>(start + i);
        std::array<uint32_t, 4> want = tritonRandint4x(seed, offset);
        for (int k = 0; k < 4; ++k)
          ASSERT_EQ(out[static_cast<size_t>(k)].getBits(static_cast<size_t>(i)), want[static_cast<size_t>(k)])
              << "word " << k << " of seed " << seed << ", offset " << offset;
        ASSERT_EQ(out[5].getBits(static_cast<size_t>(i)), want[0]) << "randint, offset " << offset;
        float u = tritonUniform(want[0]);
        ASSERT_EQ(out[4].get(static_cast<size_t>(i)), static_cast<double>(u)) << "rand, offset " << offset;
        ASSERT_GE(u, 0.0f);
        ASSERT_LT(u, 1.0f);
      }
    }
  // The all-zero known answer straight from the kernel: seed 0, offset 0.
  std::vector<HostTensor> out;
  for (int k = 0; k < 6; ++k) out.push_back(HostTensor::zeros(k == 4 ? DType::F32 : DType::U32, {1}));
  std::vector<ArgValue> args;
  for (HostTensor& t : out) args.emplace_back(&t);
  args.emplace_back(int64_t{0});
  args.emplace_back(int64_t{0});
  ASSERT_FALSE(argus::interp::run(*module.functions[0], args));
  EXPECT_EQ(out[0].getBits(0), 0x6627e8d5u);
  EXPECT_EQ(out[1].getBits(0), 0xe169c58du);
  EXPECT_EQ(out[2].getBits(0), 0xbc57ac4cu);
  EXPECT_EQ(out[3].getBits(0), 0x9b00dbd8u);
}

TEST(Random, PtxAssemblesWithPtxas) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/ptxas")) GTEST_SKIP() << "ptxas is not installed";
  for (const char* arch : {"sm_80", "sm_90"}) {
    argus::CompileOptions options;
    options.arch = arch;
    argus::Compilation c(argus::SourceFile("words.ag", wordsKernel()), options);
    const auto& cubin = c.cubin();
    for (const argus::Diagnostic& d : c.diagnostics()) ADD_FAILURE() << arch << ": " << d.code() << " " << d.message;
    ASSERT_TRUE(cubin.has_value()) << arch;
    // The 64-bit products of 32-bit words become widening 32-bit multiplies (LLVM may
    // still fold a round whose key is a 64-bit scalar into a 64-bit one).
    EXPECT_NE(c.ptx().find("mul.wide.u32"), std::string::npos);
  }
}

// A float seed or float offsets: tests/golden/diagnostics/builtin_rand_float_seed_and_offsets.ag.

}  // namespace
