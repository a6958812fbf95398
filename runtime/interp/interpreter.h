// The CPU interpreter of the Tile IR: the correctness oracle where there is no
// GPU (`argusc run --cpu`, CI). It runs every block of the grid one after the
// other and simulates the threads of a block: a tile is stored per thread and
// value index as ir::Distribution says, exactly as the GPU code holds it; memory
// ops run per thread (only primary owners store); shared memory is a byte array
// per AllocShared. Faults (out-of-bounds shared access, shared-memory races,
// integer division by zero, an mbarrier wait that can never complete, ...)
// become a RunError, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/ir.h"
#include "runtime/interp/host_tensor.h"
#include "support/diagnostic.h"

namespace argus::interp {

// One argument per Tensor or Scalar parameter of the function, in parameter
// order (Size parameters are derived from the tensors' shapes). A tensor is
// passed by pointer and written in place; a scalar as a double or an int64
// (use int64 for integer parameters wider than 53 bits).
struct ArgValue {
  std::variant<HostTensor*, double, int64_t> value;

  ArgValue(HostTensor* t) : value(t) {}
  ArgValue(HostTensor& t) : value(&t) {}
  ArgValue(double v) : value(v) {}
  ArgValue(float v) : value(static_cast<double>(v)) {}
  ArgValue(int64_t v) : value(v) {}
  ArgValue(int v) : value(static_cast<int64_t>(v)) {}
};

struct RunError {
  DiagId id = DiagId::RunInternalError;
  std::string message;               // the format of `id` with `arguments` (prefixed by the block, for a fault in one)
  std::vector<std::string> arguments;  // the arguments of the message, as Diagnostic::arguments
  SourceRange range;                 // the op (or requirement, or parameter) at fault
  std::optional<int64_t> block;      // linear block id: x + gx * (y + gy * z)
  std::optional<int64_t> thread;     // block-local thread id
  std::optional<int64_t> otherThread;  // the other party of a race
  std::vector<Label> labels;         // related places (e.g. where the racing write happened)
};

struct RunOptions {
  // Stop with an error after this many op executions per block (0: no limit),
  // to keep a runaway loop from hanging the caller.
  uint64_t maxOpsPerBlock = 0;
  // Report reads of shared memory that no thread has written.
  bool checkUninitializedShared = true;
  // Every copy_async writes its destination when it is issued, as a plain copy by the issuing
  // thread would (commit_group and wait_group then have nothing to wait for): what a kernel
  // means when its copies are made synchronous, the reference a verified fix-it is compared
  // with. copy_bulk keeps its mbarrier semantics.
  bool synchronousCopies = false;
};

// Runs `fn` on the arguments; returns the first fault, or nothing on success.
std::optional<RunError> run(const ir::Function& fn, std::vector<ArgValue>& args, const RunOptions& opts = {});

// The diagnostic for a run-time fault (thread and block in the counterexample).
Diagnostic toDiagnostic(const RunError& error);

// Whether `id` is one of the interpreter's shared-memory races (a read after a write, a write
// after a read, two writes, an access to a copy still in flight, an mbarrier used before its
// initialization is visible): the kinds a missing barrier() or wait causes.
bool isSharedRace(DiagId id);

}  // namespace argus::interp
