// Fuzz target for the whole compiler pipeline: lexing, parsing, sema, the
// invariant checker and code generation to PTX (ptxas is not run). The entry
// point has libFuzzer's signature: built with clang -fsanitize=fuzzer it is a
// coverage-guided fuzzer (scripts/build_fuzzers.sh); in the ordinary build the
// test suite replays the committed corpus through it (tests/fuzz/replay_main.cpp)
// and mutates the examples for a bounded time (tests/fuzz/fuzz_driver.cpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "driver/compilation.h"
#include "frontend/ast.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  // The CLI rejects binary and non-UTF-8 files before compiling; so does the target.
  if (text.find('\0') != std::string::npos || !argus::isValidUtf8(text)) return 0;
  argus::CompileOptions options;
  options.arch = "sm_90a";  // the superset: wgmma, TMA and mbarrier paths are reachable
  options.defines = {{"BLOCK", "128"}};
  argus::Compilation compilation(argus::SourceFile("fuzz.ag", std::move(text)), options);
  compilation.tokens();
  (void)argus::ast::dumpAst(compilation.ast(), compilation.source());
  compilation.sema();
  compilation.check();
  (void)compilation.ptx();
  (void)compilation.diagnostics();
  return 0;
}
