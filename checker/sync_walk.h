// Shared-memory accesses of a function and the phase walk that finds every pair
// of accesses with no barrier() between them (internal to the checker).
#pragma once

#include <functional>
#include <vector>

#include "ir/ir.h"

namespace argus::checker {

struct LoopInfo {
  const ir::Op* op = nullptr;
  std::vector<int> enclosing;       // outer loops, outermost first
  bool definiteBarrier = false;     // every path through the body crosses a barrier
};

enum class AccessRole : uint8_t { Load, Store, DotA, DotB };

struct Access {
  const ir::Op* op = nullptr;
  AccessRole role = AccessRole::Load;
  ir::ValueId buffer = ir::kNoValue;    // the AllocShared result
  ir::ValueId view = ir::kNoValue;      // the View value
  ir::Layout layout;                    // who touches what: load result, stored tile, dot accumulator
  std::vector<int> loops;               // enclosing loops, outermost first
  bool isWrite() const { return role == AccessRole::Store; }
};

// How the iteration of an earlier (pending) access relates to the later one's,
// per loop enclosing both (indexed by nesting depth). Deeper entries after the
// first non-Same one carry no meaning (the inner loops run in other instances).
enum class IterRelation : uint8_t { Same, Next, Later };

struct Pending {
  int access = -1;
  std::vector<IterRelation> relation;  // one per loop of the access
  bool operator==(const Pending&) const = default;
};

struct FunctionAccesses {
  std::vector<Access> accesses;
  std::vector<LoopInfo> loops;
  std::vector<std::vector<int>> valueLoops;  // per value: loops enclosing its definition
};

FunctionAccesses collectAccesses(const ir::Function& fn);

// Calls `conflict(earlier, later)` for every pending access that may run in the
// same phase as (before) access `later`, on the same buffer, one of them a write.
void walkPhases(const ir::Function& fn, const FunctionAccesses& fa,
                const std::function<void(const Pending&, int)>& conflict);

}  // namespace argus::checker
