// The public API: target machine, kernel lowering for every function, the O3
// pipeline (new pass manager) and PTX emission through the NVPTX backend.
#include <mutex>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "ir/ir.h"

namespace argus::codegen {

namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

void initializeNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // 32-bit pointers for shared memory (as nvcc emits): shared addresses fit
    // in 32 bits, and 64-bit ones cost conversions around every ldmatrix and
    // cp.async in the inner loops. The option is read when a target machine
    // is created, so it is set once, before the first.
    const char* args[] = {"argus", "--nvptx-short-ptr=true"};
    std::string ignored;
    llvm::raw_string_ostream errors(ignored);  // never printed: the library does not write to stderr
    llvm::cl::ParseCommandLineOptions(2, args, "", &errors, nullptr, true);
  });
}

bool internalError(DiagnosticSink& diags, const std::string& reason) {
  diags.report(DiagId::CodegenInternalError, {}, {reason});
  return false;
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const TargetSpec& spec) {
  initializeNVPTX();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target) return nullptr;
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      kTriple, spec.arch, spec.features, options, std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

void optimize(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

// Lowers and optimizes the whole module; false after reporting diagnostics.
bool buildModule(const ir::Module& irModule, const Options& options, DiagnosticSink& diags, llvm::Module& module,
                 std::unique_ptr<llvm::TargetMachine>& tm) {
  TargetSpec spec;
  if (!targetSpecFor(options.arch, spec)) {
    diags.report(DiagId::UnsupportedTarget, {}, {options.arch});
    return false;
  }
  tm = createTargetMachine(spec);
  if (!tm) return internalError(diags, "the NVPTX target is not available in this LLVM");
  module.setTargetTriple(kTriple);
  module.setDataLayout(tm->createDataLayout());
  bool ok = true;
  for (const auto& fn : irModule.functions) {
    if (!fn) continue;
    std::vector<std::string> problems = ir::verify(*fn);
    if (!problems.empty()) {
      diags.report(DiagId::CodegenInternalError, fn->range, {"the Tile IR of kernel '" + fn->name + "' is malformed"})
          .notes.push_back(problems.front());
      ok = false;
      continue;
    }
    KernelLowering lowering(*fn, module, options.arch, diags);
    ok = lowering.run() && ok;
  }
  if (!ok) return false;
  std::string ignored;
  llvm::raw_string_ostream sink(ignored);
  if (llvm::verifyModule(module, &sink)) return internalError(diags, "the generated LLVM IR is invalid");
  optimize(module, *tm);
  if (llvm::verifyModule(module, &sink)) return internalError(diags, "the optimized LLVM IR is invalid");
  return true;
}

std::string printModule(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  os.flush();
  return text;
}

}  // namespace

bool targetSpecFor(const std::string& arch, TargetSpec& out) {
  // PTX ISA 7.8 (CUDA 11.8) is the first to know sm_90; sm_90a needs 8.0.
  if (arch == "sm_80" || arch == "sm_90") {
    out = {arch, "+ptx78"};
    return true;
  }
  if (arch == "sm_90a") {
    out = {arch, "+ptx80"};
    return true;
  }
  return false;
}

bool isSupportedTarget(const std::string& arch) {
  TargetSpec spec;
  return targetSpecFor(arch, spec);
}

bool emitLLVM(const ir::Module& irModule, const Options& options, DiagnosticSink& diags, std::string* llvmIR) {
  llvm::LLVMContext context;
  llvm::Module module("argus", context);
  std::unique_ptr<llvm::TargetMachine> tm;
  if (!buildModule(irModule, options, diags, module, tm)) return false;
  if (llvmIR) *llvmIR = printModule(module);
  return true;
}

// LLVM 19's NVPTX backend has no annotation for a kernel's cluster shape, so the
// directive goes into the text: `.reqnctapercluster C, 1, 1` after the kernel's
// other directives, before its body. A kernel with it may be launched like any
// other (cuLaunchKernel); the driver forms the clusters.
static std::string withClusterDirectives(const ir::Module& irModule, std::string ptx) {
  for (const auto& fn : irModule.functions) {
    if (!fn || fn->clusterSize < 2) continue;
    const size_t entry = ptx.find(".entry " + fn->name + "(");
    const size_t body = entry == std::string::npos ? entry : ptx.find("\n{", entry);
    if (body == std::string::npos) continue;
    ptx.insert(body + 1, ".reqnctapercluster " + std::to_string(fn->clusterSize) + ", 1, 1\n");
  }
  return ptx;
}

bool emitPTX(const ir::Module& irModule, const Options& options, DiagnosticSink& diags, std::string* ptx,
             std::string* llvmIR) {
  llvm::LLVMContext context;
  llvm::Module module("argus", context);
  std::unique_ptr<llvm::TargetMachine> tm;
  if (!buildModule(irModule, options, diags, module, tm)) return false;
  if (llvmIR) *llvmIR = printModule(module);
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return internalError(diags, "the NVPTX backend cannot emit assembly");
  pm.run(module);
  if (ptx) *ptx = withClusterDirectives(irModule, std::string(buffer.str()));
  return true;
}

}  // namespace argus::codegen
