// Rules about the source itself, checked over the compiler's folders. Each keeps
// a fact defined in one place: an IR op's operands are named in ir/ops.def and
// read through the typed accessors of ir/ops.h (`ir::StoreOp(op).view()`), never
// by position, so reordering or adding an operand cannot silently change what a
// consumer reads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(ARGUS_SOURCE_DIR);

std::vector<fs::path> compilerSources() {
  std::vector<fs::path> out;
  for (const char* dir : {"agent", "checker", "codegen", "driver", "frontend", "ir", "layout", "lsp", "runtime", "support",
                          "tools"})
    for (const auto& e : fs::recursive_directory_iterator(kRoot / dir))
      if (e.path().extension() == ".cpp" || e.path().extension() == ".h") out.push_back(e.path());
  return out;
}

TEST(SourceRules, IrOperandsAreReadThroughTypedAccessors) {
  // `x.operands[N]` with a literal N, of an op or of a launch expression (ir::LaunchExpr names
  // its operands too: lhs(), rhs(), negated()).
  const std::regex positional(R"(([A-Za-z_][A-Za-z0-9_]*)(\.|->)operands\[[0-9]+\])");
  std::vector<std::string> found;
  size_t scanned = 0;
  for (const fs::path& path : compilerSources()) {
    const std::string relative = fs::relative(path, kRoot).generic_string();
    std::ifstream in(path);
    std::string line;
    int number = 0;
    ++scanned;
    while (std::getline(in, line)) {
      ++number;
      for (std::sregex_iterator it(line.begin(), line.end(), positional), end; it != end; ++it) {
        found.push_back(relative + ":" + std::to_string(number) + ": " + it->str());
      }
    }
  }
  EXPECT_GT(scanned, 200u);
  std::string list;
  for (const std::string& f : found) list += "  " + f + "\n";
  EXPECT_TRUE(found.empty()) << found.size()
                             << " positional operand reads; use the op's typed accessor (ir/ops.h):\n" << list;
}

}  // namespace
