// Every registered diagnostic code has a documentation page, and the index in
// docs/diagnostics/README.md lists exactly the registered codes.
//
// The index table is generated from the registry and the pages' titles. To
// regenerate it after adding a code: tools/gen_diag_index [BUILD_DIR], or
//   ARGUS_UPDATE_DIAG_INDEX=1 support_tests --gtest_filter='DiagnosticDocs.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostic.h"

namespace argus {
namespace {

namespace fs = std::filesystem;

const fs::path kDocsDir = fs::path(ARGUS_SOURCE_DIR) / "docs" / "diagnostics";
constexpr const char* kBeginIndex = "<!-- BEGIN GENERATED INDEX: tools/gen_diag_index -->";
constexpr const char* kEndIndex = "<!-- END GENERATED INDEX -->";

std::optional<std::string> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path pageOf(const DiagKindInfo& kind) { return kDocsDir / (std::string(kind.code) + ".md"); }

// The summary of a page is its title, `# AG0001: Cannot open a source file`,
// without the code.
std::string summaryOf(const DiagKindInfo& kind) {
  std::optional<std::string> page = readFile(pageOf(kind));
  if (!page) return "(no page yet)";
  std::string title = page->substr(0, page->find('\n'));
  if (title.rfind("# ", 0) == 0) title.erase(0, 2);
  if (title.rfind(kind.code, 0) == 0) title.erase(0, std::string(kind.code).size());
  size_t start = title.find_first_not_of(" :-");
  title = start == std::string::npos ? "" : title.substr(start);
  for (char& c : title)
    if (c == '|') c = '/';  // keep the table intact
  return title.empty() ? "(untitled)" : title;
}

std::string generatedIndex() {
  std::string out = std::string(kBeginIndex) + "\n| code | severity | summary | page |\n| --- | --- | --- | --- |\n";
  // Sorted by code: the registry file groups kinds by stage, not numerically.
  std::vector<DiagKindInfo> kinds = allDiagKinds();
  std::sort(kinds.begin(), kinds.end(), [](const DiagKindInfo& a, const DiagKindInfo& b) {
    return std::string_view(a.code) < std::string_view(b.code);
  });
  for (const DiagKindInfo& kind : kinds) {
    std::string code = kind.code;
    out += "| " + code + " | " + severityName(kind.severity) + " | " + summaryOf(kind) + " | [" +
           code + ".md](" + code + ".md) |\n";
  }
  return out + kEndIndex;
}

TEST(DiagnosticDocs, EveryRegisteredCodeHasAPage) {
  std::string missing;
  for (const DiagKindInfo& kind : allDiagKinds())
    if (!fs::is_regular_file(pageOf(kind)))
      missing += "\n  docs/diagnostics/" + std::string(kind.code) + ".md (" + kind.name + ")";
  EXPECT_TRUE(missing.empty()) << "registered diagnostic codes without a documentation page:"
                               << missing;
}

TEST(DiagnosticDocs, EveryPageBelongsToARegisteredCode) {
  std::string orphans;
  for (const fs::directory_entry& entry : fs::directory_iterator(kDocsDir)) {
    std::string stem = entry.path().stem().string();
    if (entry.path().extension() == ".md" && stem != "README" && !diagIdFromCode(stem))
      orphans += "\n  docs/diagnostics/" + entry.path().filename().string();
  }
  EXPECT_TRUE(orphans.empty()) << "pages for codes that are not in support/diagnostic_kinds.def:"
                               << orphans;
}

TEST(DiagnosticDocs, PagesStartWithTheirCodeAsTitle) {
  std::string bad;
  for (const DiagKindInfo& kind : allDiagKinds()) {
    std::optional<std::string> page = readFile(pageOf(kind));
    if (page && page->rfind("# " + std::string(kind.code), 0) != 0)
      bad += "\n  docs/diagnostics/" + std::string(kind.code) + ".md";
  }
  EXPECT_TRUE(bad.empty()) << "pages whose first line is not '# <CODE>: <summary>':" << bad;
}

TEST(DiagnosticDocs, DriverPagesHaveTheStandardSections) {
  for (const DiagKindInfo& kind : allDiagKinds()) {
    if (std::string(kind.code).rfind("AG0", 0) != 0) continue;
    std::optional<std::string> page = readFile(pageOf(kind));
    ASSERT_TRUE(page) << kind.code;
    for (const char* section : {"## What it means", "## Example", "## How to fix"})
      EXPECT_NE(page->find(section), std::string::npos) << kind.code << " lacks " << section;
    EXPECT_NE(page->find(std::string("Severity: ") + severityName(kind.severity)), std::string::npos)
        << kind.code;
  }
}

TEST(DiagnosticDocs, IndexListsEveryCode) {
  fs::path readmePath = kDocsDir / "README.md";
  std::optional<std::string> readme = readFile(readmePath);
  ASSERT_TRUE(readme) << readmePath;
  size_t begin = readme->find(kBeginIndex);
  size_t end = readme->find(kEndIndex);
  ASSERT_TRUE(begin != std::string::npos && end != std::string::npos && begin < end)
      << "README.md lost its index markers";
  end += std::string(kEndIndex).size();
  std::string expected = generatedIndex();

  const char* update = std::getenv("ARGUS_UPDATE_DIAG_INDEX");
  if (update && std::string(update) == "1") {
    std::string updated = readme->substr(0, begin) + expected + readme->substr(end);
    std::ofstream(readmePath, std::ios::binary) << updated;
    readme = updated;
    end = begin + expected.size();
  }
  EXPECT_EQ(readme->substr(begin, end - begin), expected)
      << "docs/diagnostics/README.md is out of date: run tools/gen_diag_index";
}

}  // namespace
}  // namespace argus
