// The harness's host side: --flops expressions, dtype decoding, comparison
// with the reference, timing statistics, saved runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "runtime/gpu/benchmark.h"

namespace argus::gpu {
namespace {

int64_t evalFlops(const std::string& text, const std::map<std::string, int64_t>& sizes) {
  SizeExpr e;
  std::string error;
  EXPECT_TRUE(parseSizeExpression(text, e, error)) << text << ": " << error;
  int64_t out = -1;
  EXPECT_TRUE(e.evaluate(sizes, out, error)) << text << ": " << error;
  return out;
}

TEST(FlopsExpression, ParsesWithPrecedence) {
  std::map<std::string, int64_t> sizes{{"M", 8192}, {"N", 8192}, {"K", 8192}, {"B_2", 3}};
  EXPECT_EQ(evalFlops("2*M*N*K", sizes), 2ll * 8192 * 8192 * 8192);
  EXPECT_EQ(evalFlops("1 + 2 * 3", {}), 7);
  EXPECT_EQ(evalFlops("(1 + 2) * 3", {}), 9);
  EXPECT_EQ(evalFlops("10 - 4 - 3", {}), 3);  // left-associative
  EXPECT_EQ(evalFlops("7 // 2 * 2", {}), 6);
  EXPECT_EQ(evalFlops("-7 // 2", {}), -3);
  EXPECT_EQ(evalFlops("M % 1000 + B_2", sizes), 192 + 3);
  EXPECT_EQ(evalFlops("  ((M))  ", sizes), 8192);
}

TEST(FlopsExpression, ErrorsSayWhere) {
  SizeExpr e;
  std::string error;
  EXPECT_FALSE(parseSizeExpression("2*", e, error));
  EXPECT_EQ(error, "expected a number, a size name or '(' at the end of '2*'");
  EXPECT_FALSE(parseSizeExpression("M/N", e, error));
  EXPECT_EQ(error, "use '//' for integer division at column 2 of 'M/N'");
  EXPECT_FALSE(parseSizeExpression("2 3", e, error));
  EXPECT_EQ(error, "unexpected '3' at column 3 of '2 3'");
  EXPECT_FALSE(parseSizeExpression("(M", e, error));
  EXPECT_EQ(error, "expected ')' at the end of '(M'");
  EXPECT_FALSE(parseSizeExpression("99999999999999999999", e, error));
  EXPECT_FALSE(parseSizeExpression(std::string(5000, '('), e, error));
  EXPECT_NE(error.find("nested too deeply"), std::string::npos);
  ASSERT_TRUE(parseSizeExpression("2*Q", e, error));
  int64_t out = 0;
  EXPECT_FALSE(e.evaluate({{"N", 1}}, out, error));
  EXPECT_EQ(error, "no value for size 'Q'");
}

double decode(const std::string& dtype, std::vector<uint8_t> bytes) {
  std::optional<HostDType> t = hostDTypeFromName(dtype);
  EXPECT_TRUE(t) << dtype;
  return t ? t->decode(bytes.data()) : 0;
}

TEST(HostDTypes, DecodeLittleEndianElements) {
  EXPECT_EQ(decode("f16", {0x00, 0x3c}), 1.0);
  EXPECT_EQ(decode("f16", {0x00, 0xc0}), -2.0);
  EXPECT_EQ(decode("f16", {0x01, 0x00}), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_TRUE(std::isinf(decode("f16", {0x00, 0x7c})));
  EXPECT_EQ(decode("bf16", {0x80, 0x3f}), 1.0);
  EXPECT_EQ(decode("bf16", {0x40, 0xc0}), -3.0);
  EXPECT_EQ(decode("f8e4m3", {0x7e}), 448.0);
  EXPECT_TRUE(std::isnan(decode("f8e4m3", {0x7f})));
  EXPECT_EQ(decode("f8e5m2", {0x3c}), 1.0);
  EXPECT_EQ(decode("i8", {0xff}), -1.0);
  EXPECT_EQ(decode("u8", {0xff}), 255.0);
  EXPECT_EQ(decode("i32", {0xfe, 0xff, 0xff, 0xff}), -2.0);
  EXPECT_EQ(decode("bool", {0x01}), 1.0);
  EXPECT_EQ(decode("f64", {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}), 1.0);
  EXPECT_FALSE(hostDTypeFromName("f128"));
  // The poison pattern is a NaN in every float format.
  for (const char* name : {"f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2"}) {
    HostDType t = *hostDTypeFromName(name);
    std::vector<uint8_t> poison(static_cast<size_t>(t.bytes), t.poisonByte());
    EXPECT_TRUE(std::isnan(t.decode(poison.data()))) << name;
  }
  EXPECT_EQ(hostDTypeFromName("i32")->poisonByte(), 0xAB);
  EXPECT_EQ(hostDTypeFromName("i32")->defaultTolerance(), 0.0);
}

std::vector<uint8_t> floats(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(Compare, RelativeErrorAndWorstElement) {
  HostDType f32 = *hostDTypeFromName("f32");
  Comparison same = compareTensor("y", f32, {2, 2}, floats({1, 2, 3, 4}), floats({1, 2, 3, 4}), 1e-5);
  EXPECT_TRUE(same.passed);
  EXPECT_EQ(same.mismatches, 0u);
  EXPECT_EQ(same.relativeError, 0.0);
  EXPECT_NE(same.describe().find("y: ok"), std::string::npos) << same.describe();

  Comparison close = compareTensor("y", f32, {4}, floats({1, 2, 3, 4.00001f}), floats({1, 2, 3, 4}), 1e-5);
  EXPECT_TRUE(close.passed) << close.describe();
  EXPECT_EQ(close.mismatches, 1u);

  Comparison wrong = compareTensor("C", f32, {2, 3}, floats({1, 2, 3, 4, 9, 6}), floats({1, 2, 3, 4, 5, 6}), 1e-5);
  EXPECT_FALSE(wrong.passed);
  EXPECT_EQ(wrong.worstCoord, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(wrong.worstGot, 9.0);
  EXPECT_EQ(wrong.worstWant, 5.0);
  EXPECT_NEAR(wrong.relativeError, 4.0 / std::sqrt(91.0), 1e-12);
  EXPECT_NE(wrong.describe().find("MISMATCH"), std::string::npos);
  EXPECT_NE(wrong.describe().find("worst C[1, 1]: gpu 9, expected 5"), std::string::npos) << wrong.describe();
}

TEST(Compare, PoisonNeverPasses) {
  HostDType f32 = *hostDTypeFromName("f32");
  std::vector<uint8_t> got = floats({1, 2, 3});
  std::memset(got.data() + 4, 0xFF, 4);  // element 1 never written
  Comparison c = compareTensor("out", f32, {3}, got, floats({1, 2, 3}), 1.0);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.unwritten, 1u);
  EXPECT_EQ(c.worstCoord, (std::vector<int64_t>{1}));
  EXPECT_NE(c.describe().find("1 elements still hold the poison pattern"), std::string::npos) << c.describe();
  EXPECT_EQ(countPoisoned(f32, got), 1u);
  // A NaN the reference has too is a match.
  float nan = std::nanf("");
  EXPECT_TRUE(compareTensor("out", f32, {2}, floats({nan, 1}), floats({nan, 1}), 0).passed);
  // Integers compare exactly.
  HostDType i32 = *hostDTypeFromName("i32");
  std::vector<uint8_t> a(8, 0), b(8, 0);
  b[4] = 1;
  EXPECT_FALSE(compareTensor("k", i32, {2}, a, b, i32.defaultTolerance()).passed);
}

TEST(Timing, MedianMinAndRates) {
  TimingStats odd = summarizeTimes({3, 1, 2});
  EXPECT_EQ(odd.medianMs, 2.0);
  EXPECT_EQ(odd.minMs, 1.0);
  EXPECT_EQ(odd.maxMs, 3.0);
  TimingStats even = summarizeTimes({4, 1, 2, 3});
  EXPECT_EQ(even.medianMs, 2.5);
  EXPECT_EQ(summarizeTimes({}).runs, 0u);
  std::string report = formatTiming(summarizeTimes({1.0f, 1.0f, 1.0f}), 2e9, 3e12);
  EXPECT_NE(report.find("median 1 ms"), std::string::npos) << report;
  EXPECT_NE(report.find("bandwidth: 2000 GB/s"), std::string::npos) << report;
  EXPECT_NE(report.find("compute: 3000 TFLOP/s"), std::string::npos) << report;
}

TEST(ReplayCase, RoundTripsThroughFiles) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("argus_replay_case_" + std::to_string(getpid()));
  fs::remove_all(dir);
  ReplayCase out;
  out.kernelName = "scale";
  out.arch = "sm_90";
  out.ptx = "// ptx";
  out.metaJson = "{}";
  out.seed = 42;
  out.sizes = {{"N", 3}};
  out.scalars.push_back({"s", "f32", 1.5, {0x00, 0x00, 0xc0, 0x3f}});
  BenchTensor x;
  x.name = "x";
  x.dtype = *hostDTypeFromName("f32");
  x.shape = {3};
  x.role = TensorRole::Output;
  x.input = floats({1, 2, 3});
  x.expected = floats({1.5, 3, 4.5});
  out.tensors.push_back(x);
  std::string error;
  ASSERT_TRUE(saveReplayCase(dir.string(), out, error)) << error;
  ReplayCase in;
  ASSERT_TRUE(loadReplayCase(dir.string(), in, error)) << error;
  EXPECT_EQ(in.kernelName, "scale");
  EXPECT_EQ(in.seed, 42u);
  EXPECT_EQ(in.ptx, "// ptx");
  EXPECT_EQ(in.sizes.at("N"), 3);
  ASSERT_EQ(in.scalars.size(), 1u);
  EXPECT_EQ(in.scalarBits().at("s"), (std::vector<uint8_t>{0x00, 0x00, 0xc0, 0x3f}));
  ASSERT_EQ(in.tensors.size(), 1u);
  EXPECT_EQ(in.tensors[0].role, TensorRole::Output);
  EXPECT_EQ(in.tensors[0].expected, x.expected);
  // A truncated data file is an error, not a short read.
  fs::resize_file(dir / "x.expected.bin", 5);
  EXPECT_FALSE(loadReplayCase(dir.string(), in, error));
  EXPECT_NE(error.find("has 5 bytes; its dtype and shape need 12"), std::string::npos) << error;
  EXPECT_FALSE(loadReplayCase((dir / "missing").string(), in, error));
  EXPECT_NE(error.find("argusc run --cpu --save-io"), std::string::npos) << error;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace argus::gpu
