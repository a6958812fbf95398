// The Tile IR: a typed, structured SSA form of a kernel. Produced by the
// frontend (sema), analysed by the checker, lowered by codegen, executed by the
// CPU interpreter. Every value and op keeps the source range it came from.
//
// Execution model: a kernel runs as a grid of blocks; every op executes for the
// whole block. Scalars are block-uniform (every thread holds the same value), so
// control flow (For, If) is uniform. Tiles are distributed over the threads by
// their Layout (ir/types.h). Memory: global tensors (row-major, contiguous) and
// shared buffers (row-major, one per AllocShared, alive for the whole kernel).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/types.h"
#include "support/source.h"

namespace argus::ir {

using ValueId = uint32_t;
constexpr ValueId kNoValue = ~0u;

// Every op kind, in the order of ir/ops.def, which documents each one's semantics, operands,
// attributes and memory effects (typed accessors and the effect queries: ir/ops.h).
enum class OpKind : uint8_t {
#define ARGUS_OP(Kind, name, minOperands, maxOperands, results, regions, sync, traits) Kind,
#include "ir/ops.def"
#include "ir/ops_undef.def"
};

// Instructions of an Assert condition, postfix in its `code`: the instruction, then its arguments.
// Integers are i32 with the IR's wrapping semantics; Div / Rem truncate toward zero (C).
enum class AssertCode : int64_t {
  Const = 0,    // [Const, value]: push the integer
  Scalar = 1,   // [Scalar, k]: push operand k (an i32 scalar)
  Tag = 2,      // [Tag, k, n, d]: push tag names[n] of the element of operand k (the built-in
                //   `origin`: its coordinate d; user tags: d = -1)
  Binary = 3,   // [Binary, BinaryKind]: pop y, x; push x op y (Add, Sub, Mul, Div, Rem)
  Compare = 4,  // [Compare, CmpKind]: pop y, x; push the truth of x cmp y
  And = 5,      // pop two truths, push their conjunction
  Or = 6,       // pop two truths, push their disjunction
  Not = 7,      // pop a truth, push its negation
  Neg = 8,      // pop x, push -x
};

constexpr int64_t kDotTransB = 1;  // DotOp::transB
// DotOp::wgmmaInFlight, set only by the pipelining policy on a wgmma dot whose accumulator is carried
// from one iteration of a copy_bulk pipeline to the next: the pipeline refills a stage one
// iteration later than it otherwise would (ir/pipeline.h), so codegen may leave the dot's wgmma
// group in flight until the next iteration's dot (or the end of the loop). Semantics unchanged.
constexpr int64_t kDotWgmmaInFlight = 2;
// IfOp::producer, set only by the pipelining policy on the per-iteration copies of a
// warp-specialized copy_bulk pipeline (`pipelined(n, stages=S, specialize=True)`): the If holds
// nothing but mbarrier waits for a free stage and the copies into it, so codegen may run it on
// a producer warp of its own instead of on the block (ir/pipeline.h).
constexpr int64_t kIfProducer = 1;
// ForOp::specialize: the pipelined loop asked for warp specialization (specialize=True).
constexpr int64_t kForSpecialize = 1;
// BarrierOp::afterMbarrierInit, set only by the pipelining policy on the barrier after a pipeline's
// mbarrier_init ops: in a warp-specialized kernel the producer warpgroup takes part in it (it
// must see the barriers initialized), while it skips every other barrier. Semantics unchanged.
constexpr int64_t kBarrierAfterMbarrierInit = 1;
// CopyBulkOp::multicast: copy_bulk(dst, src, multicast=True) in a kernel of clusters
// (Function::clusterSize = C > 1). Every block of a cluster copies the same tile (ir/cluster.h
// proves it), so codegen has each issue 1/C of the tile's rows (its leading axis) and TMA
// multicasts them into every block's buffer, completing their bytes on the same mbarrier of
// each. What each block sees is unchanged: the whole tile lands in dst, its bytes complete
// on (bars, index).
constexpr int64_t kCopyMulticast = 1;
// MbarrierInitOp::clusterRelease and MbarrierArriveOp::clusterRelease, set only by the pipelining policy on the
// free-stage barriers of a warp-specialized pipeline with multicast copies: another block's
// copies write this block's stages, so codegen makes a stage free once every block of the
// cluster has released it (each block's warps arrive on every block's barrier). What each
// block sees is unchanged.
constexpr int64_t kMbarrierClusterRelease = 1;

enum class BinaryKind : uint8_t { Add, Sub, Mul, Div, Rem, Min, Max, Pow, And, Or, Xor, Shl, Shr };
enum class CmpKind : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
enum class UnaryKind : uint8_t {
  Neg, Not, Abs, Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Tanh, Erf, Sin, Cos, Floor, Ceil
};
enum class ReduceKind : uint8_t { Sum, Max, Min, Prod };

const char* opKindName(OpKind k);
const char* binaryKindName(BinaryKind k);
const char* cmpKindName(CmpKind k);
const char* unaryKindName(UnaryKind k);
const char* reduceKindName(ReduceKind k);

// An op's attributes. Which field holds which attribute of which op is written once, in
// ir/ops.def; the fields are private to the typed getters (`DotOp(op).transB()`) and editors
// (`DotAttrs(attrs).transB(true)`) generated from it (ir/ops.h), so no code reads an
// attribute under another op's meaning of a field.
class Attrs {
 private:
#define ARGUS_OP(Kind, name, minOperands, maxOperands, results, regions, sync, traits) \
  friend class Kind##Op;                                                               \
  friend class Kind##Attrs;
#include "ir/ops.def"
#include "ir/ops_undef.def"

  int64_t i = 0;
  int64_t flags = 0;
  double f = 0.0;
  DType dtype = DType::F32;
  BinaryKind binary = BinaryKind::Add;
  CmpKind cmp = CmpKind::Eq;
  UnaryKind unary = UnaryKind::Neg;
  ReduceKind reduce = ReduceKind::Sum;
  std::vector<int64_t> ints;
  std::vector<std::string> names;
};

struct Op;

struct Block {
  std::vector<ValueId> args;
  std::vector<std::unique_ptr<Op>> ops;
};

struct Op {
  OpKind kind;
  SourceRange range;
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  std::vector<Block> regions;  // For: 1; If: 2
  Attrs attrs;
};

struct Value {
  Type type;
  Op* def = nullptr;         // null for block arguments
  uint32_t resultIndex = 0;  // index among def's results
  std::string name;          // the source variable it was bound to, if any (for printing)
  SourceRange range;
};

// Integer expressions over runtime sizes, evaluated on the host at launch time
// (grid sizes, requirements).
struct LaunchExpr {
  enum class Kind : uint8_t {
    Const, Size, Add, Sub, Mul, FloorDiv, CeilDiv, Mod, Min, Max,
    Lt, Le, Gt, Ge, Eq, Ne, And, Or, Not
  };
  Kind kind = Kind::Const;
  int64_t value = 0;     // Const: the value; Size: index into Function::sizeNames
  std::vector<LaunchExpr> operands;  // two for the binary kinds, one for Not
  // The operands by role: x op y, not x.
  const LaunchExpr& lhs() const { return operands.at(0); }
  const LaunchExpr& rhs() const { return operands.at(1); }
  const LaunchExpr& negated() const { return operands.at(0); }
  std::string str(const std::vector<std::string>& sizeNames) const;
  // Evaluates with the given sizes; returns false (and sets `error`) on division by zero.
  bool evaluate(const std::vector<int64_t>& sizes, int64_t& out, std::string* error = nullptr) const;
};

// Extent of one tensor dimension: a compile-time constant or a runtime size.
struct DimRef {
  int64_t constant = -1;  // >= 0 when constant
  int sizeIndex = -1;     // index into Function::sizeNames otherwise
};

enum class ParamKind : uint8_t { Tensor, Size, Scalar };

// Kernel parameters in ABI order: every tensor and scalar parameter as written,
// then one i32 per runtime size name, in order of first appearance.
struct Param {
  ParamKind kind;
  std::string name;
  DType dtype;
  std::vector<DimRef> dims;  // Tensor only
  ValueId value = kNoValue;  // the body's block argument
  SourceRange range;
  // Scalar only: the declared default ('eps: f32 = 1e-5'; bools as 0/1), which
  // hosts pass when the caller gives no value. The kernel itself always takes it as an argument.
  std::optional<double> defaultValue;
};

// A launch-time requirement on runtime sizes (`require(N <= BLOCK)`).
struct Requirement {
  LaunchExpr condition;
  std::string text;  // as written
  SourceRange range;
  // Added by the compiler for a rule of the target (copy_bulk's 16-byte TMA rows), not
  // written by the user: launches check it like any other; an analysis whose property
  // cannot depend on it may leave it out of its proofs (see the mbarrier check).
  bool implied = false;
};

struct Function {
  std::string name;
  SourceRange range;
  std::vector<Param> params;
  std::vector<std::string> sizeNames;
  LaunchExpr grid[3];
  int64_t numWarps = 4;
  // Warps a warp-specialized pipeline adds to the launch for its copies (a producer warpgroup;
  // ir/pipeline.h). Every op still runs on numWarps warps; only codegen and launches see these.
  int64_t producerWarps = 0;
  // @kernel(cluster=C): consecutive blocks along grid axis 0 form clusters of C (sm_90), which
  // multicast copies share (kCopyMulticast).
  int64_t clusterSize = 1;
  std::vector<Requirement> requirements;
  // The first requirement that does not hold (or cannot be evaluated) at `sizes`
  // (in sizeNames order); null when all hold.
  const Requirement* failedRequirement(const std::vector<int64_t>& sizes) const;
  std::vector<std::pair<std::string, int64_t>> constants;  // resolved const parameters
  Block body;  // args = params' values, in order
  std::vector<Value> values;
  // The function as the user wrote it, before the policies rewrote its loops
  // (ir/pipeline.h); null when nothing was rewritten. A pipelined loop means
  // its plain loop, so the analyses of what data goes where (the checker's
  // tag flow) read this one: no rings of stages to see through. The rewrite
  // itself is checked on the function proper (the mbarrier and async checks).
  std::unique_ptr<Function> asWritten;

  int64_t numThreads() const { return numWarps * 32; }
  int64_t launchThreads() const { return (numWarps + producerWarps) * 32; }
  const Value& value(ValueId id) const { return values[id]; }
  const Type& typeOf(ValueId id) const { return values[id].type; }
};

// A deep copy, its ops new (and its values' defining ops with them); without asWritten.
std::unique_ptr<Function> cloneFunction(const Function& fn);

struct Module {
  std::vector<std::unique_ptr<Function>> functions;
};

// Arithmetic with no memory access, synchronization or control flow (Const, ProgramId,
// NumPrograms, Binary, Compare, Unary, Fma, Select, Cast): what the pipelining pass may
// recompute ahead and a producer warpgroup may compute for itself, on scalars.
bool isArithmetic(OpKind kind);
// The shared buffer that the view `view` looks into (a View op on a buffer from
// AllocShared), or kNoValue for any other value.
ValueId sharedBufferOf(const Function& fn, ValueId view);

// Appends ops at the end of a block of one function.
class Builder {
 public:
  Builder(Function& fn, Block* block) : fn_(fn), block_(block) {}
  Function& function() { return fn_; }
  Block* block() const { return block_; }
  void setBlock(Block* block) { block_ = block; }

  ValueId addBlockArg(Block& block, Type type, std::string name = {}, SourceRange range = {});
  // Creates an op with the given result types; returns the op. For gets one empty
  // region and If two, ready for addBlockArg / setBlock.
  Op& create(OpKind kind, std::vector<ValueId> operands, std::vector<Type> resultTypes,
             SourceRange range, Attrs attrs = {});
  // Single-result convenience.
  ValueId make(OpKind kind, std::vector<ValueId> operands, Type resultType, SourceRange range,
               Attrs attrs = {});

  ValueId constInt(int64_t v, DType t, SourceRange range = {});
  ValueId constFloat(double v, DType t, SourceRange range = {});
  ValueId constBool(bool v, SourceRange range = {});

 private:
  Function& fn_;
  Block* block_;
};

// Checks structural and type rules; returns one message per problem (empty = valid).
std::vector<std::string> verify(const Function& fn);
std::vector<std::string> verify(const Module& module);

// Textual form used by `--emit=ir` and golden tests. With a source file,
// each op line ends in `// line:col`.
std::string print(const Function& fn, const SourceFile* file = nullptr);
std::string print(const Module& module, const SourceFile* file = nullptr);

}  // namespace argus::ir
