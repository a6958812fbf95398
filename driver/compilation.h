// The library's front door: source text + options in; tokens, AST, Tile IR,
// diagnostics, LLVM IR, PTX and cubin out, each computed on demand and cached.
// Nothing here prints, exits or reads global state.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/diagnostic.h"
#include "support/source.h"

namespace argus {
namespace ast { struct Module; }
namespace ir { struct Module; }
namespace sema { struct Result; }
struct TokenInfo;

struct CompileOptions {
  std::string arch = "sm_90";  // sm_80 | sm_90 | sm_90a
  std::vector<std::pair<std::string, std::string>> defines;  // -D NAME=VALUE
  bool warningsAsErrors = false;
  std::string ptxasPath = "/usr/local/cuda/bin/ptxas";
  // Polled between stages and, in the checker, between functions and passes:
  // once it returns true the compilation stops early and its diagnostics are
  // incomplete (Compilation::cancelled()). An editor sets it so that the next
  // keystroke interrupts a long check. Called from the compiling thread and
  // from the checker's second lane (checker::Options::parallel): thread-safe.
  std::function<bool()> cancelled;
  // The policy passes that run between sema and the checker, by name (ir/passes.h), in this
  // order; unset: every pass in the compiler's order. For `argusc opt` and tests: a compile
  // that skips a pass generates other code than argusc does.
  std::optional<std::vector<std::string>> passes;
  // Offer a checker fix-it only once the fixed kernel re-checks and the interpreter agrees
  // (driver/fixit_check.h). Off only for the compilations that verification itself runs.
  bool verifyFixits = true;
  // The checker's two lanes on two threads, and code generation beside the
  // check; off: all on the calling thread, one after the other (the same
  // output; compile_bench --phases times both).
  bool parallel = true;
  // Called after each policy pass with the module as that pass left it (`argusc opt --print-after`).
  std::function<void(const std::string& pass, const ir::Module& module)> afterPass;
};

bool isSupportedArch(const std::string& arch);

// Reads a source file; problems (missing, a directory, binary, invalid UTF-8)
// become one diagnostic in `diags` and the result is empty.
std::optional<SourceFile> loadSourceFile(const std::string& path, DiagnosticSink& diags);

class Compilation {
 public:
  Compilation(SourceFile file, CompileOptions options);
  ~Compilation();
  Compilation(const Compilation&) = delete;
  Compilation& operator=(const Compilation&) = delete;

  const SourceFile& source() const { return file_; }
  const CompileOptions& options() const { return options_; }

  const std::vector<TokenInfo>& tokens();
  const ast::Module& ast();
  const sema::Result& sema();
  // The Tile IR of every kernel that checked without errors.
  const ir::Module& ir();
  // Runs the invariant checker on the IR (once); false when it found errors.
  // Code generation runs it first; editors call it to show its findings.
  bool check();
  // Empty when an earlier stage failed; failures are diagnostics.
  const std::string& llvmIR();
  const std::string& ptx();
  const std::optional<std::vector<uint8_t>>& cubin();

  // Every diagnostic produced so far, in order, -Werror applied.
  const std::vector<Diagnostic>& diagnostics();
  bool hasErrors();
  // True when `CompileOptions::cancelled` stopped a stage: later stages were
  // skipped and the diagnostics are incomplete.
  bool cancelled() const;

 private:
  bool pollCancelled();
  struct Stages;
  SourceFile file_;
  CompileOptions options_;
  DiagnosticSink diags_;
  std::unique_ptr<Stages> stages_;
};

}  // namespace argus
