// One analysed version of a document: the compilation (tokens, AST, sema) and
// its diagnostics, immutable once built, so that features read it from any
// thread while newer versions are being analysed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/codegen.h"
#include "driver/compilation.h"
#include "frontend/ast.h"
#include "frontend/lexer.h"
#include "frontend/sema.h"
#include "ir/ir.h"

namespace argus::lsp {

// What the editor configured (workspace/didChangeConfiguration or
// initializationOptions). Unset fields fall back as argusc's do.
struct ConfiguredOptions {
  std::optional<std::string> arch;  // else the file's `# arch:` line, else sm_90
  std::vector<std::pair<std::string, std::string>> defines;
};

// The options argusc would compile `text` with: a configured target wins (like
// --arch), else the file's `# arch:` line when it names a supported target.
CompileOptions effectiveOptions(const ConfiguredOptions& configured, const std::string& text);
// A string that differs whenever two option sets could give different diagnostics.
std::string optionsKey(const CompileOptions& options);

struct Snapshot {
  std::string uri;
  int64_t version = 0;
  uint64_t generation = 0;  // the server's edit counter for this document
  std::unique_ptr<Compilation> compilation;
  // Filled by `analyzeDocument`; all stay valid as long as `compilation` lives.
  const ast::Module* ast = nullptr;
  const sema::Result* sema = nullptr;
  const ir::Module* ir = nullptr;
  std::vector<TokenInfo> tokens;
  // The front end's diagnostics (lexer, parser, sema, Tile IR policies).
  std::vector<Diagnostic> diagnostics;
  // Every expression of the AST, in source order of their beginnings.
  std::vector<const ast::Expr*> expressions;

  const SourceFile& file() const { return compilation->source(); }
  const CompileOptions& options() const { return compilation->options(); }

  // Every diagnostic argusc gives for this text: the front end's, then the
  // checker's and code generation's once the background check of this
  // snapshot is done (until then the front end's alone).
  std::vector<Diagnostic> currentDiagnostics() const;
  bool checked() const;
  void setCheckedDiagnostics(std::vector<Diagnostic> all) const;
  // What ptxas allocated for each kernel of this text, once measured after the
  // check (null until then, and for text that does not compile).
  std::shared_ptr<const std::vector<codegen::KernelResources>> resources() const;
  void setResources(std::shared_ptr<const std::vector<codegen::KernelResources>> resources) const;

 private:
  mutable std::mutex checkedMutex_;
  mutable std::optional<std::vector<Diagnostic>> checked_;
  mutable std::shared_ptr<const std::vector<codegen::KernelResources>> resources_;
};

// Runs the front end (lex, parse, sema, Tile IR) on `text` with the options
// argusc would use; the checker runs separately (lsp/checking.h). The source
// file is named by the URI, so that diagnostics' related locations point back at it.
std::shared_ptr<const Snapshot> analyzeDocument(const std::string& uri, int64_t version,
                                                uint64_t generation, std::string text,
                                                const ConfiguredOptions& configured);

// The innermost expression whose range contains `offset` (end inclusive, so a
// cursor just after a name still finds it) and that `accept` accepts.
const ast::Expr* expressionAt(const Snapshot& snapshot, uint32_t offset,
                              bool (*accept)(const Snapshot&, const ast::Expr&) = nullptr);
// The user symbol or builtin whose definition or a reference contains `offset`;
// `range` receives that occurrence.
const sema::Symbol* symbolAt(const Snapshot& snapshot, uint32_t offset, SourceRange* range = nullptr);
// The type of a user symbol: that of its first occurrence sema typed (the
// definition when it has one, else a reference).
const ir::Type* symbolType(const Snapshot& snapshot, const sema::Symbol& symbol);
// The function definition containing `offset`, if any.
const ast::FunctionDef* functionAt(const Snapshot& snapshot, uint32_t offset);
// The Tile IR function of the kernel containing `offset`, if it checked.
const ir::Function* kernelAt(const Snapshot& snapshot, uint32_t offset);

}  // namespace argus::lsp
