// What ir/ops.def declares about each op, as queries and typed accessors.
//
// `opInfo(kind)` gives an op kind's name, operand, result and region counts, how it
// synchronizes, its traits and its memory effects. `memoryEffects(fn, op)` instantiates the
// effects for one op: the checker's access collection, and any analysis that needs to know
// which memory an op touches, reads them from here rather than from a switch of its own.
// The typed accessors (`StoreOp(op).view()`, `ir::as<DotOp>(op)`) name operands and
// attributes, so code says `dot.transB()` rather than `op.attrs.i & kDotTransB`; the typed
// editors (`DotAttrs(attrs).transB(true)`) set them.
#pragma once

#include <cassert>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/ir.h"

namespace argus::ir {

// How an op orders the block's threads or its asynchronous work.
enum class SyncKind : uint8_t {
  None,
  BlockBarrier,      // every thread of the block waits for all; shared writes become visible
  AsyncCommit,       // closes the thread's group of cp.async copies
  AsyncWait,         // waits until at most N of the thread's groups are pending
  MbarrierInit,
  MbarrierExpectTx,
  MbarrierArrive,
  MbarrierWait,
};

inline bool isMbarrierSync(SyncKind kind) {
  return kind == SyncKind::MbarrierInit || kind == SyncKind::MbarrierExpectTx || kind == SyncKind::MbarrierArrive ||
         kind == SyncKind::MbarrierWait;
}

// Traits, a mask.
enum OpTrait : uint32_t {
  kNoTraits = 0,
  kPure = 1u << 0,          // no memory access, synchronization or control flow
  kArithmetic = kPure | 1u << 1,  // pure scalar-or-tile arithmetic (ir::isArithmetic)
  kControl = 1u << 2,       // owns regions (For, If)
  kTerminator = 1u << 3,    // ends a region (Yield)
  kCheckerOnly = 1u << 4,   // a tag or an assertion: never reaches generated code
  kAllocates = 1u << 5,     // defines a shared buffer (AllocShared)
};

enum class MemoryAccess : uint8_t { Read, Write };
// Which memory an effect's view may look into.
enum class EffectSpace : uint8_t { AnySpace, Global, Shared };
// Which proxy performs an access: the generic one (ordinary loads and stores; mma and wgmma
// operands as the IR states them), cp.async's, or the bulk (TMA) async proxy.
enum class MemoryProxy : uint8_t { Generic, AsyncCopy, Bulk };
// When an access has happened from the other threads' point of view (after the barrier that
// follows): at once, when a wait_group retires its cp.async group, or when the mbarrier the op
// names completes the phase its bytes count towards.
enum class Completion : uint8_t { AtOnce, AsyncGroup, Mbarrier };
// Which elements of the accessed view each thread touches.
enum class EffectElements : uint8_t {
  ResultLayout,        // those of the result tile's layout (Load)
  StoredValueLayout,   // those of the stored tile's layout, primary owners only (Store)
  AccumulatorLayout,   // those the accumulator's layout needs (Dot operands)
  AsyncCopyChunks,     // cp.async's 16-byte chunks (ir/async.h)
  WholeViewOneThread,  // the whole view, by one thread (TMA)
};

struct EffectDecl {
  MemoryAccess access = MemoryAccess::Read;
  uint8_t operand = 0;  // the view accessed
  EffectSpace space = EffectSpace::AnySpace;
  MemoryProxy proxy = MemoryProxy::Generic;
  Completion completion = Completion::AtOnce;
  EffectElements elements = EffectElements::ResultLayout;
};

struct OpInfo {
  const char* name;
  int minOperands;
  int maxOperands;  // -1: any
  int results;      // -1: any
  int regions;
  SyncKind sync;
  uint32_t traits;
  std::span<const EffectDecl> effects;

  bool has(OpTrait trait) const { return (traits & trait) == trait; }
};

const OpInfo& opInfo(OpKind kind);
inline constexpr size_t kNumOpKinds = static_cast<size_t>(OpKind::Assert) + 1;

// One access of one op: its declaration and the view it touches (a view of a tensor or of a
// shared buffer; `space` says which).
struct MemoryEffect {
  const EffectDecl* decl;
  ValueId view;
  MemSpace space;
};

// The declared effects of `op` that apply to it: those whose operand is present and is a view
// (a Dot whose `a` is a register tile reads only `b`).
std::vector<MemoryEffect> memoryEffects(const Function& fn, const Op& op);

// The layout whose distribution says which elements of the accessed view each thread of the
// block touches for this effect of `op` (EffectElements): the result's, the stored tile's
// (its primary owners only), the accumulator's (a dot operand: every K of the rows or columns
// the thread's accumulator elements need), or cp.async's chunks (ir/async.h; one coordinate
// per chunk of asyncCopyVectorElements elements). Nothing for a whole view copied by one
// thread, or an op that lacks what the declaration names.
std::optional<Layout> effectLayout(const Function& fn, const Op& op, const EffectDecl& effect);

// Whether an op of `kind` declares a write of the view it takes as operand `operand`.
bool writesOperand(OpKind kind, size_t operand);

// The operand an op of `kind` writes (its Write effect's view) and the operand holding the
// data it writes there (ARGUS_WRITES_FROM: a stored tile, a copy's source view); none for an
// op that writes no memory.
std::optional<size_t> writtenViewOperand(OpKind kind);
std::optional<size_t> writtenDataOperand(OpKind kind);

// The value of `v` when a Const of an integer or bool scalar type defines it.
std::optional<int64_t> constantInt(const Function& fn, ValueId v);

// ---------------------------------------------------------------- typed accessors

template <OpKind K>
class TypedOp {
 public:
  static constexpr OpKind kKind = K;
  explicit TypedOp(const Op& op) : op_(&op) { assert(op.kind == K); }
  const Op& op() const { return *op_; }
  ValueId result(size_t i = 0) const { return op_->results.at(i); }

 private:
  const Op* op_;
};

// The typed view of `op` when it is of kind T::kKind.
template <class T>
std::optional<T> as(const Op& op) {
  if (op.kind != T::kKind) return std::nullopt;
  return T(op);
}

#define ARGUS_OP(Kind, name, minOperands, maxOperands, results, regions, sync, traits) \
  class Kind##Op : public TypedOp<OpKind::Kind> {                                       \
   public:                                                                             \
    using TypedOp::TypedOp;
#define ARGUS_OPERAND(name, index) \
  ValueId name() const { return op().operands[index]; }
#define ARGUS_OPTIONAL_OPERAND(name, index) \
  ValueId name() const { return op().operands.size() > (index) ? op().operands[index] : kNoValue; }
#define ARGUS_VARIADIC_OPERANDS(name, first) \
  std::span<const ValueId> name() const { return std::span<const ValueId>(op().operands).subspan(first); }
#define ARGUS_ATTR(name, type, field) \
  type name() const { return op().attrs.field; }
#define ARGUS_FLAG(name, field, mask) \
  bool name() const { return (op().attrs.field & (mask)) != 0; }
#define ARGUS_ELEMENT_ATTR(name, type, field, index)                                  \
  type name() const {                                                                 \
    static const std::remove_cvref_t<type> kAbsent{}; /* an op built by hand, unverified */ \
    return op().attrs.field.size() > (index) ? op().attrs.field[index] : kAbsent;     \
  }
#define ARGUS_END_OP \
  }                  \
  ;
#include "ir/ops.def"
#include "ir/ops_undef.def"

// ---------------------------------------------------------------- typed attribute editors

// `DotAttrs(attrs).transB(true)` sets one attribute of an op of that kind in an attribute bag:
// a fresh one for Builder::create, or an existing op's (`DotAttrs(op.attrs)`). Each setter
// returns the editor, so settings chain.
#define ARGUS_OP(Kind, name, minOperands, maxOperands, results, regions, sync, traits) \
  class Kind##Attrs {                                                                 \
   public:                                                                            \
    explicit Kind##Attrs(Attrs& attrs) : attrs_(attrs) {}
#define ARGUS_ATTR(name, type, field) \
  auto& name(type value) {            \
    attrs_.field = value;             \
    return *this;                     \
  }
#define ARGUS_FLAG(name, field, mask)                                     \
  auto& name(bool on) {                                                   \
    attrs_.field = on ? (attrs_.field | (mask)) : (attrs_.field & ~(mask)); \
    return *this;                                                         \
  }
#define ARGUS_ELEMENT_ATTR(name, type, field, index)                        \
  auto& name(type value) {                                                  \
    if (attrs_.field.size() <= (index)) attrs_.field.resize((index) + 1);   \
    attrs_.field[index] = value;                                            \
    return *this;                                                           \
  }
#define ARGUS_END_OP \
   private:          \
    Attrs& attrs_;   \
  }                  \
  ;
#include "ir/ops.def"
#include "ir/ops_undef.def"

// The reduction of a Reduce or ReduceAll op.
inline ReduceKind reduceKindOf(const Op& op) {
  return op.kind == OpKind::Reduce ? ReduceOp(op).reduceKind() : ReduceAllOp(op).reduceKind();
}

// The grid axis that a ProgramId or NumPrograms op reads.
inline int64_t gridAxisOf(const Op& op) {
  return op.kind == OpKind::ProgramId ? ProgramIdOp(op).axis() : NumProgramsOp(op).axis();
}

}  // namespace argus::ir
