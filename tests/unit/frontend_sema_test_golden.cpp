// Sema over the golden files (parse + sema only; the driver's golden runner
// checks the same files through the whole pipeline), and its speed.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <regex>

#include "frontend_sema_test_util.h"

namespace argus::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> filesIn(const std::string& dir, const std::string& ext) {
  std::vector<fs::path> out;
  fs::path root = fs::path(ARGUS_SOURCE_DIR) / dir;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

struct Expected {
  std::string text;  // "error@12:5-7 AG3001: message"
  bool matched = false;
};

const std::regex kExpect(R"(#\s*expect-(error|warning|note)@([+-]?)(\d+):(\d+)-(\d+)\s+(AG\d{4}):\s?(.*)$)");

std::vector<Expected> expectations(const std::string& text) {
  std::vector<Expected> out;
  std::istringstream in(text);
  std::string line;
  uint32_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::smatch m;
    if (!std::regex_search(line, m, kExpect)) continue;
    uint32_t n = static_cast<uint32_t>(std::stoul(m[3]));
    uint32_t target = m[2] == "+" ? lineNo + n : m[2] == "-" ? lineNo - n : n;
    std::string message = m[7];
    while (!message.empty() && (message.back() == ' ' || message.back() == '\r')) message.pop_back();
    out.push_back({std::string(m[1]) + "@" + std::to_string(target) + ":" + std::string(m[4]) + "-" +
                   std::string(m[5]) + " " + std::string(m[6]) + ": " + message});
  }
  return out;
}

std::string actualText(const Diagnostic& d, const SourceFile& file) {
  LineCol b = file.lineCol(d.range.begin);
  LineCol last = file.lineCol(d.range.end > d.range.begin ? d.range.end - 1 : d.range.begin);
  uint32_t endCol = last.line == b.line ? last.column : static_cast<uint32_t>(file.lineText(b.line).size());
  return std::string(severityName(d.severity)) + "@" + std::to_string(b.line) + ":" + std::to_string(b.column) + "-" +
         std::to_string(endCol) + " " + d.code() + ": " + d.message;
}

// ARGUS_UPDATE_GOLDEN=1: rewrite the expectation comments from what sema
// reports now (review the diff!). Comments go right above the line they name.
void rewriteExpectations(const fs::path& path, const std::string& text, const Analysis& a) {
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  std::vector<std::string> kept;
  std::vector<size_t> newIndex(lines.size() + 2, 0);
  for (size_t i = 1; i <= lines.size(); ++i) {
    newIndex[i] = kept.size();
    if (!std::regex_search(lines[i - 1], kExpect)) kept.push_back(lines[i - 1]);
  }
  std::map<size_t, std::vector<std::string>> byLine;
  for (const Diagnostic& d : a.diags.diagnostics()) {
    std::string t = actualText(d, *a.file);
    size_t at = t.find('@'), colon = t.find(':', at);
    size_t line = std::stoul(t.substr(at + 1, colon - at - 1));
    std::string rest = t.substr(colon);  // ":col-end CODE: message"
    byLine[newIndex[std::min(line, lines.size())]].push_back(t.substr(0, at) + "|" + rest);
  }
  std::string out;
  for (size_t i = 0; i <= kept.size(); ++i) {
    if (auto it = byLine.find(i); it != byLine.end()) {
      std::string indent;
      if (i < kept.size()) indent = kept[i].substr(0, kept[i].find_first_not_of(' ') == std::string::npos ? 0 : kept[i].find_first_not_of(' '));
      size_t k = it->second.size();
      for (size_t j = 0; j < k; ++j) {
        const std::string& e = it->second[j];
        size_t bar = e.find('|');
        out += indent + "# expect-" + e.substr(0, bar) + "@+" + std::to_string(k - j) + e.substr(bar + 1) + "\n";
      }
    }
    if (i < kept.size()) out += kept[i] + "\n";
  }
  std::ofstream(path, std::ios::binary) << out;
}

class SemaDiagnosticsGolden : public ::testing::TestWithParam<fs::path> {};

TEST_P(SemaDiagnosticsGolden, ProducesExactlyTheExpectedDiagnostics) {
  std::string text = readSourceFile(GetParam().string());
  auto a = analyzeSource(text, {}, GetParam().filename().string());
  const char* update = std::getenv("ARGUS_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    rewriteExpectations(GetParam(), text, *a);
    return;
  }
  std::vector<Expected> expected = expectations(text);
  EXPECT_FALSE(expected.empty()) << "a negative case must expect at least one diagnostic";
  for (const Diagnostic& d : a->diags.diagnostics()) {
    std::string actual = actualText(d, *a->file);
    auto it = std::find_if(expected.begin(), expected.end(),
                           [&](const Expected& e) { return !e.matched && e.text == actual; });
    if (it != expected.end()) it->matched = true;
    else ADD_FAILURE() << GetParam().filename() << ": unexpected " << actual;
  }
  for (const Expected& e : expected)
    if (!e.matched) ADD_FAILURE() << GetParam().filename() << ": expected but not produced: " << e.text;
}

std::string caseName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Files, SemaDiagnosticsGolden,
                         ::testing::ValuesIn(filesIn("tests/golden/diagnostics", ".ag")), caseName);

TEST(SemaGoldenSuite, HasAtLeast45NegativeCases) {
  EXPECT_GE(filesIn("tests/golden/diagnostics", ".ag").size(), 45u);
}

class SemaIrGolden : public ::testing::TestWithParam<fs::path> {};

TEST_P(SemaIrGolden, PrintsTheExpectedIr) {
  const fs::path& path = GetParam();
  std::string text = readSourceFile(path.string());
  auto a = analyzeSource(text, {}, path.filename().string());
  EXPECT_EQ(a->diagText(), "");
  EXPECT_TRUE(ir::verify(*a->result.module).empty());
  std::string printed = ir::print(*a->result.module, a->file.get());
  fs::path golden = path;
  golden += ".ir";
  const char* update = std::getenv("ARGUS_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(golden, std::ios::binary) << printed;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << "missing " << golden << " (run with ARGUS_UPDATE_GOLDEN=1)";
  EXPECT_EQ(readSourceFile(golden.string()), printed);
}

INSTANTIATE_TEST_SUITE_P(Files, SemaIrGolden, ::testing::ValuesIn(filesIn("tests/golden/ir", ".ag")), caseName);

TEST(SemaExamplesDir, EveryExampleAnalysesCleanly) {
  for (const fs::path& p : filesIn("examples", ".ag")) {
    auto a = analyzeSource(readSourceFile(p.string()), {}, p.filename().string());
    EXPECT_EQ(a->diagText(), "") << p.filename();
    EXPECT_FALSE(a->result.module->functions.empty()) << p.filename();
  }
}

// A generated file of about 5,000 lines: many kernels with loops, branches,
// device calls and views. Parse + sema must stay far below 200 ms in Release.
std::string generatedSource(int kernels) {
  std::string s =
      "@device\n"
      "def axpy(a, x, y):\n"
      "    t = a * x\n"
      "    return t + y\n\n";
  for (int k = 0; k < kernels; ++k) {
    std::string n = std::to_string(k);
    s += "@kernel(grid=(cdiv(M, BM), cdiv(N, BN)), warps=4)\n";
    s += "def k" + n + "(A: Tensor[f32, (M, K)], B: Tensor[f32, (K, N)], C: Tensor[f32, (M, N)], alpha: f32,\n";
    s += "       BM: const = 32, BN: const = 32, BK: const = 8):\n";
    s += "    a_s = shared(f32, (BM, BK))\n";
    s += "    b_s = shared(f32, (BK, BN))\n";
    s += "    acc = zeros(f32, (BM, BN))\n";
    s += "    total = 0.0\n";
    s += "    for kt in range(cdiv(K, BK)):\n";
    s += "        copy(a_s, A.tile((BM, BK))[program_id(0), kt])\n";
    s += "        copy(b_s, B.tile((BK, BN))[kt, program_id(1)])\n";
    s += "        barrier()\n";
    s += "        acc = dot(a_s, b_s, acc)\n";
    s += "        barrier()\n";
    s += "        if kt % 2 == 0:\n";
    s += "            total = total + 1.0\n";
    s += "        else:\n";
    s += "            total = total * 0.5\n";
    s += "    m = max(acc, axis=1)\n";
    s += "    e = exp(acc - m)\n";
    s += "    r = e / sum(e, axis=1)\n";
    s += "    r = axpy(alpha, r, acc) + total\n";
    s += "    C.tile((BM, BN))[program_id(0), program_id(1)] = where(r > 0.0, r, 0.0)\n\n";
  }
  return s;
}

TEST(SemaScale, FiveThousandLinesAnalyseCleanly) {
  std::string src = generatedSource(220);
  size_t lines = static_cast<size_t>(std::count(src.begin(), src.end(), '\n'));
  ASSERT_GE(lines, 5000u);
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  Analysis a;
  auto t0 = Clock::now();
  a.file = std::make_unique<SourceFile>("generated.ag", src);
  a.ast = parseModule(*a.file, a.diags);
  auto t1 = Clock::now();
  a.result = sema::analyze(*a.ast, *a.file, {}, a.diags);
  auto t2 = Clock::now();
  double total = ms(t0, t2);
  EXPECT_EQ(a.diagText(), "");
  EXPECT_EQ(a.result.module->functions.size(), 220u);
  std::printf("%zu lines: parse %.1f ms, sema %.1f ms\n", lines, ms(t0, t1), ms(t1, t2));
  // Timings are reported here and by bench/compile_bench, never asserted.
  (void)total;
}

}  // namespace
}  // namespace argus::testing
