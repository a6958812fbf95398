// Golden file tests.
//
// tests/golden/diagnostics/*.ag (and tests/golden/docs/*.ag): every diagnostic
// the file produces (through PTX generation) must be announced by a comment
//   # expect-<error|warning|note>@<LINE>:<COL>-<ENDCOL> <CODE>: <exact message>
// LINE is absolute or relative to the comment (+1, -2); COL/ENDCOL are the
// 1-based byte columns of the range's first and last character. Lines of
// `# expect-fixit...`, `# expect-label...` and `# expect-detail: ...` after one
// state its fix-its, labels and notes (tests/expectation_syntax.h).
//
// tests/golden/ir/*.ag: `--emit=ir` output must equal <file>.ag.ir.
//
// ARGUS_UPDATE_GOLDEN=1 rewrites the expectations and the .ir files from what
// the compiler does now (review the diff before committing).
//
// GoldenSuite.EveryDiagnosticCodeHasAGoldenFile: every code of
// support/diagnostic_kinds.def is announced by some golden file, or listed in
// kNotFromASourceFile (below) with why no source file can produce it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "checker/checker.h"
#include "driver/compilation.h"
#include "ir/ir.h"
#include "ir/parse.h"
#include "expectation_syntax.h"
#include "unit/test_sources.h"
#include "unit/checker_only.h"

namespace fs = std::filesystem;
namespace {

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ptxas comes with CUDA (on every machine of this project); without it the
// golden files still run through PTX generation, and the ptxas tests in
// driver_tests and codegen_tests report themselves skipped.
bool ptxasAvailable() {
  static const bool available = fs::exists(argus::CompileOptions{}.ptxasPath);
  return available;
}

void compileThroughCodegen(argus::Compilation& c) {
  if (ptxasAvailable()) {
    c.cubin();  // every PTX a test produces goes through ptxas
  } else {
    c.ptx();
  }
}

bool updateMode() {
  const char* v = std::getenv("ARGUS_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

std::vector<fs::path> goldenFiles(const std::string& dir, const std::string& ext) {
  std::vector<fs::path> out;
  fs::path root = fs::path(ARGUS_SOURCE_DIR) / "tests" / "golden" / dir;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

using argus::testing::Expectation;

// Which details besides the message a file states for every diagnostic (expectation_syntax.h).
struct StatedDetails {
  bool fixits = false, labels = false, notes = false;
};

std::vector<Expectation> parseExpectations(const std::string& text, std::vector<uint32_t>& lines,
                                           StatedDetails* stated = nullptr) {
  std::vector<Expectation> out;
  std::istringstream in(text);
  std::string line;
  uint32_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (auto attached = argus::testing::parseAttachedLine(line)) {
      lines.push_back(lineNo);
      using argus::testing::AttachedKind;
      const AttachedKind kind = attached->first;
      if (stated)
        (kind == AttachedKind::FixIt ? stated->fixits : kind == AttachedKind::Label ? stated->labels : stated->notes) = true;
      if (out.empty()) {  // ARGUS_UPDATE_GOLDEN=1 rewrites it where it belongs
        if (!updateMode()) ADD_FAILURE() << "line " << lineNo << ": an expect-fixit, -label or -detail line before any expectation";
        continue;
      }
      Expectation& owner = out.back();
      (kind == AttachedKind::FixIt ? owner.fixits : kind == AttachedKind::Label ? owner.labels : owner.details)
          .push_back(attached->second);
      continue;
    }
    std::optional<Expectation> e = argus::testing::parseExpectationLine(line, lineNo);
    if (!e) continue;
    lines.push_back(lineNo);
    out.push_back(*e);
  }
  return out;
}

Expectation fromDiagnostic(const argus::Diagnostic& d, const argus::SourceFile& file) {
  return argus::testing::expectationOf(d, file);
}

// tests/golden/checker_ir/*.ir: Tile IR text (as `argusc --emit=ir` prints it, with bugs
// planted by hand where the language cannot write them, such as a broken mbarrier protocol),
// checked as it is: no passes run on it.
std::vector<argus::Diagnostic> checkIrText(const fs::path& path, const std::string& text) {
  argus::ir::IrParseResult parsed = argus::ir::parseIr(text);
  if (!parsed.module) {
    ADD_FAILURE() << path.filename() << ": " << parsed.error;
    return {};
  }
  argus::DiagnosticSink diags;
  argus::SourceFile file(path.filename().string(), text);
  argus::checker::check(*parsed.module, diags, &file, argus::checker::Options{});
  return diags.diagnostics();
}

std::vector<argus::Diagnostic> compileForDiagnostics(const fs::path& path, const std::string& text) {
  if (path.extension() == ".ir") return checkIrText(path, text);
  argus::CompileOptions options;  // a case for another architecture says so: '# arch: sm_90a' (argusc's convention)
  const std::string arch = argus::testing::exampleArch(text);
  if (argus::isSupportedArch(arch)) options.arch = arch;  // as argusc: an unknown one is AG1015
  argus::Compilation c(argus::SourceFile(path.filename().string(), text), options);
  compileThroughCodegen(c);
  return c.diagnostics();
}

// Rewrites the file's expectation comments from the actual diagnostics.
void updateExpectations(const fs::path& path, const std::string& text,
                        const std::vector<argus::Diagnostic>& diags) {
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  std::vector<uint32_t> expectLines;
  StatedDetails stated;
  parseExpectations(text, expectLines, &stated);
  // Diagnostics are computed on the text with its current comments; map each
  // diagnostic line to the stripped file, then insert new comments above.
  std::vector<int> newIndex(lines.size() + 2, 0);
  std::vector<std::string> kept;
  for (uint32_t i = 1; i <= lines.size(); ++i) {
    newIndex[i] = static_cast<int>(kept.size());
    if (std::find(expectLines.begin(), expectLines.end(), i) == expectLines.end())
      kept.push_back(lines[i - 1]);
  }
  argus::SourceFile file(path.filename().string(), text);
  // The comment lines each kept line gets above it, so that a fix-it's or a label's
  // line, counted from its diagnostic's, is counted in the rewritten file.
  auto commentLines = [&](const Expectation& e) {
    return 1 + (stated.fixits ? e.fixits.size() : 0) + (stated.labels ? e.labels.size() : 0) +
           (stated.notes ? e.details.size() : 0);
  };
  const uint32_t lastLine = static_cast<uint32_t>(lines.size());
  std::map<int, std::vector<const argus::Diagnostic*>> byLine;
  std::vector<size_t> insertedUpTo(kept.size() + 1, 0);
  for (const argus::Diagnostic& d : diags) {
    Expectation e = fromDiagnostic(d, file);
    const int k = newIndex[std::min(e.line, lastLine)];
    byLine[k].push_back(&d);
    insertedUpTo[static_cast<size_t>(k)] += commentLines(e);
  }
  for (size_t i = 1; i < insertedUpTo.size(); ++i) insertedUpTo[i] += insertedUpTo[i - 1];
  const argus::testing::LineMap rewrittenLine = [&](uint32_t line) {
    const int k = newIndex[std::min(line, lastLine)];
    return static_cast<uint32_t>(k + 1 + insertedUpTo[static_cast<size_t>(k)]);
  };
  std::string out;
  for (int i = 0; i <= static_cast<int>(kept.size()); ++i) {
    auto it = byLine.find(i);
    if (it != byLine.end()) {
      std::string indent;
      if (i < static_cast<int>(kept.size()))
        indent = kept[i].substr(0, kept[i].find_first_not_of(' ') == std::string::npos ? 0 : kept[i].find_first_not_of(' '));
      const std::string lead = indent + (path.extension() == ".ir" ? "// expect-" : "# expect-");
      // Each expectation's own line counts the lines below it down to its diagnostic's.
      std::vector<Expectation> expectations;
      for (const argus::Diagnostic* d : it->second) expectations.push_back(argus::testing::expectationOf(*d, file, rewrittenLine));
      std::vector<std::vector<std::string>> groups;
      for (const Expectation& e : expectations) {
        std::vector<std::string> group = {""};
        if (stated.fixits)
          for (const std::string& f : e.fixits) group.push_back(lead + "fixit" + f + "\n");
        if (stated.labels)
          for (const std::string& l : e.labels) group.push_back(lead + "label" + l + "\n");
        if (stated.notes)
          for (const std::string& n : e.details) group.push_back(lead + "detail: " + n + "\n");
        groups.push_back(std::move(group));
      }
      size_t below = 0;
      for (const auto& group : groups) below += group.size();
      for (size_t j = 0; j < groups.size(); ++j) {
        const Expectation& e = expectations[j];
        out += lead + e.severity + "@+" + std::to_string(below) + ":" + std::to_string(e.col) + "-" +
               std::to_string(e.endCol) + " " + e.code + ": " + e.message + "\n";
        for (size_t g = 1; g < groups[j].size(); ++g) out += groups[j][g];
        below -= groups[j].size();
      }
    }
    if (i < static_cast<int>(kept.size())) out += kept[i] + "\n";
  }
  std::ofstream(path, std::ios::binary) << out;
}

void checkDiagnosticsFile(const fs::path& path) {
  std::string text = readFile(path);
  std::vector<argus::Diagnostic> diags = compileForDiagnostics(path, text);
  if (updateMode()) {
    updateExpectations(path, text, diags);
    return;
  }
  std::vector<uint32_t> expectLines;
  StatedDetails stated;
  std::vector<Expectation> expected = parseExpectations(text, expectLines, &stated);
  argus::SourceFile file(path.filename().string(), text);
  std::vector<bool> matched(expected.size(), false);
  for (const argus::Diagnostic& d : diags) {
    Expectation actual = fromDiagnostic(d, file);
    if (!stated.fixits) actual.fixits.clear();
    if (!stated.labels) actual.labels.clear();
    if (!stated.notes) actual.details.clear();
    bool found = false;
    for (size_t i = 0; i < expected.size() && !found; ++i) {
      const Expectation& e = expected[i];
      if (matched[i] || e.severity != actual.severity || e.code != actual.code ||
          e.line != actual.line || e.message != actual.message || e.fixits != actual.fixits ||
          e.labels != actual.labels || e.details != actual.details)
        continue;
      if (e.hasColumns && (e.col != actual.col || e.endCol != actual.endCol)) continue;
      matched[i] = found = true;
    }
    EXPECT_TRUE(found) << path.filename() << ": unexpected diagnostic: " << actual.str();
  }
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_TRUE(matched[i]) << path.filename() << ": expected but not produced: " << expected[i].str();
}

class DiagnosticsGolden : public ::testing::TestWithParam<fs::path> {};
TEST_P(DiagnosticsGolden, MatchesInlineExpectations) { checkDiagnosticsFile(GetParam()); }

std::vector<fs::path> diagnosticCases() {
  std::vector<fs::path> all = goldenFiles("diagnostics", ".ag");
  std::vector<fs::path> docs = goldenFiles("docs", ".ag");
  all.insert(all.end(), docs.begin(), docs.end());
  std::vector<fs::path> ir = goldenFiles("checker_ir", ".ir");
  all.insert(all.end(), ir.begin(), ir.end());
  return all;
}

std::string caseName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.parent_path().filename().string() + "_" + info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Golden, DiagnosticsGolden, ::testing::ValuesIn(diagnosticCases()), caseName);

class IrGolden : public ::testing::TestWithParam<fs::path> {};
TEST_P(IrGolden, MatchesPrintedIr) {
  const fs::path& path = GetParam();
  std::string text = readFile(path);
  argus::Compilation c(argus::SourceFile(path.filename().string(), text), argus::CompileOptions{});
  std::string printed = argus::ir::print(c.ir(), &c.source());
  for (const argus::Diagnostic& d : c.diagnostics()) ADD_FAILURE() << path.filename() << ": " << d.message;
  fs::path golden = path;
  golden += ".ir";
  if (updateMode()) {
    std::ofstream(golden, std::ios::binary) << printed;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << "missing " << golden << " (run with ARGUS_UPDATE_GOLDEN=1)";
  EXPECT_EQ(readFile(golden), printed) << "IR of " << path.filename() << " changed";
}
INSTANTIATE_TEST_SUITE_P(Golden, IrGolden, ::testing::ValuesIn(goldenFiles("ir", ".ag")), caseName);

TEST(GoldenSuite, HasEnoughNegativeCases) {
  EXPECT_GE(goldenFiles("diagnostics", ".ag").size(), 40u);
}

// ---------------------------------------------------------------- code coverage
//
// Every code of the registry (support/diagnostic_kinds.def) is announced by an
// expectation comment (`# expect-<severity>@... AGnnnn: ...`, not a mere
// mention) in at least one golden file that a test compiles: the golden files
// tests/golden/diagnostics/*.ag and tests/golden/docs/*.ag (this runner) and
// the checker corpus tests/checker/*.ag (checker_tests, CheckerCorpus.*, the
// same expectation syntax), and the IR files tests/golden/checker_ir/*.ir (Tile
// IR with bugs the language cannot write, such as a broken mbarrier protocol). A code that compiling a source file cannot
// produce is listed below with the reason, and with the test that covers it
// instead; that test file must name the code ("AG0001") or its kind
// (DiagId::FileNotFound), so a stale entry fails too.

struct NotFromASourceFile {
  const char* code;
  const char* reason;
  const char* coveredBy;  // a test source, relative to the source tree
};

const NotFromASourceFile kNotFromASourceFile[] = {
    // Reading the file: a golden file is compiled from its text, never opened by path.
    {"AG0001", "argusc opening a path that does not exist", "tests/unit/driver_cli_test.cpp"},
    {"AG0002", "argusc given a directory as its source", "tests/unit/driver_cli_test.cpp"},
    {"AG0003", "argusc given a binary file", "tests/unit/driver_cli_test.cpp"},
    {"AG0004", "argusc given a file that is not UTF-8 (the golden files are UTF-8 by construction)",
     "tests/unit/driver_cli_test.cpp"},
    // -D NAME=VALUE exists only on the command line (argusc, argus-agent).
    {"AG0005", "a -D value on the command line that is not a number or a bool", "tests/unit/frontend_sema_test.cpp"},
    {"AG0006", "a -D name on the command line that is no const parameter", "tests/unit/driver_cli_test.cpp"},
    // The syntax-error strategy's last resort: wherever the grammar accepts many tokens, one of
    // them has a message of its own, so no source file is known to reach it.
    {"AG1027", "a syntax error with no better message than 'unexpected <token>'",
     "tests/unit/frontend_parser_errors_test.cpp"},
    // Internal errors: each means a compiler bug, and no source file is known to produce one.
    {"AG1028", "internal error: an exception escaping the lexer or the parser",
     "tests/unit/frontend_parser_errors_test.cpp"},
    {"AG3045", "internal error: the Tile IR that sema built fails ir::verify (the fuzzer asserts it never happens)",
     "tests/unit/frontend_sema_test_fuzz.cpp"},
    {"AG5003", "internal error in code generation (malformed Tile IR)", "tests/unit/codegen_diagnostics_test.cpp"},
    {"AG5005", "ptxas rejecting the PTX that codegen produced: a code-generation bug",
     "tests/unit/codegen_diagnostics_test.cpp"},
    // Options of the compilation, not of the source.
    {"AG5002", "--arch names an unsupported target (a '# arch:' line that does is AG1015, and ignored)",
     "tests/unit/codegen_diagnostics_test.cpp"},
    {"AG5004", "--ptxas names a ptxas that cannot be run", "tests/unit/codegen_diagnostics_test.cpp"},
    // The CPU interpreter (argusc run --cpu, the agent's correctness oracle): faults of a run, not of a compilation.
    {"AG6001", "interpreter: an mbarrier_wait whose phase lacks arrivals (a deadlock) in a run",
     "tests/unit/interp_bulk_test.cpp"},
    {"AG6002", "interpreter: a run given the wrong number of arguments", "tests/unit/interp_faults_test.cpp"},
    {"AG6003", "interpreter: a require() that fails for the run's sizes", "tests/unit/interp_kernels_test.cpp"},
    {"AG6004", "interpreter: a read of shared memory another thread wrote with no barrier in between",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6005", "interpreter: a shared view out of bounds in a run", "tests/unit/interp_faults_test.cpp"},
    {"AG6006", "interpreter: integer division by zero in a run", "tests/unit/interp_faults_test.cpp"},
    {"AG6007", "interpreter: a range() step that is not positive in a run", "tests/unit/interp_faults_test.cpp"},
    {"AG6008", "interpreter: a read of shared memory nothing wrote in a run", "tests/unit/interp_faults_test.cpp"},
    {"AG6009", "interpreter: a shift by more than the bit width in a run", "tests/unit/interp_faults_test.cpp"},
    {"AG6010", "interpreter: a block that executes more ops than the limit", "tests/unit/interp_faults_test.cpp"},
    {"AG6030", "interpreter: an mbarrier index outside its buffer in a run", "tests/unit/interp_bulk_test.cpp"},
    {"AG6031", "interpreter: a write over shared memory another thread read with no barrier in between",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6032", "interpreter: two threads writing one shared element with no barrier in between",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6033", "interpreter: a copy_async or copy_bulk over shared memory another thread still reads",
     "tests/unit/interp_bulk_test.cpp"},
    {"AG6034", "interpreter: a copy_bulk over shared memory another thread wrote with no barrier in between",
     "tests/unit/interp_bulk_test.cpp"},
    {"AG6035", "interpreter: a read of shared memory before its copy_async completed",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6036", "interpreter: a read of a landed copy_async with no barrier after the wait_group",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6037", "interpreter: a write into shared memory a copy_async is still writing",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6038", "interpreter: a read of shared memory before its copy_bulk completed",
     "tests/unit/interp_bulk_test.cpp"},
    {"AG6039", "interpreter: a write into shared memory a copy_bulk is still writing",
     "tests/unit/interp_bulk_test.cpp"},
    {"AG6040", "interpreter: an mbarrier used by other threads before a barrier after its init",
     "tests/unit/interp_bulk_test.cpp"},
    {"AG6041", "interpreter: an mbarrier used before any mbarrier_init", "tests/unit/interp_bulk_test.cpp"},
    {"AG6042", "interpreter: an mbarrier re-initialized while copies still complete on it",
     "tests/unit/interp_bulk_test.cpp"},
    {"AG6043", "interpreter: more arrivals on an mbarrier phase than its count", "tests/unit/interp_bulk_test.cpp"},
    {"AG6044", "interpreter: copy_bulk bytes beyond what mbarrier_expect_tx announced",
     "tests/unit/interp_bulk_test.cpp"},
    {"AG6045", "interpreter: an mbarrier_wait whose phase lacks transaction bytes (a deadlock)",
     "tests/unit/interp_bulk_test.cpp"},
    {"AG6046", "interpreter: an mbarrier_wait parity other than 0 or 1", "tests/unit/interp_bulk_test.cpp"},
    {"AG6047", "interpreter: a block that ends with a copy_bulk in flight", "tests/unit/interp_bulk_test.cpp"},
    {"AG6048", "interpreter: a scalar or null argument for a tensor parameter", "tests/unit/interp_faults_test.cpp"},
    {"AG6049", "interpreter: a tensor argument for a scalar parameter", "tests/unit/interp_faults_test.cpp"},
    {"AG6050", "interpreter: a tensor argument of another dtype", "tests/unit/interp_faults_test.cpp"},
    {"AG6051", "interpreter: a tensor argument of another rank", "tests/unit/interp_faults_test.cpp"},
    {"AG6052", "interpreter: a tensor argument whose extent differs from a constant one",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6053", "interpreter: two tensor arguments that disagree on a runtime size",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6054", "interpreter: a tensor argument extent outside 0 to 2^31-1", "tests/unit/interp_faults_test.cpp"},
    {"AG6055", "interpreter: a host tensor whose data does not fit its shape (an API misuse)",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6056", "interpreter: a runtime size no tensor parameter gives (sema makes sizes from tensor shapes only)",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6057", "interpreter: a grid axis that evaluates out of range for the run's sizes",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6058", "interpreter: a binary op on a dtype without it (ir::verify rejects it first)",
     "tests/unit/interp_numeric_test.cpp"},
    {"AG6059", "interpreter: Tile IR that is malformed or not lowered (a compiler bug)",
     "tests/unit/interp_faults_test.cpp"},
    {"AG6060", "interpreter: an internal error of the interpreter", "tests/unit/interp_faults_test.cpp"},
    {"AG6061", "interpreter: the host running out of memory for a run", "tests/unit/interp_faults_test.cpp"},
};

// The codes announced by expectation comments in the golden files and the checker corpus.
std::map<std::string, std::string> codesWithAGoldenFile() {
  std::vector<fs::path> files = diagnosticCases();
  fs::path corpus = fs::path(ARGUS_SOURCE_DIR) / "tests" / "checker";
  if (fs::exists(corpus))
    for (const auto& e : fs::directory_iterator(corpus))
      if (e.path().extension() == ".ag") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::map<std::string, std::string> out;  // code -> the first file that announces it
  for (const fs::path& f : files) {
    std::vector<uint32_t> lines;
    for (const Expectation& e : parseExpectations(readFile(f), lines))
      out.emplace(e.code, fs::relative(f, ARGUS_SOURCE_DIR).string());
  }
  return out;
}

TEST(GoldenSuite, EveryDiagnosticCodeHasAGoldenFile) {
  const std::map<std::string, std::string> covered = codesWithAGoldenFile();
  std::map<std::string, const NotFromASourceFile*> allowed;
  for (const NotFromASourceFile& n : kNotFromASourceFile) {
    EXPECT_TRUE(allowed.emplace(n.code, &n).second) << n.code << " is listed twice in kNotFromASourceFile";
    EXPECT_TRUE(argus::diagIdFromCode(n.code).has_value())
        << n.code << " in kNotFromASourceFile is not in support/diagnostic_kinds.def";
  }
  std::string missing, stale, uncovered;
  for (const argus::DiagKindInfo& kind : argus::allDiagKinds()) {
    const std::string code = kind.code;
    auto a = allowed.find(code);
    if (covered.count(code)) {
      if (a != allowed.end())  // a golden file now produces it: the entry is no longer true
        stale += "\n  " + code + " (" + kind.name + ") is announced in " + covered.at(code);
      continue;
    }
    if (a == allowed.end()) {
      missing += "\n  " + code + " (" + kind.name + "): " + kind.format;
      continue;
    }
    const fs::path test = fs::path(ARGUS_SOURCE_DIR) / a->second->coveredBy;
    const std::string text = fs::exists(test) ? readFile(test) : std::string();
    if (text.find(code) == std::string::npos && text.find(std::string("DiagId::") + kind.name) == std::string::npos)
      uncovered += "\n  " + code + " (" + kind.name + "): " + a->second->coveredBy + " does not name it";
  }
  EXPECT_TRUE(missing.empty())
      << "diagnostic codes that no golden file announces (add tests/golden/diagnostics/<area>_<what>.ag "
         "with an `# expect-...` comment, or, if no source file can produce the code, list it in "
         "kNotFromASourceFile with the reason and the test that covers it):"
      << missing;
  EXPECT_TRUE(stale.empty()) << "codes listed in kNotFromASourceFile that a golden file announces "
                                "(remove them from the list):"
                             << stale;
  EXPECT_TRUE(uncovered.empty()) << "codes in kNotFromASourceFile whose named test does not cover them:" << uncovered;
}

}  // namespace

namespace {

// Every ```python block in the page docs/NAME is a complete program that must
// compile without diagnostics, unless the line before the block is
// `<!-- expect-errors -->` (then it must produce at least one error). Returns
// the number of blocks.
int checkDocBlocks(const std::string& name) {
  std::string doc = readFile(fs::path(ARGUS_SOURCE_DIR) / "docs" / name);
  std::istringstream in(doc);
  std::string line, previous, block;
  bool inBlock = false, expectErrors = false;
  int blocks = 0, blockLine = 0, lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!inBlock && line.rfind("```python", 0) == 0) {
      inBlock = true;
      expectErrors = previous.find("<!-- expect-errors -->") != std::string::npos;
      block.clear();
      blockLine = lineNo;
    } else if (inBlock && line.rfind("```", 0) == 0) {
      inBlock = false;
      ++blocks;
      argus::CompileOptions options;
      const std::string arch = argus::testing::exampleArch(block);  // a Hopper-only block says so
      if (!arch.empty()) options.arch = arch;
      argus::Compilation c(argus::SourceFile(name, block), options);
      compileThroughCodegen(c);
      if (expectErrors) {
        EXPECT_TRUE(c.hasErrors()) << "docs/" << name << ":" << blockLine << ": block should not compile";
      } else {
        for (const argus::Diagnostic& d : c.diagnostics())
          if (!argus::testing::isTileOrderSeparationLimit(d)) ADD_FAILURE() << "docs/" << name << ":" << blockLine << " (block line "
                        << c.source().lineCol(d.range.begin).line << "): " << d.code() << " " << d.message;
      }
    } else if (inBlock) {
      block += line + "\n";
    }
    if (!line.empty()) previous = line;
  }
  return blocks;
}

TEST(DocsExamples, LanguageReferenceBlocksCompile) { EXPECT_GT(checkDocBlocks("language.md"), 3); }

// The "Coming from Triton" page: its five tutorials.
TEST(DocsExamples, TritonPageBlocksCompile) { EXPECT_EQ(checkDocBlocks("triton.md"), 5); }

}  // namespace
