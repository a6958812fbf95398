// Hopper mbarriers and bulk tensor copies in the block executor (MbarrierInit,
// MbarrierExpectTx, MbarrierArrive, MbarrierWait, CopyBulk; ir/ir.h), modelled
// as PTX defines them and as late as the hardware may complete them:
//
// - An mbarrier counts phases. A phase completes when its expected arrivals
//   are in and its transaction count (bytes announced by expect_tx minus bytes
//   completed by copies) is zero; the phase number then increments.
// - copy_bulk is issued by thread 0: the source is read at issue, the
//   destination slots are "in flight". The TMA unit may complete a copy at any
//   time; the interpreter completes it at the latest moment, when a wait needs
//   it, so that every read of an in-flight slot (which the hardware may serve
//   with the old contents) is reported as a race, like a copy_async read before
//   its wait_group. The writes of a phase land when the phase completes.
// - mbarrier_wait(parity P) returns at once when the current phase's parity is
//   not P (the phase of parity P before it has completed); otherwise the current
//   phase must complete. The whole block waits, so when that phase lacks
//   arrivals or bytes nothing else can supply them: that is a deadlock, reported
//   instead of hanging. A wait makes the landed writes visible to every thread.
// - Transaction bytes that would exceed what expect_tx announced (the count
//   underflows: the phase would complete before the copy lands) are an error.
#include <algorithm>

#include "runtime/interp/executor.h"

namespace argus::interp::detail {

using ir::Op;

namespace {

int64_t bulkBytes(ir::DType dtype, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n * std::max(1, ir::dtypeBits(dtype) / 8);  // TMA counts the whole box, zero fill included
}

std::string plural(int64_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

std::string BlockExecutor::mbarrierName(const Op& op, size_t barsOperand) const {
  const SharedBuffer& buf = shared_[static_cast<size_t>(value(op.operands[barsOperand]).sharedIndex)];
  return "mbarrier " + sharedSlotName(buf, value(op.operands[barsOperand + 1]).scalar.i);
}

Mbarrier& BlockExecutor::mbarrierOf(const Op& op, size_t barsOperand, bool mustBeInitialized) {
  int bars = value(op.operands[barsOperand]).sharedIndex;
  int64_t index = value(op.operands[barsOperand + 1]).scalar.i;
  const SharedBuffer& buf = shared_[static_cast<size_t>(bars)];
  int64_t count = static_cast<int64_t>(buf.slots.size());
  std::vector<Label> allocated = {Label{buf.range, "the mbarriers are allocated here"}};
  if (index < 0 || index >= count)
    fail(DiagId::RunMbarrierIndex, op,
         {ir::opKindName(op.kind), std::to_string(index), buf.name.empty() ? std::string("a buffer") : "'" + buf.name + "'",
          plural(count, "mbarrier")},
         0, std::nullopt, std::move(allocated));
  Mbarrier& bar = mbarriers_[{bars, index}];
  if (mustBeInitialized && !bar.initialized)
    fail(DiagId::RunMbarrierUninitialized, op, {ir::opKindName(op.kind), mbarrierName(op, barsOperand)}, 0,
         std::nullopt, std::move(allocated));
  return bar;
}

void BlockExecutor::execMbarrierInit(const Op& op) {
  Mbarrier& bar = mbarrierOf(op, 0, false);
  if (bar.initialized && (!bar.inFlight.empty() || !bar.completed.empty()))
    fail(DiagId::RunMbarrierReinitialized, op, {mbarrierName(op, 0)}, 0, std::nullopt, {Label{bar.inFlight.empty() ? bar.completed.front().op->range : bar.inFlight.front().op->range,
                                 "this copy_bulk is still in flight"}});
  bar = Mbarrier{};
  bar.initialized = true;
  bar.initOp = &op;
  bar.initEpoch = epoch_;
  bar.expected = ir::MbarrierInitOp(op).arrivals();
}

// Threads other than the initializing thread 0 see the initialization after a barrier.
static void requireVisibleInit(const BlockExecutor& ex, const Op& op, const Mbarrier& bar, uint32_t epoch,
                               const std::string& name) {
  if (bar.initEpoch != epoch) return;
  ex.fail(DiagId::RunMbarrierInitRace, op,
          {ir::opKindName(op.kind), BlockExecutor::describeThread(1), name, BlockExecutor::describeThread(0)}, 1, 0, {Label{bar.initOp->range, "the mbarrier is initialized here"}});
}

void BlockExecutor::execMbarrierExpectTx(const Op& op) {
  Mbarrier& bar = mbarrierOf(op, 0, true);
  const int64_t bytes = ir::MbarrierExpectTxOp(op).bytes();
  bar.txPending += bytes;
  bar.txAnnounced += bytes;
  bar.expectOp = &op;
  arriveOn(op, bar, 1, 0);
}

void BlockExecutor::execMbarrierArrive(const Op& op) {
  Mbarrier& bar = mbarrierOf(op, 0, true);
  requireVisibleInit(*this, op, bar, epoch_, mbarrierName(op, 0));
  arriveOn(op, bar, numThreads_, 0);
}

void BlockExecutor::arriveOn(const Op& op, Mbarrier& bar, int64_t count, int64_t firstThread) {
  for (int64_t t = firstThread; t < firstThread + count; ++t) {
    if (bar.arrivals >= bar.expected)
      fail(DiagId::RunMbarrierArrivalOverflow, op,
           {describeThread(t), mbarrierName(op, 0), std::to_string(bar.phase), plural(bar.expected, "expected arrival"),
            plural(bar.txPending, "transaction byte")},
           t, std::nullopt, {Label{bar.initOp->range, "the mbarrier is initialized here"}});
    ++bar.arrivals;
    if (bar.arrivals == bar.expected && bar.txPending == 0) completePhase(bar);
  }
  // Copies issued before the arrival that completed the expected count may already exceed its bytes.
  if (bar.arrivals == bar.expected && !bar.inFlight.empty()) {
    int64_t inFlight = 0;
    for (const BulkCopy& c : bar.inFlight) inFlight += c.bytes;
    if (inFlight > bar.txPending)
      fail(DiagId::RunMbarrierTxUnderflow, op,
           {mbarrierName(op, 0), plural(inFlight, "byte"), std::to_string(bar.phase),
            plural(bar.txPending, "transaction byte")},
           firstThread, std::nullopt, {Label{bar.inFlight.front().op->range, "a copy_bulk is issued here"}});
  }
}

void BlockExecutor::completePhase(Mbarrier& bar) {
  for (const BulkCopy& copy : bar.completed) landBulkCopy(copy);
  bar.completed.clear();
  ++bar.phase;
  bar.arrivals = 0;
  bar.txPending = 0;
  bar.txAnnounced = 0;
  bar.expectOp = nullptr;
}

// The wait that lands the copy makes it visible to every thread (all of them
// wait), so the landed slot conflicts with no thread of this epoch.
void BlockExecutor::landBulkCopy(const BulkCopy& copy) {
  for (const AsyncWrite& w : copy.writes) {
    SharedBuffer& buf = shared_[static_cast<size_t>(w.sharedIndex)];
    SharedBuffer::Slot& slot = buf.slots[static_cast<size_t>(w.linear)];
    if (slot.bulkPending > 0) --slot.bulkPending;
    slot.writeEpoch = 0;
    slot.writer = -1;
    slot.written = true;
    slot.writeOp = w.op;
    slot.asyncLanded = false;
    size_t width = static_cast<size_t>(num::storageBytes(buf.dtype));
    for (size_t b = 0; b < width; ++b)
      buf.bytes[static_cast<size_t>(w.linear) * width + b] = static_cast<uint8_t>(w.bits >> (8 * b));
  }
}

void BlockExecutor::execMbarrierWait(const Op& op) {
  Mbarrier& bar = mbarrierOf(op, 0, true);
  const std::string name = mbarrierName(op, 0);
  requireVisibleInit(*this, op, bar, epoch_, name);
  int64_t parity = value(ir::MbarrierWaitOp(op).parity()).scalar.i;
  if (parity != 0 && parity != 1)
    fail(DiagId::RunMbarrierParity, op, {name, std::to_string(parity)});
  if ((bar.phase & 1) != parity) {  // the phase of this parity before the current one has completed
    // A phase that every thread arrived on is a barrier split in two: whatever a thread did
    // before its arrival happens before whatever any thread does after this wait (the
    // pipelines' free-stage barriers: a stage is refilled only after all its reads).
    if (bar.expected == numThreads_) ++epoch_;
    return;
  }

  std::vector<Label> labels;
  if (bar.expectOp) labels.push_back(Label{bar.expectOp->range, "the phase's transaction bytes are announced here"});
  labels.push_back(Label{bar.initOp->range, "the mbarrier is initialized here"});
  const std::string earlier =
      bar.phase > 0 ? " (phase " + std::to_string(bar.phase - 1) + " has completed: waiting for it takes parity " +
                          std::to_string(1 - parity) + ")"
                    : "";
  if (bar.arrivals < bar.expected)
    fail(DiagId::RunTimeFault, op,
         {std::to_string(parity), name, std::to_string(bar.phase), std::to_string(bar.arrivals),
          plural(bar.expected, "expected arrival"), earlier},
         std::nullopt, std::nullopt, std::move(labels));
  int64_t delivered = 0;
  for (const BulkCopy& c : bar.completed) delivered += c.bytes;
  while (bar.txPending > 0 && !bar.inFlight.empty()) {
    BulkCopy& next = bar.inFlight.front();
    if (next.bytes > bar.txPending) {
      int64_t inFlight = 0;
      for (const BulkCopy& c : bar.inFlight) inFlight += c.bytes;
      fail(DiagId::RunMbarrierTxUnderflow, op,
           {name, plural(inFlight, "byte"), std::to_string(bar.phase),
            plural(bar.txPending, "more transaction byte") + " of the " + std::to_string(bar.txAnnounced) +
                " announced"},
           std::nullopt, std::nullopt, {Label{next.op->range, "a copy_bulk is issued here"}});
    }
    bar.txPending -= next.bytes;
    delivered += next.bytes;
    bar.completed.push_back(std::move(next));
    bar.inFlight.erase(bar.inFlight.begin());
  }
  if (bar.txPending == 0) return completePhase(bar);
  fail(DiagId::RunMbarrierTxDeadlock, op,
       {std::to_string(parity), name, std::to_string(bar.phase), plural(bar.txAnnounced, "transaction byte"),
        plural(delivered, "byte"), earlier},
       std::nullopt, std::nullopt, std::move(labels));
}

void BlockExecutor::execCopyBulk(const Op& op) {
  const ir::CopyBulkOp bulk(op);
  if (op.operands.size() < 4)
    fail(DiagId::RunInvalidIR, op,
         {"this copy_bulk reached the interpreter without the mbarrier it completes on; the compiler must lower its "
          "pipelined loop first"});
  Mbarrier& bar = mbarrierOf(op, 2, true);
  const ViewValue& dst = value(bulk.dst()).view;
  const ViewValue& src = value(bulk.src()).view;
  SharedBuffer& buf = shared_[static_cast<size_t>(dst.sharedIndex)];
  const int bars = value(bulk.bars()).sharedIndex;
  const int64_t index = value(bulk.index()).scalar.i;
  const int64_t issuer = 0;  // one thread issues the whole copy
  BulkCopy copy;
  copy.op = &op;
  copy.bytes = bulkBytes(dst.dtype, dst.shape);
  const size_t rank = dst.shape.size();
  std::vector<int64_t> c(rank, 0);
  int64_t total = 1;
  for (int64_t e : dst.shape) total *= e;
  for (int64_t n = 0; n < total; ++n) {
    int64_t rest = n;
    for (size_t d = rank; d-- > 0;) {
      c[d] = rest % dst.shape[d];
      rest /= dst.shape[d];
    }
    int64_t to = 0, from = 0;
    if (!baseIndex(dst, c.data(), to)) sharedOutOfBounds(op, dst, c.data(), issuer);
    SharedBuffer::Slot& slot = buf.slots[static_cast<size_t>(to)];
    checkAsyncOverwrite(op, buf, slot, to, issuer);
    checkBulkAccess(op, buf, slot, to, issuer, true);
    if (slot.writeEpoch == epoch_ && slot.writer >= 0 && slot.writer != issuer)
      fail(DiagId::RunCopyAfterWriteRace, op,
           {sharedSlotName(buf, to), "copy_bulk", describeThread(issuer), describeThread(slot.writer)}, issuer,
           slot.writer, {Label{slot.writeOp ? slot.writeOp->range : buf.range, "the other write happens here"}});
    checkOverwriteWhileRead(op, buf, slot, to, issuer, "copy_bulk");
    uint64_t bits = baseIndex(src, c.data(), from) ? src.tensor->getBits(static_cast<size_t>(from)) : 0;
    copy.writes.push_back(AsyncWrite{dst.sharedIndex, to, bits, &op});
    ++slot.bulkPending;
    slot.bulkOp = &op;
    slot.bulkBars = bars;
    slot.bulkIndex = index;
    slot.bulkPhase = bar.phase;
  }
  int64_t inFlight = copy.bytes;
  for (const BulkCopy& other : bar.inFlight) inFlight += other.bytes;
  bar.inFlight.push_back(std::move(copy));
  // With every arrival of the phase in, nothing can add transaction bytes before these copies complete.
  if (bar.arrivals == bar.expected && inFlight > bar.txPending)
    fail(DiagId::RunMbarrierTxUnderflow, op,
         {mbarrierName(op, 2), plural(inFlight, "byte"), std::to_string(bar.phase),
          plural(bar.txPending, "transaction byte")},
         issuer, std::nullopt,
         bar.expectOp ? std::vector<Label>{Label{bar.expectOp->range, "the transaction bytes are announced here"}}
                      : std::vector<Label>{});
}

// The block's shared memory is released when it ends; a TMA copy still writing
// into it then corrupts the shared memory of the next block on the SM.
void BlockExecutor::finishBulkCopies() {
  for (const auto& [key, bar] : mbarriers_) {
    const BulkCopy* copy = !bar.inFlight.empty() ? &bar.inFlight.front() : !bar.completed.empty() ? &bar.completed.front() : nullptr;
    if (!copy) continue;
    const SharedBuffer& bars = shared_[static_cast<size_t>(key.first)];
    fail(DiagId::RunBulkCopyAtBlockEnd, *copy->op, {std::to_string(bar.phase), sharedSlotName(bars, key.second)}, 0);
  }
}

void BlockExecutor::checkBulkAccess(const Op& op, const SharedBuffer& buf, const SharedBuffer::Slot& slot,
                                    int64_t linear, int64_t thread, bool write) const {
  if (slot.bulkPending == 0) return;
  std::string bars = "mbarrier";
  std::string wait = "mbarrier_wait";
  if (slot.bulkBars >= 0 && static_cast<size_t>(slot.bulkBars) < shared_.size()) {
    const SharedBuffer& barsBuf = shared_[static_cast<size_t>(slot.bulkBars)];
    std::string barsName = barsBuf.name.empty() ? std::string("shared") : barsBuf.name;
    bars = "mbarrier " + sharedSlotName(barsBuf, slot.bulkIndex);
    wait = "mbarrier_wait(" + barsName + ", " + std::to_string(slot.bulkIndex) + ", parity " +
           std::to_string(slot.bulkPhase & 1) + ")";
  }
  std::vector<Label> at = {Label{slot.bulkOp ? slot.bulkOp->range : buf.range, "the copy_bulk is issued here"}};
  fail(write ? DiagId::RunWriteOverBulkCopy : DiagId::RunBulkCopyPendingRead, op,
       {sharedSlotName(buf, linear), describeThread(thread), std::to_string(slot.bulkPhase), bars, wait}, thread,
       std::nullopt, std::move(at));
}

}  // namespace argus::interp::detail
