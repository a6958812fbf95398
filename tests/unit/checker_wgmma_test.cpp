// wgmma descriptor/layout conformity (AG2060): the hardware model against the
// PTX ISA's canonical swizzled layouts, the real Hopper examples proven clean,
// and planted descriptor bugs (wrong swizzle mode, SBO, K step, warpgroup
// offset) and buffer layouts no descriptor expresses, each reported with the
// element they misread; the same for p @ v's MN-major B (A in registers).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "checker/wgmma_check.h"
#include "driver/compilation.h"
#include "ir/ir.h"
#include "ir/wgmma.h"
#include "tests/unit/test_sources.h"

namespace argus {
namespace {

using ir::WgmmaDescriptor;
using ir::WgmmaSwizzleMode;

// ---------------------------------------------------------------- hardware model

// The ISA's figures of the swizzled K-major layouts, as 16-byte chunks: in a
// span of S bytes (S / 16 chunks), chunk c of row r of the 8-row atom sits at
// chunk position c ^ f(r): 128 B: r % 8; 64 B: (r / 2) % 4; 32 B: (r / 4) % 2.
// Written as chunk arithmetic, independently of the bit formulation.
int64_t canonicalAddress(int64_t start, int span, int64_t sbo, int64_t row, int64_t k) {
  const int64_t byte = 2 * k;
  const int64_t chunk = byte / 16, within = byte % 16;
  const int64_t r = row % 8;
  const int64_t phase = span == 128 ? r : span == 64 ? (r / 2) % 4 : (r / 4) % 2;
  return start + (row / 8) * sbo + r * span + (chunk ^ phase) * 16 + within;
}

TEST(WgmmaModel, SwizzledModesMatchTheCanonicalChunkPattern) {
  for (int span : {128, 64, 32}) {
    const WgmmaDescriptor d = ir::wgmmaDescriptorForSpan(span);
    for (int64_t start : {0, 1024, 5 * 1024}) {
      const uint64_t desc = ir::encodeWgmmaDescriptor(d, static_cast<uint32_t>(start));
      for (int64_t row = 0; row < 64; ++row)
        for (int64_t k = 0; k < 16; ++k)
          ASSERT_EQ(ir::wgmmaReadAddress(desc, row, k), canonicalAddress(start, span, 8 * span, row, k))
              << span << "-byte swizzle, start " << start << ", row " << row << ", k " << k;
    }
  }
}

TEST(WgmmaModel, HandComputedAddresses) {
  // 128 B, start 1024, SBO 1024. Row 1, k 0: byte 1152, bits 7-9 = 1 -> chunk 0 ^ 1.
  const uint64_t d128 = ir::encodeWgmmaDescriptor(ir::wgmmaDescriptorForSpan(128), 1024);
  EXPECT_EQ(ir::wgmmaReadAddress(d128, 0, 0), 1024);
  EXPECT_EQ(ir::wgmmaReadAddress(d128, 1, 0), 1024 + 128 + 16);
  // Row 3, k 5 (byte 10 of chunk 0): chunk 0 ^ 3 = 3.
  EXPECT_EQ(ir::wgmmaReadAddress(d128, 3, 5), 1024 + 3 * 128 + 3 * 16 + 10);
  // Row 9 = group 1, row 1 of the atom; k 15 (byte 30: chunk 1 + 14) -> chunk 1 ^ 1 = 0.
  EXPECT_EQ(ir::wgmmaReadAddress(d128, 9, 15), 1024 + 1024 + 128 + 0 * 16 + 14);
  // The K step: start + 32 puts k 0 in chunk 2; row 7: chunk 2 ^ 7 = 5.
  const uint64_t d128k1 = ir::encodeWgmmaDescriptor(ir::wgmmaDescriptorForSpan(128), 1024 + 32);
  EXPECT_EQ(ir::wgmmaReadAddress(d128k1, 7, 0), 1024 + 7 * 128 + 5 * 16);

  // 64 B, start 0, SBO 512. Row 2, k 0: bits 7-8 of 128 = 1 -> chunk 1. Row 5, k 8 (chunk 1): phase 2 -> 3.
  const uint64_t d64 = ir::encodeWgmmaDescriptor(ir::wgmmaDescriptorForSpan(64), 0);
  EXPECT_EQ(ir::wgmmaReadAddress(d64, 1, 0), 64);
  EXPECT_EQ(ir::wgmmaReadAddress(d64, 2, 0), 128 + 16);
  EXPECT_EQ(ir::wgmmaReadAddress(d64, 5, 8), 5 * 64 + 3 * 16);
  EXPECT_EQ(ir::wgmmaReadAddress(d64, 8, 0), 512);

  // 32 B, start 2048, SBO 256. Rows 0-3 unswizzled; row 4, k 0: bit 7 set -> chunk 1.
  const uint64_t d32 = ir::encodeWgmmaDescriptor(ir::wgmmaDescriptorForSpan(32), 2048);
  EXPECT_EQ(ir::wgmmaReadAddress(d32, 3, 9), 2048 + 96 + 16 + 2);
  EXPECT_EQ(ir::wgmmaReadAddress(d32, 4, 0), 2048 + 128 + 16);
  EXPECT_EQ(ir::wgmmaReadAddress(d32, 4, 8), 2048 + 128);
  EXPECT_EQ(ir::wgmmaReadAddress(d32, 9, 1), 2048 + 256 + 32 + 2);

  // No swizzle: core matrices of 8 rows x 16 bytes; LBO 128 between the two K halves, SBO 256.
  WgmmaDescriptor plain;
  plain.leadingByteOffset = 128;
  plain.strideByteOffset = 256;
  const uint64_t d0 = ir::encodeWgmmaDescriptor(plain, 0);
  EXPECT_EQ(ir::wgmmaReadAddress(d0, 3, 2), 3 * 16 + 4);
  EXPECT_EQ(ir::wgmmaReadAddress(d0, 3, 9), 128 + 3 * 16 + 2);
  EXPECT_EQ(ir::wgmmaReadAddress(d0, 9, 0), 256 + 16);
}

// The MN-major layouts (B stored (K, N), read transposed): in a 128-byte span the 64
// elements of N of one row of K are consecutive, the 8 rows of K one span apart, their
// 16-byte chunks swizzled by the row within the atom, the next 8 rows SBO further.
TEST(WgmmaModel, MnMajorHandComputedAddresses) {
  const uint64_t d128 = ir::encodeWgmmaDescriptor(ir::wgmmaMnMajorDescriptorForSpan(128), 0);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d128, 0, 0), 0);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d128, 1, 0), 2);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d128, 8, 0), 16);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d128, 0, 1), 128 + 16);   // row 1: chunk 0 ^ 1
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d128, 8, 1), 128);        // chunk 1 ^ 1
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d128, 63, 7), 7 * 128 + (7 ^ 7) * 16 + 14);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d128, 0, 8), 1024);       // the next atom along K: SBO
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d128, 3, 9), 1024 + 128 + 16 + 6);
  // The K step codegen takes: 16 rows of the buffer.
  EXPECT_EQ(ir::wgmmaMnMajorDescriptorForSpan(128).kStepBytes, 16 * 128);
  EXPECT_EQ(ir::wgmmaMnMajorDescriptorForSpan(64).kStepBytes, 16 * 64);
  // 64-byte spans: 32 elements of N per row; chunk c of row r at c ^ (r / 2) % 4.
  const uint64_t d64 = ir::encodeWgmmaDescriptor(ir::wgmmaMnMajorDescriptorForSpan(64), 0);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d64, 0, 2), 128 + 16);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d64, 31, 1), 64 + 48 + 14);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(d64, 0, 8), 512);
}

TEST(WgmmaModel, EncodingPlacesEveryField) {
  const WgmmaDescriptor d = ir::wgmmaDescriptorForSpan(128);
  EXPECT_EQ(d.mode, WgmmaSwizzleMode::Bytes128);
  EXPECT_EQ(d.strideByteOffset, 1024);
  EXPECT_EQ(d.kStepBytes, 32);
  EXPECT_EQ(d.warpgroupBytes, 64 * 128);
  const uint64_t expected = 0x123u | (uint64_t{1} << 16) | (uint64_t{64} << 32) | (uint64_t{1} << 62);
  EXPECT_EQ(ir::encodeWgmmaDescriptor(d, 0x1230), expected);
  EXPECT_EQ(ir::wgmmaDescriptorFixedBits(d), expected & ~uint64_t{0x3FFF});
  EXPECT_EQ(ir::encodeWgmmaDescriptor(ir::wgmmaDescriptorForSpan(64), 0) >> 62, 2u);
  EXPECT_EQ(ir::encodeWgmmaDescriptor(ir::wgmmaDescriptorForSpan(32), 0) >> 62, 3u);
  EXPECT_EQ((ir::encodeWgmmaDescriptor(ir::wgmmaDescriptorForSpan(32), 0) >> 32) & 0x3FFF, 16u);  // 256 B
}

// Column panels (ir::Swizzle): a (rows, cols) matrix stored panel after panel, each
// panelCols wide, rows one span apart; stages step whole matrices; the XOR follows.
TEST(WgmmaModel, PanelPlacement) {
  ir::Swizzle s{3, 3, 3, 64, 64, 256};  // (64, 256) bf16 in panels of 64: 8 KiB each
  EXPECT_EQ(s.place(0), 0);
  EXPECT_EQ(s.place(63), 63);
  EXPECT_EQ(s.place(64), 64 * 64);         // row 0, column 64: panel 1
  EXPECT_EQ(s.place(256), 64);             // row 1, column 0
  EXPECT_EQ(s.place(3 * 256 + 130), 2 * 4096 + 3 * 64 + 2);
  EXPECT_EQ(s.place(64 * 256 + 257), 64 * 256 + 64 + 1);  // the next stage, row 1, column 1
  EXPECT_EQ(s.apply(257), 65 ^ (1 << 3));   // row 1 of the atom: chunk 0 ^ 1
  ir::Swizzle plain{3, 3, 3};
  EXPECT_EQ(plain.place(257), 257);
  EXPECT_FALSE(plain.hasPanels());
}

// B stored (K, N) of 256 columns in 4 panels: the leading byte offset steps N from one
// panel to the next, the stride byte offset 8 rows of K; the swizzle on the address.
TEST(WgmmaModel, MnMajorAcrossPanels) {
  const WgmmaDescriptor d = ir::wgmmaMnMajorDescriptorForSpan(128, 64 * 128);
  EXPECT_EQ(d.leadingByteOffset, 8192);
  EXPECT_EQ(d.strideByteOffset, 1024);
  EXPECT_EQ(ir::wgmmaStepOffsetBytes(d, 3), 3 * 16 * 128);  // 16 rows of K per step
  const uint64_t desc = ir::encodeWgmmaDescriptor(d, 0);
  EXPECT_EQ((desc >> 16) & 0x3FFF, 8192u >> 4);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(desc, 64, 0), 8192);
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(desc, 70, 1), 8192 + 128 + 12 + 16);  // chunk 0 ^ 1
  EXPECT_EQ(ir::wgmmaReadAddressMnMajor(desc, 255, 9), 3 * 8192 + 1024 + 128 + ((7 ^ 1) * 16 + 14));
  // One panel leaves LBO unused, as before (attention's p @ v keeps its descriptor).
  EXPECT_EQ(ir::wgmmaMnMajorDescriptorForSpan(128).leadingByteOffset, 16);
  // A K-major operand in panels (K = 128 in two of 64): K steps 4.. start in the next panel.
  const WgmmaDescriptor k = ir::wgmmaDescriptorForSpan(128, 128 * 128);
  EXPECT_EQ(ir::wgmmaStepOffsetBytes(k, 3), 96);
  EXPECT_EQ(ir::wgmmaStepOffsetBytes(k, 4), 128 * 128);
  EXPECT_EQ(ir::wgmmaStepOffsetBytes(k, 5), 128 * 128 + 32);
}

TEST(WgmmaModel, OperandProblemsKeepCodegensWords) {
  ir::Type buffer = ir::Type::shared(ir::DType::BF16, {128, 64});
  buffer.swizzle = {3, 3, 3};
  ir::Type view = ir::Type::view(ir::MemSpace::Shared, ir::DType::BF16, {128, 64});
  view.swizzle = buffer.swizzle;
  WgmmaDescriptor d;
  EXPECT_EQ(ir::wgmmaOperandProblem(view, &buffer, "a", &d), "");
  EXPECT_EQ(d, ir::wgmmaDescriptorForSpan(128));
  EXPECT_EQ(ir::wgmmaOperandProblem(view, nullptr, "b", &d), "operand 'b' must be a shared-memory view");
  view.swizzle = {2, 3, 3};
  EXPECT_NE(ir::wgmmaOperandProblem(view, &buffer, "a", &d).find("exactly 32, 64 or 128 bytes"), std::string::npos);
  view.swizzle = buffer.swizzle;
  view.dtype = ir::DType::F32;
  EXPECT_EQ(ir::wgmmaOperandProblem(view, &buffer, "a", &d), "operand 'a' must be bf16 or f16");
}

// ---------------------------------------------------------------- the check on real kernels

struct Compiled {
  std::unique_ptr<Compilation> compilation;
  const ir::Function* fn = nullptr;
};

Compiled compile(const std::string& source, std::vector<std::pair<std::string, std::string>> defines = {}) {
  Compiled out;
  CompileOptions options;
  options.arch = "sm_90a";
  if (std::string arch = testing::exampleArch(source); !arch.empty()) options.arch = arch;
  options.defines = std::move(defines);
  out.compilation = std::make_unique<Compilation>(SourceFile("test.ag", source), options);
  const ir::Module& module = out.compilation->ir();
  EXPECT_FALSE(out.compilation->hasErrors());
  if (!module.functions.empty()) out.fn = module.functions[0].get();
  return out;
}

// Dots whose operands the check walks (guards the clean results against vacuity).
int descriptorDots(const ir::Function& fn) {
  int n = 0;
  std::vector<const ir::Block*> work{&fn.body};
  while (!work.empty()) {
    const ir::Block* b = work.back();
    work.pop_back();
    for (const auto& op : b->ops) {
      if (checker::derivedWgmmaDescriptors(fn, *op)) ++n;
      for (const ir::Block& r : op->regions) work.push_back(&r);
    }
  }
  return n;
}

std::vector<Diagnostic> check(const ir::Function& fn, const checker::WgmmaDescriptorSource& source =
                                                          checker::derivedWgmmaDescriptors) {
  DiagnosticSink diags;
  checker::checkWgmmaDescriptors(fn, diags, source);
  return diags.diagnostics();
}

std::string messages(const std::vector<Diagnostic>& diags) {
  std::string s;
  for (const Diagnostic& d : diags) s += std::string(d.code()) + ": " + d.message + "\n";
  return s;
}

struct ExampleCase {
  const char* file;
  std::vector<std::pair<std::string, std::string>> defines;
  int dots;
};

TEST(WgmmaCheck, HopperExamplesAreClean) {
  const std::vector<ExampleCase> cases = {
      {"gemm_wgmma.ag", {}, 1},
      {"gemm_persistent.ag", {}, 1},
      {"moe_gemm.ag", {}, 1},
      {"moe_gemm.ag", {{"BM", "128"}, {"BN", "256"}, {"WG", "2"}, {"SPEC", "True"}}, 1},
      // q k^T on two panels, and p @ v on two value panels: p from registers, V MN-major
      {"attention_wgmma.ag", {}, 4},
      {"attention_wgmma.ag", {{"CAUSAL", "1"}}, 4},
      {"attention_wgmma_d64.ag", {}, 2},
      {"moe_gemm_persistent.ag", {}, 1},
      // B stored (K, N) in four column panels, read N-major
      {"gemm_nn.ag", {}, 1},
      // K = 128: both K-major operands in two panels of 64
      {"gemm_wgmma.ag", {{"BK", "128"}, {"STAGES", "2"}}, 1},
  };
  for (const ExampleCase& c : cases) {
    const std::string source = testing::readExample(c.file);
    ASSERT_EQ(testing::exampleArch(source), "sm_90a") << c.file;
    Compiled compiled = compile(source, c.defines);
    ASSERT_NE(compiled.fn, nullptr) << c.file;
    EXPECT_EQ(descriptorDots(*compiled.fn), c.dots) << c.file;
    EXPECT_EQ(messages(check(*compiled.fn)), "") << c.file;
  }
}

TEST(WgmmaCheck, TheCheckerEntryRunsIt) {
  // A whole compilation of a kernel with a misread buffer stops in the checker.
  std::string source = testing::readExample("attention_wgmma.ag");
  const std::string from = "q0_s = shared(bf16, (BM, 64), swizzle=(3, 3, 3))";
  ASSERT_NE(source.find(from), std::string::npos);
  source.replace(source.find(from), from.size(), "q0_s = shared(bf16, (BM, 64), swizzle=(2, 3, 3))");
  CompileOptions options;
  options.arch = "sm_90a";
  Compilation c(SourceFile("attention_wgmma.ag", source), options);
  EXPECT_TRUE(c.ptx().empty());
  const std::string all = messages(c.diagnostics());
  EXPECT_NE(all.find("AG2060: wgmma reads operand 'a' of this dot (shared buffer 'q0_s')"), std::string::npos) << all;
  EXPECT_NE(all.find("a[4, 0] (q0_s[4, 0])"), std::string::npos) << all;
  EXPECT_NE(all.find("declare 'q0_s' with swizzle=(3, 3, 3)"), std::string::npos) << all;
}

// A source of descriptors: codegen's, with one operand's descriptor changed.
checker::WgmmaDescriptorSource perturbed(size_t which, void (*change)(WgmmaDescriptor&)) {
  return [which, change](const ir::Function& fn, const ir::Op& dot) {
    std::optional<checker::WgmmaDotDescriptors> d = checker::derivedWgmmaDescriptors(fn, dot);
    if (d) change(which == 0 ? d->a : d->b);
    return d;
  };
}

struct Planted {
  const char* what;
  size_t which;
  void (*change)(WgmmaDescriptor&);
  const char* element;  // the first misread element the report names
};

TEST(WgmmaCheck, PlantedDescriptorBugsAreReportedWithTheElement) {
  Compiled compiled = compile(testing::readExample("gemm_wgmma.ag"));
  ASSERT_NE(compiled.fn, nullptr);
  const std::vector<Planted> cases = {
      // 64-byte mode on 128-byte rows: row 1 is read 64 bytes in, stored at 128 (chunk 0 ^ 1).
      {"swizzle mode", 0, [](WgmmaDescriptor& d) { d.mode = WgmmaSwizzleMode::Bytes64; },
       "warpgroup 0 reads a[1, 0] (a_s[0, 1, 0]) through the descriptor of K step 0 (64-byte swizzle, stride byte "
       "offset 1024, start at byte 0 of 'a_s') at byte 64, but the buffer stores that element at byte 144"},
      // SBO of 4 rows: row 8 is read at 512, where bit 9 swizzles chunk 0 to chunk 4.
      {"stride byte offset", 0, [](WgmmaDescriptor& d) { d.strideByteOffset = 512; },
       "warpgroup 0 reads a[8, 0] (a_s[0, 8, 0]) through the descriptor of K step 0 (128-byte swizzle, stride byte "
       "offset 512, start at byte 0 of 'a_s') at byte 576, but the buffer stores that element at byte 1024"},
      // K step of 8 elements: k 16 is read at byte 16.
      {"K step", 0, [](WgmmaDescriptor& d) { d.kStepBytes = 16; },
       "warpgroup 0 reads a[0, 16] (a_s[0, 0, 16]) through the descriptor of K step 1 (128-byte swizzle, stride "
       "byte offset 1024, start at byte 16 of 'a_s') at byte 16, but the buffer stores that element at byte 32"},
      // Warpgroup 1 starting 32 rows in instead of 64.
      {"warpgroup offset", 0, [](WgmmaDescriptor& d) { d.warpgroupBytes = 32 * 128; },
       "warpgroup 1 reads a[64, 0] (a_s[0, 64, 0]) through the descriptor of K step 0 (128-byte swizzle, stride "
       "byte offset 1024, start at byte 4096 of 'a_s') at byte 4096, but the buffer stores that element at byte "
       "8192"},
      // B: 32-byte mode, SBO 256.
      {"B's swizzle and stride", 1,
       [](WgmmaDescriptor& d) {
         d.mode = WgmmaSwizzleMode::Bytes32;
         d.strideByteOffset = 256;
       },
       "every warpgroup reads b[1, 0] (w_s[0, 1, 0])"},
  };
  for (const Planted& p : cases) {
    std::vector<Diagnostic> diags = check(*compiled.fn, perturbed(p.which, p.change));
    ASSERT_EQ(diags.size(), 1u) << p.what << "\n" << messages(diags);
    EXPECT_EQ(std::string(diags[0].code()), "AG2060");
    EXPECT_NE(diags[0].message.find(p.element), std::string::npos) << p.what << "\n" << diags[0].message;
    EXPECT_NE(diags[0].message.find(p.which == 0 ? "operand 'a' of this dot (shared buffer 'a_s')"
                                                 : "operand 'b' of this dot (shared buffer 'w_s')"),
              std::string::npos);
    // The buffer is one wgmma reads: the descriptor is the compiler's error.
    EXPECT_NE(diags[0].message.find("this descriptor is the compiler's error"), std::string::npos) << p.what;
    // The dot's range: `dot(a_s, w_s, acc, trans_b=True)`.
    const SourceFile& file = compiled.compilation->source();
    EXPECT_EQ(file.text().substr(diags[0].range.begin, 4), "dot(") << p.what;
  }
}

// B stored (K, N) across panels: a leading byte offset of one atom instead of one panel
// reads column 64 in panel 0's second atom of rows.
TEST(WgmmaCheck, PlantedPanelBugsAreReported) {
  Compiled nn = compile(testing::readExample("gemm_nn.ag"));
  ASSERT_NE(nn.fn, nullptr);
  std::vector<Diagnostic> diags = check(*nn.fn, perturbed(1, [](WgmmaDescriptor& d) { d.leadingByteOffset = 1024; }));
  ASSERT_EQ(diags.size(), 1u) << messages(diags);
  EXPECT_NE(diags[0].message.find("every warpgroup reads b[0, 64] (b_s[0, 0, 64]) through the transposed (MN-major) "
                                  "descriptor of K step 0 (128-byte swizzle, leading byte offset 1024 (from one "
                                  "panel of N to the next), stride byte offset 1024, start at byte 0 of 'b_s') at "
                                  "byte 1024, but the buffer stores that element at byte 8192"),
            std::string::npos)
      << diags[0].message;
  EXPECT_NE(diags[0].message.find("this descriptor is the compiler's error"), std::string::npos) << diags[0].message;
  // K = 128 in two panels: a K step that stays in the first panel reads k = 64 at byte 128.
  Compiled wide = compile(testing::readExample("gemm_wgmma.ag"), {{"BK", "128"}, {"STAGES", "2"}});
  ASSERT_NE(wide.fn, nullptr);
  diags = check(*wide.fn, perturbed(0, [](WgmmaDescriptor& d) { d.panelBytes = 0; }));
  ASSERT_EQ(diags.size(), 1u) << messages(diags);
  EXPECT_NE(diags[0].message.find("warpgroup 0 reads a[0, 64] (a_s[0, 0, 64]) through the descriptor of K step 4"),
            std::string::npos)
      << diags[0].message;
}

// Every stage of a staged buffer is checked, and buffer layouts no descriptor
// expresses are reported with the element they misread: the golden files
// tests/golden/diagnostics/checker_wgmma_every_stage.ag and checker_wgmma_buffer_layouts.ag.

// `source` with its placeholder SWIZZLE replaced by `swizzle`, e.g. "(3, 3, 3)".
std::string withSwizzle(std::string source, const std::string& swizzle) {
  source.replace(source.find("SWIZZLE"), 7, swizzle);
  return source;
}

// p @ v's B (V stored (K, N), read transposed) is checked too: a planted descriptor bug
// and a buffer in another swizzle are each reported with the element they misread.
TEST(WgmmaCheck, PTimesVsTransposedOperandIsChecked) {
  Compiled compiled = compile(testing::readExample("attention_wgmma_d64.ag"));
  ASSERT_NE(compiled.fn, nullptr);
  // SBO of 4 rows of K: row 8 of V is read at byte 512 instead of the next atom's 1024.
  std::vector<Diagnostic> diags =
      check(*compiled.fn, [](const ir::Function& fn, const ir::Op& dot) {
        std::optional<checker::WgmmaDotDescriptors> d = checker::derivedWgmmaDescriptors(fn, dot);
        if (d && d->aInRegisters) d->b.strideByteOffset = 512;
        return d;
      });
  ASSERT_EQ(diags.size(), 1u) << messages(diags);
  EXPECT_NE(diags[0].message.find("operand 'b' of this dot (shared buffer 'v_s')"), std::string::npos)
      << diags[0].message;
  EXPECT_NE(diags[0].message.find("every warpgroup reads b[8, 0] (v_s[0, 8, 0]) through the transposed (MN-major) "
                                  "descriptor of K step 0 (128-byte swizzle, stride byte offset 512, start at byte "
                                  "0 of 'v_s') at byte 576, but the buffer stores that element at byte 1024"),
            std::string::npos)
      << diags[0].message;
  // V declared in the 64-byte pattern (TMA could not write it so: a plain copy does), its
  // 128-byte rows read in the 128-byte one: they agree on rows 0-3 and differ from row 4.
  const std::string base = testing::readTestKernel("checker_wgmma/p_times_v_swizzle.ag");
  Compiled clean = compile(withSwizzle(base, "(3, 3, 3)"));
  ASSERT_NE(clean.fn, nullptr);
  EXPECT_EQ(descriptorDots(*clean.fn), 2);
  EXPECT_EQ(messages(check(*clean.fn)), "");
  Compiled wrong = compile(withSwizzle(base, "(2, 3, 3)"));
  ASSERT_NE(wrong.fn, nullptr);
  diags = check(*wrong.fn);
  ASSERT_EQ(diags.size(), 1u) << messages(diags);
  EXPECT_NE(diags[0].message.find("reads b[4, 0] (v_s[4, 0]) through the transposed (MN-major) descriptor"),
            std::string::npos)
      << diags[0].message;
  EXPECT_NE(diags[0].message.find("declare 'v_s' with swizzle=(3, 3, 3)"), std::string::npos) << diags[0].message;
}

}  // namespace
}  // namespace argus
