// Code generation: Tile IR -> LLVM IR -> PTX (LLVM 19 NVPTX backend) -> cubin (ptxas).
// This header is LLVM-free on purpose: it is included by the driver and tools.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/bulk.h"
#include "support/diagnostic.h"

namespace argus::ir { struct Module; struct Function; }

namespace argus::codegen {

struct Options {
  std::string arch = "sm_90";  // sm_80 | sm_90 | sm_90a
};

// True for the architectures codegen can target.
bool isSupportedTarget(const std::string& arch);

// Static shared memory one block may use without opting in to more (sm_80, sm_90).
constexpr int64_t kStaticSharedLimitBytes = 48 * 1024;
// The most shared memory one block may opt in to on `arch`.
int64_t maxSharedBytesPerBlock(const std::string& arch);
// Shared memory a kernel compiled for `arch` uses (its buffers, 16-byte aligned, plus codegen's
// scratch and store staging), and the dynamic shared memory a launch must pass: that total when
// it exceeds 48 KiB, else 0 (static).
int64_t sharedMemoryBytes(const ir::Function& fn, const std::string& arch);
int64_t dynamicSharedBytes(const ir::Function& fn, const std::string& arch);
// The per-warp shared slices through which `fn` stores 16-bit mma tiles to global memory
// on `arch` (codegen/store_staging.cpp): their bytes, or 0 when no store is staged or
// when they would not fit beside `otherBytes` of shared memory.
int64_t storeStagingBytes(const ir::Function& fn, const std::string& arch, int64_t otherBytes);
// Shared memory of a kernel's buffers and scratch, before its store staging.
int64_t sharedBytesBeforeStaging(const ir::Function& fn);
// Where the slices start after `otherBytes` of shared memory (1024-byte aligned, for TMA).
int64_t storeStagingOffset(int64_t otherBytes);
// The kernel's tensor maps in ABI order (ir/bulk.h): its CopyBulk maps, then, on
// sm_90a, one per tensor its staged stores write by TMA.
std::vector<ir::TensorMapUse> kernelTensorMaps(const ir::Function& fn, const std::string& arch);

// Lowers every function of `module` to one NVPTX kernel and prints the module
// as it is handed to the backend (after the O3 pipeline). On failure reports
// diagnostics (AG5xxx) into `diags` and returns false.
bool emitLLVM(const ir::Module& module, const Options& options, DiagnosticSink& diags,
              std::string* llvmIR);

// As emitLLVM, then runs the NVPTX backend. `llvmIR`, when given, receives the
// optimized LLVM IR the PTX was produced from.
bool emitPTX(const ir::Module& module, const Options& options, DiagnosticSink& diags,
             std::string* ptx, std::string* llvmIR = nullptr);

// What ptxas allocated for one kernel (its `-v` report).
struct KernelResources {
  std::string kernel;
  int registers = 0;  // per thread
  int64_t stackBytes = 0, spillStoreBytes = 0, spillLoadBytes = 0;
};

// The kernels of a `ptxas -v` report, in the order ptxas compiled them; device
// functions (`.func`) and lines it does not know are skipped.
std::vector<KernelResources> parsePtxasReport(std::string_view report);

// Runs `ptxasPath -arch=<arch>` on `ptx` and returns the cubin bytes. A missing
// ptxas or a ptxas failure is a diagnostic that quotes ptxas's message. With
// `resources`, ptxas also reports (-v) what it allocated for each kernel. Once
// `cancelled` returns true (polled while ptxas runs) ptxas is killed and
// nothing is returned, with no diagnostic.
std::optional<std::vector<uint8_t>> assembleCubin(const std::string& ptx, const std::string& arch,
                                                  const std::string& ptxasPath,
                                                  DiagnosticSink& diags,
                                                  std::vector<KernelResources>* resources = nullptr,
                                                  const std::function<bool()>& cancelled = {});

}  // namespace argus::codegen
