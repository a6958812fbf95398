// Built-in invariants beyond synchronization (internal to the checker; see
// docs/checker.md, "Built-in invariants"):
//   AG2030/AG2034  every shared view stays inside its buffer, for every loop
//                  iteration, program id and launch size (Z3);
//   AG2031         the shared buffers fit the shared memory of a block (227 KiB);
//   AG2032         bank conflicts of shared accesses in loops (a warning);
//   AG2033         the live register tiles fit 255 registers per thread (a warning);
//   AG2037         no shared buffer is read that nothing in the kernel writes;
//   AG2038         no global access lies outside its tensor in every launch;
//   AG2045         no block reads a global element another block writes.
#pragma once

#include <string>
#include <vector>

#include "checker/checker.h"

namespace argus::checker {

void checkSharedBounds(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file,
                       const Options& options);
void checkSharedBudget(const ir::Function& fn, DiagnosticSink& diags);
void checkBankConflicts(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file);
void checkRegisterBudget(const ir::Function& fn, DiagnosticSink& diags);
void checkSharedWritten(const ir::Function& fn, DiagnosticSink& diags);
void checkGlobalAccessesMeetTensors(const ir::Function& fn, DiagnosticSink& diags, const Options& options);
// AG2045: no block reads a global element that another block of the launch writes.
void checkCrossBlockReads(const ir::Function& fn, DiagnosticSink& diags, const Options& options);

inline void checkBuiltinInvariants(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file,
                                   const Options& options) {
  checkSharedBudget(fn, diags);
  checkSharedWritten(fn, diags);
  checkSharedBounds(fn, diags, file, options);
  checkGlobalAccessesMeetTensors(fn, diags, options);
  checkCrossBlockReads(fn, diags, options);
  checkBankConflicts(fn, diags, file);
  checkRegisterBudget(fn, diags);
}

// Shared memory a block can have: the opt-in maximum of sm_90 (227 KiB). Code
// generation opts in above 48 KiB and checks sm_80's smaller limit (163 KiB).
constexpr int64_t kSharedBytesPerBlock = 227 * 1024;
// Registers a thread can address.
constexpr int64_t kRegistersPerThread = 255;

// Helpers shared by the invariant checks.
std::string shapeText(const std::vector<int64_t>& shape);  // "(3, 128)"
std::string sharedName(const ir::Function& fn, ir::ValueId buffer);  // "a_s", or "shared" when unnamed
int64_t elementBytes(ir::DType dtype);
// Calls `visit(op, loopDepth)` for every op, in program order, regions included.
template <typename Visit>
void forEachOpWithDepth(const ir::Block& block, int depth, const Visit& visit) {
  for (const auto& op : block.ops) {
    visit(*op, depth);
    for (const ir::Block& region : op->regions)
      forEachOpWithDepth(region, depth + (op->kind == ir::OpKind::For ? 1 : 0), visit);
  }
}

}  // namespace argus::checker
