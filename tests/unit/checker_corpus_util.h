// Reading, matching and rewriting the expectations of the checker corpus
// (tests/checker/*.ag); see checker_corpus_test.cpp for the syntax.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/diagnostic.h"
#include "support/source.h"
#include "../expectation_syntax.h"

namespace argus::corpus {

namespace fs = std::filesystem;

using argus::testing::Expectation;

std::string readFile(const fs::path& path);
bool updateMode();
std::vector<fs::path> corpusFiles();
// examples/*.ag and examples/*/*.ag, except examples/broken/ (broken on purpose).
std::vector<fs::path> exampleFiles();
std::string caseName(const ::testing::TestParamInfo<fs::path>& info);

// Compiles through PTX generation (not ptxas) and returns every diagnostic.
std::vector<Diagnostic> compileToPtx(const fs::path& path, const std::string& text);

std::vector<Expectation> parseExpectations(const std::string& text);
// Whether the file says `# expect-no-diagnostics`: a correct kernel the checker must pass
// silently (no error, no warning, no "cannot prove").
bool expectsNoDiagnostics(const std::string& text);
Expectation fromDiagnostic(const Diagnostic& d, const SourceFile& file);
bool sameDiagnostic(const Expectation& expected, const Expectation& actual);
// Empty when every announced counterexample field matches the diagnostic's.
std::string counterexampleMismatch(const Expectation& expected, const Diagnostic& d);
// The counterexample fields of a diagnostic, as the corpus writes them.
std::vector<std::pair<std::string, std::string>> counterexampleFields(const Diagnostic& d);
void rewriteExpectations(const fs::path& path, const std::string& text, const std::vector<Diagnostic>& diags);

// `# replay: N=64 M=32` lines of a corpus file.
std::map<std::string, int64_t> replaySizes(const std::string& text);

}  // namespace argus::corpus
