// Internal to codegen: lowering of one ir::Function to one NVPTX kernel.
// The implementation is split by topic:
//   kernel.cpp       setup (signature, thread ids, shared memory), op dispatch
//   elementwise.cpp  scalar and elementwise ops, casts
//   math.cpp         exp, log, tanh, erf, sin, cos, pow (NVPTX has no libm)
//   memory.cpp       views, loads, stores, shared buffers, layouts, iota, broadcast
//   reduce.cpp       Reduce, ReduceAll, ConvertLayout (shuffles + shared scratch)
//   dot.cpp          Dot on CUDA cores (FMA)
//   mma.cpp          Dot on tensor cores (ldmatrix + mma.sync)
//   hopper.cpp       sm_90a: mbarriers, TMA copies, wgmma
//   control.cpp      For, If
//   module.cpp       target machine, O3 pipeline, PTX emission, public API
//   ptxas.cpp        assembleCubin
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/fragment_lanes.h"
#include "codegen/thread_layout.h"
#include "ir/bulk.h"
#include "ir/wgmma.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "support/diagnostic.h"

namespace argus::codegen {

// The target as LLVM names it.
struct TargetSpec {
  std::string arch;      // sm_80 | sm_90 | sm_90a
  std::string features;  // "+ptx78" ...
};
bool targetSpecFor(const std::string& arch, TargetSpec& out);

// What an IR value became.
struct Lowered {
  enum class Kind { None, Scalar, Tile, Tensor, Shared, View };
  Kind kind = Kind::None;
  // Scalar: one value. Tile: one per value index of the tile's distribution.
  std::vector<llvm::Value*> values;
  // Tensor, Shared, View: the base array. Extents (i32) and row-major strides (i64) per dimension.
  llvm::Value* base = nullptr;
  std::vector<llvm::Value*> extents, strides;
  // View: which memory, the offset of the view per base dimension (i32), the tile shape.
  ir::MemSpace space = ir::MemSpace::Global;
  std::vector<llvm::Value*> offsets;
  std::vector<int64_t> tileShape;
  ir::Swizzle swizzle;  // shared views: the buffer's physical placement (ir/types.h)
};

// A ThreadLayout plus the values derived from the thread id, emitted once in
// the kernel's entry block.
struct EmittedLayout {
  ThreadLayout map;
  std::vector<llvm::Value*> threadCoord;  // i32 per dimension
  llvm::Value* isOwner = nullptr;         // i1; null when every thread is a primary owner
};

class KernelLowering {
 public:
  KernelLowering(const ir::Function& fn, llvm::Module& module, const std::string& arch,
                 DiagnosticSink& diags);
  // Emits the kernel; false when a diagnostic was reported.
  bool run();

 private:
  // ---- kernel.cpp
  bool planSharedMemory();
  bool planDynamicSharedMemory(const std::vector<std::pair<const ir::Op*, int64_t>>& buffers);
  bool declareKernel();
  bool lowerBlock(const ir::Block& block);
  bool lowerOp(const ir::Op& op);
  // Reports AG5006 for `what`; `hint` (a note) says how to rewrite it.
  bool unsupported(const ir::Op& op, const std::string& what, const std::string& hint = {});
  bool internalError(SourceRange range, const std::string& reason);
  llvm::Value* threadId();
  const EmittedLayout* layoutFor(const ir::Layout& layout, SourceRange range);
  llvm::Value* tidBitsAreZero(uint32_t mask);  // i1, emitted in the entry block
  // Compacts the thread-id bits in `mask` into a small integer (lowest bit first).
  llvm::Value* gatherTidBits(uint32_t mask);
  // Block barrier; withProducer: the producer warpgroup of a specialized kernel takes part too.
  void clusterSync();  // barrier.cluster: every thread of every block of the cluster
  void barrier(bool withProducer = false);

  // ---- elementwise.cpp
  llvm::Type* regType(ir::DType t);  // i1 for bool
  llvm::Type* memType(ir::DType t);  // i8 for bool
  llvm::Value* toMemory(llvm::Value* v, ir::DType t);
  llvm::Value* fromMemory(llvm::Value* v, ir::DType t) { return fromMemoryAt(b_, v, t); }
  llvm::Value* fromMemoryAt(llvm::IRBuilderBase& b, llvm::Value* v, ir::DType t);
  bool dtypeSupported(ir::DType t) const;
  llvm::Value* constant(ir::DType t, int64_t i, double f);
  // Element values of `id` for a result with `count` values (a scalar repeats).
  std::vector<llvm::Value*> elementsOf(ir::ValueId id, size_t count);
  size_t valueCount(const ir::Type& t);
  bool lowerConst(const ir::Op& op);
  bool lowerElementwise(const ir::Op& op);
  llvm::Value* emitBinary(ir::BinaryKind kind, ir::DType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* emitCompare(ir::CmpKind kind, ir::DType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* emitUnary(ir::UnaryKind kind, ir::DType t, llvm::Value* x);
  bool onlyNarrowed(ir::ValueId id);
  llvm::Value* emitFma(ir::DType t, llvm::Value* a, llvm::Value* b, llvm::Value* c);
  llvm::Value* emitCast(ir::DType from, ir::DType to, llvm::Value* x);
  bool narrowsInPairs(const ir::Op& op, ir::DType from, const ir::Type& to) const;
  static llvm::Value* packedHalf(llvm::Value* v, bool* high);
  llvm::Value* widenPackedBf16(llvm::Value* x);
  void narrowPairs(const std::vector<llvm::Value*>& in, ir::DType t, std::vector<llvm::Value*>& out);
  llvm::Value* widenToF32(llvm::Value* x, ir::DType t);
  llvm::Value* narrowFromF32(llvm::Value* x, ir::DType t);
  bool isHalfLike(ir::DType t) const { return t == ir::DType::F16 || t == ir::DType::BF16; }

  // ---- math.cpp (f32 in, f32 out; see the accuracy notes there)
  llvm::Value* mathExp(llvm::Value* x);
  llvm::Value* mathExp2(llvm::Value* x);
  llvm::Value* mathLog(llvm::Value* x);
  llvm::Value* mathLog2(llvm::Value* x);
  llvm::Value* mathTanh(llvm::Value* x);
  llvm::Value* mathErf(llvm::Value* x);
  llvm::Value* mathSinCos(llvm::Value* x, bool cosine);
  llvm::Value* mathPow(llvm::Value* x, llvm::Value* y);
  llvm::Value* logParts(llvm::Value* x, llvm::Value** exponent);  // helper of log/log2
  llvm::Value* f32(double v);
  llvm::Value* poly(llvm::Value* x, std::initializer_list<double> coeffsHighToLow);

  // ---- memory.cpp
  bool lowerSplat(const ir::Op& op);
  bool lowerIota(const ir::Op& op);
  bool lowerBroadcast(const ir::Op& op);
  bool lowerView(const ir::Op& op);
  bool lowerLoad(const ir::Op& op);
  bool lowerStore(const ir::Op& op);
  // Linear element index (i64) of tile coordinate `coord` (i32 per tile dim) in view `view`.
  llvm::Value* viewElementIndex(const Lowered& view, const std::vector<llvm::Value*>& coord);
  // i1: the element at `coord` lies inside the view's base (global views).
  llvm::Value* viewInBounds(const Lowered& view, const std::vector<llvm::Value*>& coord);
  std::vector<llvm::Value*> tileCoord(const EmittedLayout& layout, int64_t v);
  // The address of element `index` (i64, row-major in the whole buffer) of a
  // shared buffer. Applies the buffer's swizzle: every shared-memory access
  // goes through here (or swizzledSharedAddress), so the swizzle is invisible
  // to programs.
  llvm::Value* sharedAddress(llvm::Value* base, ir::DType t, llvm::Value* index);
  // sharedAddress for a shared view: `linearIndex` as viewElementIndex gives it.
  llvm::Value* swizzledSharedAddress(const Lowered& view, ir::DType t, llvm::Value* linearIndex);
  // The swizzle of the shared buffer whose array is `base` (identity for scratch).
  ir::Swizzle swizzleOfBuffer(const llvm::Value* base) const;
  llvm::Value* applySwizzle(const ir::Swizzle& swizzle, llvm::Value* index);
  llvm::Value* placeInPanels(const ir::Swizzle& swizzle, llvm::Value* index);
  llvm::Value* globalAddress(llvm::Value* base, ir::DType t, llvm::Value* index);
  // Predicated global load / store and shared store (inline PTX, as Triton does).
  llvm::Value* predicatedGlobalLoad(llvm::Value* addr, ir::DType t, llvm::Value* pred, llvm::Value* other);
  void predicatedStore(ir::MemSpace space, llvm::Value* addr, ir::DType t, llvm::Value* value,
                       llvm::Value* pred);
  llvm::Value* scratchAddress(ir::DType t, llvm::Value* index);
  bool storesInPairs(const Lowered& view, const ir::Type& tileType) const;
  llvm::Value* tileInside(const Lowered& view);  // i1, uniform: every element of the view is in its tensor
  llvm::Value* tileInsideWithEvenRows(const Lowered& view);
  void emitPairStores(const Lowered& view, const ir::Type& tileType, const EmittedLayout& layout,
                      const std::vector<llvm::Value*>& data);
  // ---- vector_access.cpp (tiles in a vectorized layout, Layout::vec)
  // Elements per global access for a tile of dtype `t` in a layout of `vec` (0: none).
  int64_t vectorAccessElements(ir::DType t, int64_t vec) const;
  // i1, block-uniform: every group of `elements` of the view starts `elements * bytes` aligned.
  llvm::Value* vectorAccessAligned(const Lowered& view, ir::DType t, int64_t elements);
  std::vector<llvm::Value*> vectorGlobalLoad(llvm::Value* addr, ir::DType t, int64_t elements, llvm::Value* pred,
                                             llvm::Value* other);
  void vectorGlobalStore(llvm::Value* addr, ir::DType t, const std::vector<llvm::Value*>& elements, llvm::Value* pred);
  // 8- or 16-bit elements as 32-bit words, little-endian (memory.cpp), and back.
  std::vector<llvm::Value*> packWords(const std::vector<llvm::Value*>& elements, ir::DType t);
  std::vector<llvm::Value*> unpackWords(const std::vector<llvm::Value*>& words, ir::DType t);
  // ---- store_staging.cpp (16-bit mma tiles to global memory through shared slices)
  llvm::Value* tileInsideWithAlignedRows(const Lowered& view);
  llvm::Value* rowsAlignedForTma(const Lowered& view, ir::DType t);
  // With `tensorMap`, each slice goes to global memory by one TMA store.
  void emitStagedStore(const Lowered& view, const ir::Type& tileType, const EmittedLayout& layout,
                       const std::vector<llvm::Value*>& data, llvm::Value* tensorMap = nullptr);
  // The value's bits in memory, as an integer of the dtype's width.
  llvm::Value* toMemoryBits(llvm::Value* v, ir::DType t);
  llvm::Value* packHalfPair(llvm::Value* lo, llvm::Value* hi, ir::DType t);

  // ---- reduce.cpp
  bool lowerReduce(const ir::Op& op);
  bool lowerReduceAll(const ir::Op& op);
  bool lowerConvertLayout(const ir::Op& op);
  llvm::Value* shuffleXor(llvm::Value* v, ir::DType t, int laneMask);
  llvm::Value* combine(ir::ReduceKind kind, ir::DType t, llvm::Value* a, llvm::Value* b);
  // Row-major linear index (i32) of a tile coordinate.
  llvm::Value* linearTileIndex(const std::vector<llvm::Value*>& coord, const std::vector<int64_t>& shape);

  // ---- dot.cpp, mma.cpp
  bool lowerDot(const ir::Op& op);
  bool canUseTensorCores(const ir::Op& op) const;
  std::string tensorCoreProblem(const ir::Op& op) const;
  bool lowerMmaDot(const ir::Op& op);
  // ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16 at this lane's row address.
  llvm::Value* ldmatrix(llvm::Value* sharedPtr, int count, bool transpose);
  // mma.sync.aligned.m16n8k16.row.col.f32.{bf16|f16}: a 4 x b32, b 2 x b32, c 4 x f32 -> d 4 x f32.
  std::vector<llvm::Value*> mmaSync(ir::DType operandType, const std::vector<llvm::Value*>& a,
                                    const std::vector<llvm::Value*>& b, const std::vector<llvm::Value*>& c);
  std::vector<llvm::Value*> registerAFragment(const std::vector<llvm::Value*>& values, ir::DType dtype, int64_t m,
                                             int64_t kb8, int64_t blocks);
  // A sum of bit fields of the lane id (codegen/fragment_lanes.h) as an i32 value.
  llvm::Value* laneFormulaValue(const LaneFormula& formula, llvm::Value* lane);
  // A fragment load's lane-dependent base element, as values and as functions of the thread id.
  struct FragmentLanes {
    llvm::Value* row;
    llvm::Value* col;
    std::function<int64_t(int64_t)> rowOf, colOf;
  };
  llvm::Value* fragmentPtr(const Lowered& view, const ir::Type& viewType, ir::ValueId viewId, const FragmentLanes& lanes,
                           int64_t dr, int64_t dc);
  std::optional<std::vector<int64_t>> wholePeriodStrides(const Lowered& view, ir::ValueId viewId) const;
  llvm::Value* viewOrigin32(const Lowered& view, const std::vector<int64_t>& strides);
  llvm::Value* sharedViewElementPtr(const Lowered& view, const ir::Type& viewType, llvm::Value* row, llvm::Value* col,
                                    ir::ValueId viewId);

  // ---- async_copy.cpp (CopyAsync, CommitGroup, WaitGroup)
  bool lowerCopyAsync(const ir::Op& op);
  bool lowerCommitGroup(const ir::Op& op);
  bool lowerWaitGroup(const ir::Op& op);
  // i1, uniform: cp.async may copy 16-byte (or whole-row) chunks of this copy.
  llvm::Value* asyncCopyAligned(const Lowered& dst, const Lowered& src, ir::DType t, int64_t chunkBytes);
  void emitAsyncChunks(const Lowered& dst, const Lowered& src, ir::DType t, const EmittedLayout& chunks, int64_t vec,
                       bool tileInside);
  // rolled: each chunk's elements as a loop (a path that is rarely taken), else unrolled.
  void emitSyncFallback(const Lowered& dst, const Lowered& src, ir::DType t, const EmittedLayout& chunks, int64_t vec,
                        bool rolled);

  // ---- shared_copy.cpp (copy(shared, global): sema's load + store pair as one vectorized copy)
  bool fusesIntoSharedCopy(const ir::Op& load, const ir::Op& store);
  bool lowerSharedCopy(const ir::Op& load, const ir::Op& store);
  int useCountOf(ir::ValueId id);  // uses of a value in the whole function, counted once

  // ---- hopper.cpp (sm_90a: mbarriers, TMA, wgmma)
  llvm::Value* inlinePtx(llvm::Type* result, const std::string& text, const std::string& constraints,
                         const std::vector<llvm::Value*>& args, bool sideEffects);
  llvm::Value* sharedAddress32(llvm::Value* pointer);
  llvm::Value* mbarrierAddress(ir::ValueId bars, ir::ValueId index);
  void onThreadZero(const std::function<void()>& body);
  bool requireSm90a(const ir::Op& op, const char* what);
  bool lowerMbarrier(const ir::Op& op);
  bool clusterRelease(const ir::Op& op) const;
  bool multicast(const ir::Op& copy) const;
  bool arrivesPerWarp(ir::ValueId bars, int64_t count) const;
  bool needsAsyncProxyFence() const;
  bool lowerCopyBulk(const ir::Op& op);
  llvm::Value* wgmmaDescriptor(llvm::Value* address, const ir::WgmmaDescriptor& descriptor);
  std::string wgmmaOperandProblem(const ir::Op& op, size_t which, ir::WgmmaDescriptor* descriptor) const;
  bool lowerWgmmaDot(const ir::Op& op);
  std::string registerAWgmmaProblem(const ir::Op& op, int* swizzleBytes) const;
  bool lowerRegisterAWgmmaDot(const ir::Op& op, int swizzleBytes);
  std::vector<llvm::Value*> wgmmaWait(int pending, const std::vector<llvm::Value*>& acc);
  bool lowersToWgmma(const ir::Op& dot) const;
  void continueUnwaitedAccumulator(ir::ValueId acc);
  void leaveWgmmaInFlight(ir::ValueId result);
  void retireWgmmaBefore(const ir::Op& op);
  void retireWgmmaThrough(int64_t group);
  // ---- hopper_specialize.cpp (warp-specialized copy_bulk pipelines)
  bool isSpecializedLoop(const ir::Op& op) const;
  bool lowerSpecializedKernel();
  bool producerComputes(const ir::Op& op) const;
  bool lowerProducerBlock(const ir::Block& block);
  bool lowerProducerFor(const ir::Op& op);
  void retireInFlightWgmma(const ir::Op& loop);

  // ---- control.cpp
  bool lowerFor(const ir::Op& op);
  bool lowerIf(const ir::Op& op);
  // The per-value LLVM values a region's Yield passes on, flattened.
  std::vector<llvm::Value*> flatten(const std::vector<ir::ValueId>& ids, bool* ok);
  void unflatten(const std::vector<ir::ValueId>& ids, const std::vector<llvm::Value*>& flat);

  const ir::Function& fn_;
  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  DiagnosticSink& diags_;
  std::string arch_;
  llvm::Function* kernel_ = nullptr;
  llvm::IRBuilder<> b_;      // the current insertion point
  llvm::IRBuilder<> entry_;  // the entry block, before its terminator: thread-id arithmetic
  std::vector<Lowered> values_;
  std::map<std::string, std::unique_ptr<EmittedLayout>> layouts_;  // by ir::layoutStr
  std::map<uint32_t, llvm::Value*> zeroBitTests_;
  llvm::Value* tid_ = nullptr;
  // Static shared memory: one array per AllocShared (in op order) and one scratch array.
  std::map<const ir::Op*, llvm::Value*> sharedBuffers_;  // a global array, or an offset into the dynamic one
  llvm::Value* scratch_ = nullptr;
  int64_t scratchBytes_ = 0;
  // Per-warp slices through which 16-bit mma tiles go to global memory (store_staging.cpp).
  llvm::Value* storeStaging_ = nullptr;
  int64_t stagingBytes_ = 0;
  // TMA descriptors (ir/bulk.h) and their byval kernel parameters, in the same order.
  // Warp specialization: the thread that issues one-thread ops (thread 0, or the producer's
  // first thread), whether the producer ifs are skipped (the block's loop), and whether only
  // the block's own warps run from here on (barriers become a named barrier of theirs).
  std::vector<bool> narrowedOnly_;  // onlyNarrowed(), per value, once computed
  std::vector<int> useCounts_;  // uses of each value, once computed (useCountOf)
  // wgmma dot results whose group is still in flight (hopper.cpp, "Lazy waits"), with the
  // group's number among the wgmma groups committed so far (wgmmaGroups_).
  struct UnwaitedWgmma {
    ir::ValueId id;
    int64_t group;
  };
  std::vector<UnwaitedWgmma> unwaitedWgmma_;
  int64_t wgmmaGroups_ = 0;
  mutable std::optional<bool> asyncProxyFence_;  // needsAsyncProxyFence(), once computed
  uint32_t electedThread_ = 0;
  bool skipProducerIfs_ = false;
  bool consumersOnly_ = false;
  std::vector<ir::TensorMapUse> tensorMaps_;
  std::vector<llvm::Value*> tensorMapArgs_;
};

// Scratch bytes an op needs (0 for most); used to size the scratch array up front.
int64_t scratchBytesFor(const ir::Function& fn, const ir::Op& op);
// Whether `store` writes its 16-bit mma tile to global memory through per-warp shared slices
// (store_staging.cpp; their bytes: storeStagingBytes in codegen.h).
bool stagesStoreThroughShared(const ir::Function& fn, const ir::Op& store, const std::string& arch);
// The slices' alignment (storeStagingOffset). TMA's 128-byte swizzle reads address
// bits 7..9 as the row, so slices must start at a multiple of its 1024-byte period
// for it to match their chunk ^ row % 8.
inline constexpr int64_t kStoreStagingAlignment = 1024;

// 1024 for buffers TMA writes or wgmma reads (their swizzle follows the address), else 16.
int64_t sharedBufferAlignment(const ir::Function& fn, const ir::Op& alloc);
int64_t dtypeBytes(ir::DType t);
inline int64_t alignTo16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

}  // namespace argus::codegen
