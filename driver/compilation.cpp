#include "driver/compilation.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>

#include "checker/checker.h"
#include "codegen/codegen.h"
#include "driver/fixit_check.h"
#include "frontend/ast.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"
#include "frontend/sema.h"
#include "ir/ir.h"
#include "ir/passes.h"

namespace argus {

bool isSupportedArch(const std::string& arch) {
  return arch == "sm_80" || arch == "sm_90" || arch == "sm_90a";
}

namespace {

// A `# arch:` line that names a target argusc does not know is ignored (the file
// compiles for --arch or sm_90): say so, or a typo such as sm90a goes unnoticed.
void reportUnknownArchLine(const SourceFile& file, const std::string& compiledFor, DiagnosticSink& diags) {
  const std::string arch = declaredArch(file.text());
  if (arch.empty() || isSupportedArch(arch)) return;
  const std::string line = "# arch: " + arch;
  const std::string& text = file.text();
  const bool first = text.rfind(line, 0) == 0;
  size_t at = first ? 0 : text.find("\n" + line);
  if (at == std::string::npos) return;
  if (!first) at += 1;  // past the newline
  const auto begin = static_cast<uint32_t>(at + line.size() - arch.size());
  diags.report(DiagId::UnknownArchLine, SourceRange{begin, begin + static_cast<uint32_t>(arch.size())},
               {arch, compiledFor});
}

}  // namespace

std::optional<SourceFile> loadSourceFile(const std::string& path, DiagnosticSink& diags) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    diags.report(DiagId::FileNotFound, {}, {path, std::strerror(errno)});
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    diags.report(DiagId::FileIsDirectory, {}, {path});
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.report(DiagId::FileNotFound, {}, {path, std::strerror(errno)});
    return std::nullopt;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    diags.report(DiagId::FileIsBinary, {}, {path, std::to_string(nul)});
    return std::nullopt;
  }
  uint32_t bad = 0;
  if (!isValidUtf8(text, &bad)) {
    diags.report(DiagId::FileInvalidUtf8, {}, {path, std::to_string(bad)});
    return std::nullopt;
  }
  return SourceFile(path, std::move(text));
}

struct Compilation::Stages {
  std::optional<std::vector<TokenInfo>> tokens;
  std::unique_ptr<ast::Module> ast;
  std::optional<sema::Result> sema;
  std::unique_ptr<ir::Module> emptyModule;
  bool checkDone = false;
  bool codegenDone = false;
  std::string llvmIR, ptx;
  bool cubinDone = false;
  std::optional<std::vector<uint8_t>> cubin;
  std::vector<Diagnostic> promoted;
  bool cancelled = false;
};

Compilation::Compilation(SourceFile file, CompileOptions options)
    : file_(std::move(file)), options_(std::move(options)), stages_(std::make_unique<Stages>()) {}

Compilation::~Compilation() = default;

namespace {
// Lexing runs for both `tokens()` and `ast()`; keep each problem once.
void mergeUnique(DiagnosticSink& into, const DiagnosticSink& from) {
  for (const Diagnostic& d : from.diagnostics()) {
    bool seen = false;
    for (const Diagnostic& e : into.diagnostics())
      if (e.id == d.id && e.range == d.range && e.message == d.message) seen = true;
    if (!seen) into.diagnostics().push_back(d);
  }
}
}  // namespace

const std::vector<TokenInfo>& Compilation::tokens() {
  if (!stages_->tokens) {
    DiagnosticSink local;
    stages_->tokens = tokenize(file_, local);
    mergeUnique(diags_, local);
  }
  return *stages_->tokens;
}

const ast::Module& Compilation::ast() {
  if (!stages_->ast) {
    DiagnosticSink local;
    stages_->ast = parseModule(file_, local);
    reportUnknownArchLine(file_, options_.arch, local);
    mergeUnique(diags_, local);
  }
  return *stages_->ast;
}

const sema::Result& Compilation::sema() {
  if (!stages_->sema) {
    const ast::Module& module = ast();
    sema::Options options;
    options.defines = options_.defines;
    stages_->sema = sema::analyze(module, file_, options, diags_);
    if (pollCancelled()) return *stages_->sema;
    // Policies rewrite the IR before anything reads it: the checker validates the compiler's own
    // pipelines. Their order is ir/passes.cpp's (clusters are proved on the loops as the user
    // wrote them, before pipelining).
    if (stages_->sema->module) {
      std::vector<const ir::Pass*> passes;
      if (options_.passes) {
        for (const std::string& name : *options_.passes)
          if (const ir::Pass* pass = ir::findPass(name)) passes.push_back(pass);
      } else {
        for (const ir::Pass& pass : ir::policyPasses()) passes.push_back(&pass);
      }
      ir::PassContext context{options_.arch, &file_, &diags_};
      std::function<void(const ir::Pass&, const ir::Module&)> after;
      if (options_.afterPass)
        after = [this](const ir::Pass& pass, const ir::Module& module) { options_.afterPass(pass.name, module); };
      ir::runPasses(*stages_->sema->module, passes, context, after);
    }
  }
  return *stages_->sema;
}

const ir::Module& Compilation::ir() {
  const sema::Result& result = sema();
  if (result.module) return *result.module;
  if (!stages_->emptyModule) stages_->emptyModule = std::make_unique<ir::Module>();
  return *stages_->emptyModule;
}

const std::string& Compilation::llvmIR() {
  ptx();
  return stages_->llvmIR;
}

bool Compilation::check() {
  if (!stages_->checkDone) {
    const ir::Module& module = ir();
    stages_->checkDone = true;
    // The checker runs only on IR that sema accepted without errors.
    if (!diags_.hasErrors() && !module.functions.empty() && !pollCancelled()) {
      checker::Options checkerOptions;
      checkerOptions.cancelled = options_.cancelled;
      checkerOptions.parallel = options_.parallel;
      const size_t first = diags_.diagnostics().size();
      checker::check(module, diags_, &file_, checkerOptions);
      if (options_.verifyFixits && !pollCancelled())
        verifyCheckerFixits(file_, options_, diags_.diagnostics(), first);
      pollCancelled();
    }
  }
  return !diags_.hasErrors();
}

namespace {

struct CodegenOutput {
  DiagnosticSink diags;
  std::string ptx, llvmIR;
};

CodegenOutput generate(const ir::Module& module, const std::string& arch) {
  CodegenOutput out;
  codegen::Options options;
  options.arch = arch;
  if (!codegen::emitPTX(module, options, out.diags, &out.ptx, &out.llvmIR)) out.ptx.clear();
  return out;
}

}  // namespace

const std::string& Compilation::ptx() {
  if (!stages_->codegenDone) {
    const ir::Module& module = ir();
    stages_->codegenDone = true;
    // Checker errors stop code generation: no PTX for a kernel with a proven
    // race. Code generation reads the same IR and nothing the checker finds, so
    // it runs beside the check on another thread, and what it made is dropped
    // when the check finds an error: the same output as one after the other.
    std::future<CodegenOutput> beside;
    if (options_.parallel && !stages_->checkDone && !diags_.hasErrors() && !module.functions.empty() && !pollCancelled())
      beside = std::async(std::launch::async, generate, std::cref(module), options_.arch);
    check();
    if (!diags_.hasErrors() && !module.functions.empty() && !pollCancelled()) {
      CodegenOutput out = beside.valid() ? beside.get() : generate(module, options_.arch);
      diags_.append(out.diags.diagnostics());
      stages_->ptx = std::move(out.ptx);
      stages_->llvmIR = std::move(out.llvmIR);
    }
  }
  return stages_->ptx;
}

const std::optional<std::vector<uint8_t>>& Compilation::cubin() {
  if (!stages_->cubinDone) {
    const std::string& text = ptx();
    stages_->cubinDone = true;
    if (!text.empty())
      stages_->cubin = codegen::assembleCubin(text, options_.arch, options_.ptxasPath, diags_);
  }
  return stages_->cubin;
}

const std::vector<Diagnostic>& Compilation::diagnostics() {
  if (!options_.warningsAsErrors) return diags_.diagnostics();
  stages_->promoted = diags_.diagnostics();
  for (Diagnostic& d : stages_->promoted)
    if (d.severity == Severity::Warning) d.severity = Severity::Error;
  return stages_->promoted;
}

bool Compilation::pollCancelled() {
  if (!stages_->cancelled && options_.cancelled && options_.cancelled()) stages_->cancelled = true;
  return stages_->cancelled;
}

bool Compilation::cancelled() const { return stages_->cancelled; }

bool Compilation::hasErrors() {
  for (const Diagnostic& d : diagnostics())
    if (d.severity == Severity::Error) return true;
  return false;
}

}  // namespace argus
