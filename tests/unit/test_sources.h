// Source text for tests: files of the repository and small edits of them.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "support/source.h"

namespace argus::testing {

inline std::string readSource(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// examples/NAME of the source tree.
inline std::string readExample(const std::string& name) {
  return readSource(std::filesystem::path(ARGUS_SOURCE_DIR) / "examples" / name);
}

// tests/data/kernels/PATH of the source tree: a unit test's own kernel, kept as
// an .ag file rather than a string literal. A missing file throws (GoogleTest
// fails the test with the message) instead of reading as an empty kernel, which
// would fail later and far from the cause.
inline std::string readTestKernel(const std::string& path) {
  const std::filesystem::path file = std::filesystem::path(ARGUS_SOURCE_DIR) / "tests" / "data" / "kernels" / path;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("test kernel " + file.string() + " cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The architecture an example names in a line `# arch: sm_90a` (kernels with
// Hopper-only instructions), or "" when any supported one will do.
inline std::string exampleArch(const std::string& text) { return declaredArch(text); }

// Drops the `occurrence`-th line (counting from 0) whose text after its
// indentation is `line`: how the tests plant a missing wait or barrier.
inline std::string withoutLine(const std::string& text, const std::string& line, int occurrence = 0) {
  std::istringstream in(text);
  std::string out, l;
  int seen = 0;
  while (std::getline(in, l)) {
    size_t start = l.find_first_not_of(' ');
    if (start != std::string::npos && l.substr(start) == line && seen++ == occurrence) continue;
    out += l + "\n";
  }
  return out;
}

}  // namespace argus::testing
