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

enum class OpKind : uint8_t {
  // --- scalars and tiles alike (operands and result of one type unless noted)
  Const,        // attrs.i / attrs.f per result dtype; result scalar
  ProgramId,    // attrs.i = axis (0..2); result i32 scalar
  NumPrograms,  // attrs.i = axis; result i32 scalar
  Binary,       // attrs.binary; (x, y) -> same type. Integer Div/Rem truncate toward zero (C).
  Compare,      // attrs.cmp; (x, y) -> bool of x's shape and layout
  Unary,        // attrs.unary; (x) -> same type
  Fma,          // (a, b, c) -> a*b+c, floats only, one rounding
  Select,       // (cond: bool, a, b) -> a where cond else b
  Cast,         // (x) -> result dtype (attrs.dtype); see docs/language.md "Casts"
  // --- building tiles
  Splat,        // (scalar) -> tile of the result type
  Iota,         // attrs.i = axis; result i32 tile; element = its coordinate on axis
  Broadcast,    // (tile with layout (P, R)) -> tile with layout (P, R') where R' is a subset of R.
                // Free: each thread already holds the value. Element c = operand[c with R\R' axes = 0].
  ConvertLayout,// (tile) -> same shape and dtype, another layout (through shared scratch)
  Reshape,      // (tile) -> tile of the same dtype and element count, any shape and layout: element i
                // of the result in row-major order is element i of the operand (expand_dims,
                // x[None, :], reshape). Lowered as ConvertLayout is: through shared scratch.
  Reduce,       // attrs.reduce, attrs.i = axis; (tile (P, R)) -> tile (P, R | 1<<axis)
  ReduceAll,    // attrs.reduce; (tile) -> scalar of its dtype
  // --- memory
  AllocShared,  // result Shared type
  View,         // (base: Tensor|Shared, offsets: i32 scalar x rank(base)) -> View (attrs.ints unused).
                // A view of shape (t0..tk-1), k <= rank r, maps tile coordinate c to base
                // element (o0, .., o[r-k-1], o[r-k]+c0, .., o[r-1]+c[k-1]).
  Load,         // (view[, other: scalar]) -> tile with the canonical layout of the view shape.
                // Global: elements outside the tensor read `other` (default 0). Shared: must be in bounds.
  Store,        // (view, tile) -> nothing. Global: elements outside the tensor are skipped.
                // Only the primary owner of each element writes it.
  Dot,          // (a: View (M,K) shared, b: View (K,N) shared, acc: tile (M,N)) -> acc's type.
                // c[m,n] = acc[m,n] + sum over k ascending of f32(a[m,k]) * f32(b[k,n]) (fma each step).
                // attrs.i & kDotTransB: b is a view of shape (N,K) and b[k,n] means b_view[n,k].
                // a may instead be a register tile (M,K) in an mma layout with warps (WM, 1) when acc
                // has the same mma warp grid (a P @ V product of attention); codegen then uses tensor cores.
  Barrier,      // block-wide barrier with shared-memory visibility (bar.sync 0)
  // --- asynchronous copies (cp.async); see docs/language.md
  CopyAsync,    // (dst: View shared, src: View global) -> nothing; same shape and dtype. Issues this
                // thread's share of the copy (thread mapping: ir/async.h); source elements outside
                // the tensor are written as 0. The writes land when a WaitGroup retires the group
                // that holds them, and other threads see them after a Barrier that follows.
  CommitGroup,  // closes this thread's group of CopyAsync ops issued since the previous commit
  WaitGroup,    // attrs.i = n >= 0: waits until at most n of this thread's committed groups are pending
  // --- Hopper (sm_90a): bulk tensor copies (TMA) and mbarriers; docs/language.md "Hopper".
  // An mbarrier operand is a pair (bars, index): bars a shared buffer of u64 with shape (S,), index an
  // i32 scalar in [0, S). Each mbarrier counts phases 0, 1, 2, ...; a phase completes when its expected
  // arrivals (MbarrierInit's count) have arrived and its pending transaction bytes reached zero.
  MbarrierInit, // (bars, index) attrs.i = arrivals per phase (>= 1). One thread initializes it; the
                // block may use it after the Barrier that follows (codegen adds the proxy fence).
  MbarrierExpectTx, // (bars, index) attrs.i = bytes: one thread arrives once on the current phase and
                // adds `bytes` transaction bytes that CopyBulk ops complete.
  MbarrierArrive, // (bars, index): every thread arrives once on the current phase.
  MbarrierWait, // (bars, index, parity: i32 scalar 0 or 1): every thread waits until the most recent
                // phase of that parity has completed. Shared writes of the CopyBulk ops that completed
                // the phase are visible to the thread afterwards.
  CopyBulk,     // (dst: View shared, src: View global[, bars, index]) -> nothing; same shape and dtype.
                // One thread issues a TMA tile copy (cp.async.bulk.tensor) of the whole view; source
                // elements outside the tensor are written as 0; the bytes written complete transactions
                // on mbarrier (bars, index). Without the mbarrier operands it is a leading copy of a
                // `pipelined` loop, which the policy pass gives its mbarriers (ir/pipeline.h); nowhere
                // else. Codegen passes the tensor maps as kernel parameters (ir/bulk.h).
  // --- structure
  For,          // (lb, ub, step, inits...) region(iv, iters...) -> final iters. step > 0; runs while iv < ub.
                // attrs.i = pipeline stages requested by `pipelined(n, stages=S)` (0: a plain loop);
                // the policy pass (ir/pipeline.h) rewrites such loops before checking and codegen.
  If,           // (cond) then-region, else-region -> results (each region ends in Yield)
  Yield,        // terminator of For / If regions
  // --- tags and tag assertions: read by the checker only (docs/checker.md, "Tags"). Tags never
  // reach generated code: codegen and the interpreter treat TagSet as its operand and skip Assert.
  TagSet,       // (tile, value: i32 scalar) -> the same tile type; attrs.names[0] = the tag name.
                // Every element of the result carries tag `name` = value (block-uniform).
  Assert,       // (subjects..., i32 scalars...) -> nothing. A tag assertion: the condition, in
                // postfix in attrs.ints (AssertCode below), must hold for every element of the
                // subjects (tiles, shared buffers, shared views) that reaches it. attrs.names[0] is
                // the user's message ("" if none), names[1..] the tag names the condition reads.
};

// Instructions of an Assert condition, postfix in Attrs::ints: the code, then its arguments.
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

constexpr int64_t kDotTransB = 1;  // Dot attrs.i flag
// Dot attrs.i flag, set only by the pipelining policy on a wgmma dot whose accumulator is carried
// from one iteration of a copy_bulk pipeline to the next: the pipeline refills a stage one
// iteration later than it otherwise would (ir/pipeline.h), so codegen may leave the dot's wgmma
// group in flight until the next iteration's dot (or the end of the loop). Semantics unchanged.
constexpr int64_t kDotWgmmaInFlight = 2;
// If attrs.i flag, set only by the pipelining policy on the per-iteration copies of a
// warp-specialized copy_bulk pipeline (`pipelined(n, stages=S, specialize=True)`): the If holds
// nothing but mbarrier waits for a free stage and the copies into it, so codegen may run it on
// a producer warp of its own instead of on the block (ir/pipeline.h).
constexpr int64_t kIfProducer = 1;
// For attrs.ints[0] flag: the pipelined loop asked for warp specialization (specialize=True).
constexpr int64_t kForSpecialize = 1;
// Barrier attrs.i flag, set only by the pipelining policy on the barrier after a pipeline's
// mbarrier_init ops: in a warp-specialized kernel the producer warpgroup takes part in it (it
// must see the barriers initialized), while it skips every other barrier. Semantics unchanged.
constexpr int64_t kBarrierAfterMbarrierInit = 1;
// CopyBulk attrs.i flag: copy_bulk(dst, src, multicast=True) in a kernel of clusters
// (Function::clusterSize = C > 1). Every block of a cluster copies the same tile (ir/cluster.h
// proves it), so codegen has each issue 1/C of the tile's rows (its leading axis) and TMA
// multicasts them into every block's buffer, completing their bytes on the same mbarrier of
// each. What each block sees is unchanged: the whole tile lands in dst, its bytes complete
// on (bars, index).
constexpr int64_t kCopyMulticast = 1;
// MbarrierInit and MbarrierArrive attrs.ints[0] flag, set only by the pipelining policy on the
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

struct Attrs {
  int64_t i = 0;
  double f = 0.0;
  DType dtype = DType::F32;
  BinaryKind binary = BinaryKind::Add;
  CmpKind cmp = CmpKind::Eq;
  UnaryKind unary = UnaryKind::Neg;
  ReduceKind reduce = ReduceKind::Sum;
  std::vector<int64_t> ints;
  std::vector<std::string> names;  // TagSet, Assert (see there)
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
  std::vector<LaunchExpr> operands;
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
