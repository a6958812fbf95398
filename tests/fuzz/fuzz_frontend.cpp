// Fuzz target for lexing, parsing and semantic analysis. The entry point has
// libFuzzer's signature so the same file can be linked with -fsanitize=fuzzer;
// the test suite drives it with tests/fuzz/fuzz_driver.cpp for a bounded time.
#include <cstddef>
#include <cstdint>
#include <string>

#include "driver/compilation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  // The CLI rejects binary and non-UTF-8 files before compiling; so does the target.
  if (text.find('\0') != std::string::npos || !argus::isValidUtf8(text)) return 0;
  argus::CompileOptions options;
  options.defines = {{"BLOCK", "128"}};
  argus::Compilation compilation(argus::SourceFile("fuzz.ag", std::move(text)), options);
  compilation.tokens();
  compilation.sema();
  // Everything that checks must also lower: the IR of a clean kernel is valid.
  (void)compilation.diagnostics();
  return 0;
}
