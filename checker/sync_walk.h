// Shared-memory accesses of a function and the phase walk that finds every pair
// of accesses with no barrier() between them (internal to the checker).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ir/ir.h"
#include "ir/ops.h"

namespace argus::checker {

struct LoopInfo {
  const ir::Op* op = nullptr;
  std::vector<int> enclosing;       // outer loops, outermost first
  bool definiteBarrier = false;     // every path through the body crosses a barrier
};

// AsyncCopy: a copy_async's writes, by the threads of ir/async.h (attributed
// to the point of issue; async_check.cpp checks when they become visible).
enum class AccessRole : uint8_t { Load, Store, DotA, DotB, DotBTransposed, AsyncCopy };

struct Access {
  const ir::Op* op = nullptr;
  AccessRole role = AccessRole::Load;
  ir::ValueId buffer = ir::kNoValue;    // the AllocShared result
  ir::ValueId view = ir::kNoValue;      // the View value
  ir::Layout layout;                    // who touches what: load result, stored tile, dot accumulator
  std::vector<int> loops;               // enclosing loops, outermost first
  bool isWrite() const { return role == AccessRole::Store || role == AccessRole::AsyncCopy; }
};

// How the iteration of an earlier (pending) access relates to the later one's,
// per loop enclosing both (indexed by nesting depth). Deeper entries after the
// first non-Same one carry no meaning (the inner loops run in other instances).
enum class IterRelation : uint8_t { Same, Next, Later };

// The later access runs in iteration `iteration` of `loop` (at least that one
// when `atLeast`): how the async-copy check walks loop bodies iteration by iteration.
struct IterationPin {
  int loop = -1;
  int64_t iteration = 0;
  bool atLeast = false;
  bool operator==(const IterationPin&) const = default;
};

struct Pending {
  int access = -1;
  std::vector<IterRelation> relation;  // one per loop of the access
  // Used by the async-copy check only (the phase walk keeps the defaults): with
  // IterRelation::Next the later access runs `distance` iterations after the
  // earlier one; `acrossBarriers` drops the "no barrier() between them"
  // constraints; `sameThreadToo` lets one thread do both accesses.
  int64_t distance = 1;
  bool acrossBarriers = false;
  bool sameThreadToo = false;
  std::vector<IterationPin> pins;
  // (loop, k): the earlier access ran k iterations before the last iteration of
  // that loop (it is read after the loop ended).
  std::vector<std::pair<int, int64_t>> beforeLast;
  bool operator==(const Pending&) const = default;
};

struct FunctionAccesses {
  std::vector<Access> accesses;
  std::vector<LoopInfo> loops;
  std::vector<std::vector<int>> valueLoops;  // per value: loops enclosing its definition
  // Ops with a shared-memory effect (ir/ops.def) the phase walk has no encoding for: the
  // race check reports "cannot prove" for each rather than skipping it.
  std::vector<const ir::Op*> unmodeled;
};

FunctionAccesses collectAccesses(const ir::Function& fn);

// How the phase walk (and sync_encode.cpp, which says which elements each role touches) names
// a declared shared-memory effect (ir/ops.def) of an op of kind `kind`; nullopt when it has no
// encoding for it, which the race check reports as "cannot prove".
std::optional<AccessRole> accessRoleOf(ir::OpKind kind, const ir::EffectDecl& effect, bool transB = false);

// Calls `conflict(earlier, later)` for every pending access that may run in the
// same phase as (before) access `later`, on the same buffer, one of them a write.
void walkPhases(const ir::Function& fn, const FunctionAccesses& fa,
                const std::function<void(const Pending&, int)>& conflict);

}  // namespace argus::checker
