// Internal to the interpreter: runs the ops of one block with its threads
// simulated. Faults are thrown as `Fault` and caught by run() (interpreter.cpp);
// nothing is thrown out of the library.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/ops.h"
#include "runtime/interp/interpreter.h"
#include "runtime/interp/numeric.h"

namespace argus::interp::detail {

struct Fault {
  RunError error;
};

// Precomputed distribution of one tile layout: coordinates of every
// (thread, value) and who is a primary owner.
struct TileMap {
  ir::Distribution dist;
  std::vector<int64_t> shape;        // the layout's tile shape
  int64_t valuesPerThread = 1;
  int64_t numThreads = 0;
  std::vector<int64_t> coords;       // [(t * vpt + v) * rank + d]
  std::vector<int64_t> linear;       // row-major index of (t, v)'s element in `shape`
  std::vector<char> primary;         // per thread
  size_t rank() const { return shape.size(); }
  const int64_t* coord(int64_t t, int64_t v) const {
    return coords.data() + static_cast<size_t>((t * valuesPerThread + v) * static_cast<int64_t>(rank()));
  }
};

class LayoutCache {
 public:
  explicit LayoutCache(int64_t numWarps) : numWarps_(numWarps) {}
  const TileMap& get(const ir::Layout& layout);

 private:
  int64_t numWarps_;
  std::map<std::string, std::unique_ptr<TileMap>> maps_;  // by ir::layoutStr
};

// Shared memory of one AllocShared, with per-element access history for race checks.
struct SharedBuffer {
  struct Slot {
    uint32_t writeEpoch = 0, readEpoch = 0;  // epochs of the latest write / reads
    int32_t writer = -1;                     // thread of the latest write
    int32_t reader = -1, otherReader = -1;   // two distinct readers in readEpoch
    bool written = false;
    const ir::Op* writeOp = nullptr;
    // Asynchronous copies (async_copies.cpp): in-flight writes to this slot, and
    // whether the latest write landed from a copy_async (for the race message).
    uint32_t asyncPending = 0;
    int32_t asyncIssuer = -1;
    const ir::Op* asyncOp = nullptr;
    bool asyncLanded = false;
    // Bulk copies (bulk_copies.cpp): a copy_bulk writing this slot that has not
    // landed yet, and the mbarrier phase it completes (for the race message).
    uint32_t bulkPending = 0;
    const ir::Op* bulkOp = nullptr;
    int32_t bulkBars = -1;       // shared buffer of the mbarrier
    int64_t bulkIndex = 0;       // mbarrier index in it
    int64_t bulkPhase = 0;       // the barrier's phase when the copy was issued
  };
  ir::DType dtype = ir::DType::F32;
  std::vector<int64_t> shape;
  std::string name;
  SourceRange range;
  const ir::Op* allocOp = nullptr;
  std::vector<uint8_t> bytes;
  std::vector<Slot> slots;
};

// "a_s[1, 2]": an element of a shared buffer by its row-major index.
std::string sharedSlotName(const SharedBuffer& buf, int64_t linear);

struct ViewValue {
  bool shared = false;
  HostTensor* tensor = nullptr;  // global
  int sharedIndex = -1;          // shared
  std::vector<int64_t> baseShape;
  std::vector<int64_t> origin;   // one offset per base dimension
  std::vector<int64_t> shape;    // the view's tile shape (trailing base dims)
  ir::DType dtype = ir::DType::F32;
};

struct RtValue {
  ir::TypeKind kind = ir::TypeKind::Void;
  Elem scalar;
  std::vector<Elem> tile;  // [thread * valuesPerThread + value]
  HostTensor* tensor = nullptr;
  int sharedIndex = -1;
  ViewValue view;
};

// One element of a copy_async in flight: where it lands and what it writes
// (the source is read when the copy is issued; zero past the tensor's edge).
struct AsyncWrite {
  int sharedIndex = -1;
  int64_t linear = 0;
  uint64_t bits = 0;
  const ir::Op* op = nullptr;
};

// A thread's copy_async groups: the open one and the committed, oldest first.
struct AsyncQueue {
  std::vector<AsyncWrite> open;
  std::vector<std::vector<AsyncWrite>> committed;
};

// A copy_bulk in flight: its writes (source read at issue, zero past the
// tensor's edge) and the transaction bytes it completes on its mbarrier.
struct BulkCopy {
  const ir::Op* op = nullptr;
  int64_t bytes = 0;
  std::vector<AsyncWrite> writes;
};

// The state of one mbarrier (a (bars, index) pair), as PTX defines it.
struct Mbarrier {
  bool initialized = false;
  const ir::Op* initOp = nullptr;
  uint32_t initEpoch = 0;
  int64_t expected = 0;       // arrivals per phase
  int64_t arrivals = 0;       // in the current phase
  int64_t txPending = 0;      // bytes announced by expect_tx minus bytes completed, this phase
  int64_t txAnnounced = 0;    // bytes announced this phase (for messages)
  int64_t phase = 0;          // the current (incomplete) phase
  const ir::Op* expectOp = nullptr;     // the latest expect_tx of this phase
  std::vector<BulkCopy> inFlight;       // issued, not yet completed; issue order
  std::vector<BulkCopy> completed;      // completed on the current phase; land when it completes
};

struct BlockContext {
  std::array<int64_t, 3> blockId{0, 0, 0};
  std::array<int64_t, 3> grid{1, 1, 1};
  int64_t linearBlock = 0;
};

class BlockExecutor {
 public:
  BlockExecutor(const ir::Function& fn, const RunOptions& opts, LayoutCache& layouts, BlockContext ctx);
  // Runs the body with the body arguments bound to `params`; throws Fault.
  void run(const std::vector<RtValue>& params);

 private:
  const ir::Function& fn_;
  const RunOptions& opts_;
  LayoutCache& layouts_;
  BlockContext ctx_;
  int64_t numThreads_;
  std::vector<RtValue> values_;
  std::vector<SharedBuffer> shared_;
  std::vector<RtValue> yielded_;
  uint32_t epoch_ = 1;
  uint64_t opsExecuted_ = 0;

  // structure (executor.cpp)
  void execBlock(const ir::Block& block);
  void exec(const ir::Op& op);
  void execFor(const ir::Op& op);
  void execIf(const ir::Op& op);
  // compute (executor.cpp)
  void execElementwise(const ir::Op& op);
  void execReduce(const ir::Op& op);
  void execBroadcast(const ir::Op& op);
  std::vector<Elem> gather(const RtValue& v, const ir::Type& t);
  RtValue scatter(const std::vector<Elem>& logical, const ir::Type& t);
  // memory (executor_memory.cpp)
  void execAllocShared(const ir::Op& op);
  void execView(const ir::Op& op);
  void execLoad(const ir::Op& op);
  void execStore(const ir::Op& op);
  void execDot(const ir::Op& op);
  // asynchronous copies (async_copies.cpp)
  std::vector<AsyncQueue> asyncQueues_;  // per thread
  void execCopyAsync(const ir::Op& op);
  void execCommitGroup();
  void execWaitGroup(const ir::Op& op);
  void applyAsyncWrites(int64_t thread, const std::vector<AsyncWrite>& writes);
  void finishAsyncCopies();  // at the end of the kernel: every copy still in flight lands
  // Faults for accesses to a slot a copy_async is writing (none when it is not).
  void checkAsyncRead(const ir::Op& op, const SharedBuffer& buf, const SharedBuffer::Slot& slot, int64_t linear,
                      int64_t thread) const;
  void checkAsyncOverwrite(const ir::Op& op, const SharedBuffer& buf, const SharedBuffer::Slot& slot, int64_t linear,
                           int64_t thread) const;
  // Hopper mbarriers and bulk copies (bulk_copies.cpp)
  std::map<std::pair<int, int64_t>, Mbarrier> mbarriers_;  // by (bars buffer, index)
  Mbarrier& mbarrierOf(const ir::Op& op, size_t barsOperand, bool mustBeInitialized);
  std::string mbarrierName(const ir::Op& op, size_t barsOperand) const;
  void execMbarrierInit(const ir::Op& op);
  void execMbarrierExpectTx(const ir::Op& op);
  void execMbarrierArrive(const ir::Op& op);
  void execMbarrierWait(const ir::Op& op);
  void execCopyBulk(const ir::Op& op);
  // `count` arrivals of `thread` (-1: every thread, one each) on the current phase.
  void arriveOn(const ir::Op& op, Mbarrier& bar, int64_t count, int64_t firstThread);
  void completePhase(Mbarrier& bar);
  void finishBulkCopies();  // at the end of the kernel: a copy still in flight is an error
  void landBulkCopy(const BulkCopy& copy);
  // Faults for accesses to a slot a copy_bulk is writing (none when it is not).
  void checkBulkAccess(const ir::Op& op, const SharedBuffer& buf, const SharedBuffer::Slot& slot, int64_t linear,
                       int64_t thread, bool write) const;
  // Fault when a thread other than `thread` read the slot since the last barrier: `thread`
  // overwrites it with a plain write (`copy` null) or with the copy `copy` names ("copy_async").
  void checkOverwriteWhileRead(const ir::Op& op, const SharedBuffer& buf, const SharedBuffer::Slot& slot,
                               int64_t linear, int64_t thread, const char* copy) const;
  // Base-buffer coordinate of view element `c`; false when outside the base.
  bool baseIndex(const ViewValue& view, const int64_t* c, int64_t& linear) const;
  Elem readShared(const ir::Op& op, const ViewValue& view, const int64_t* c, int64_t thread);
  void writeShared(const ir::Op& op, const ViewValue& view, const int64_t* c, int64_t thread, const Elem& e);
  [[noreturn]] void sharedOutOfBounds(const ir::Op& op, const ViewValue& view, const int64_t* c, int64_t thread);

 public:
  // helpers shared by the files of the executor
  const RtValue& value(ir::ValueId id) const { return values_[id]; }
  const ir::Type& typeOf(ir::ValueId id) const { return fn_.values[id].type; }
  // Throws the fault `id` at `op`, its message the format of `id` with `args`.
  [[noreturn]] void fail(DiagId id, const ir::Op& op, std::vector<std::string> args,
                         std::optional<int64_t> thread = std::nullopt, std::optional<int64_t> otherThread = std::nullopt,
                         std::vector<Label> labels = {}) const;
  static std::string describeThread(int64_t thread);
  static std::string describeCoord(const int64_t* c, size_t rank);
};

}  // namespace argus::interp::detail
