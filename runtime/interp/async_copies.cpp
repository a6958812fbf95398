// Asynchronous copies in the block executor (CopyAsync, CommitGroup, WaitGroup;
// ir/ir.h), modelled as the hardware allows them to behave:
//
// - copy_async: each thread issues its chunks (ir/async.h) into its open group.
//   The source is read at issue; the destination slots are "in flight".
// - commit_group closes the open group; wait_group(n) lands the thread's oldest
//   committed groups until at most n are pending. The kernel's end lands all.
// - A read of an in-flight slot, by any thread, is a race (the data may not be
//   there yet). A landed slot is the landing thread's write in the current
//   epoch: another thread may read it only after a barrier (the race check in
//   executor_memory.cpp, with a message that names the copy).
// - A write to an in-flight slot, or a copy into a slot another thread read in
//   this epoch, is a race too.
#include "ir/async.h"
#include "runtime/interp/executor.h"

namespace argus::interp::detail {

using ir::Op;
using ir::Type;

namespace {

// The suggestion for a thread whose write is still in flight: how many of its
// groups may stay pending so that this one lands.
std::string waitAdvice(const AsyncQueue& queue, int sharedIndex, int64_t linear) {
  auto holds = [&](const std::vector<AsyncWrite>& group) {
    for (const AsyncWrite& w : group)
      if (w.sharedIndex == sharedIndex && w.linear == linear) return true;
    return false;
  };
  for (size_t g = 0; g < queue.committed.size(); ++g)
    if (holds(queue.committed[g]))
      return "wait_group(" + std::to_string(queue.committed.size() - 1 - g) + ") and barrier()";
  return "commit_group(), wait_group(0) and barrier()";
}

}  // namespace

void BlockExecutor::checkAsyncRead(const Op& op, const SharedBuffer& buf, const SharedBuffer::Slot& slot,
                                   int64_t linear, int64_t thread) const {
  std::vector<Label> at = {Label{slot.asyncOp ? slot.asyncOp->range : buf.range, "the copy_async is issued here"}};
  if (slot.asyncPending > 0) {
    std::string advice = "wait_group(..) and barrier()";
    if (slot.asyncIssuer >= 0 && static_cast<size_t>(slot.asyncIssuer) < asyncQueues_.size()) {
      int index = static_cast<int>(&buf - shared_.data());
      advice = waitAdvice(asyncQueues_[static_cast<size_t>(slot.asyncIssuer)], index, linear);
    }
    fail(DiagId::RunAsyncCopyPendingRead, op,
         {sharedSlotName(buf, linear), describeThread(thread), describeThread(slot.asyncIssuer), advice}, thread,
         slot.asyncIssuer != thread ? std::optional<int64_t>(slot.asyncIssuer) : std::nullopt, std::move(at));
  }
  if (slot.asyncLanded && slot.writeEpoch == epoch_ && slot.writer != thread)
    fail(DiagId::RunAsyncCopyUnsyncedRead, op,
         {sharedSlotName(buf, linear), describeThread(thread), describeThread(slot.writer)}, thread, slot.writer,
         std::move(at));
}

void BlockExecutor::checkAsyncOverwrite(const Op& op, const SharedBuffer& buf, const SharedBuffer::Slot& slot,
                                        int64_t linear, int64_t thread) const {
  if (slot.asyncPending == 0) return;
  fail(DiagId::RunWriteOverAsyncCopy, op,
       {sharedSlotName(buf, linear), describeThread(thread), describeThread(slot.asyncIssuer)}, thread,
       slot.asyncIssuer,
       {Label{slot.asyncOp ? slot.asyncOp->range : buf.range, "the copy_async is issued here"}});
}

void BlockExecutor::execCopyAsync(const Op& op) {
  const ir::CopyAsyncOp copy(op);
  const ViewValue& dst = value(copy.dst()).view;
  const ViewValue& src = value(copy.src()).view;
  if (asyncQueues_.size() != static_cast<size_t>(numThreads_)) asyncQueues_.resize(static_cast<size_t>(numThreads_));
  const int64_t vec = ir::asyncCopyVectorElements(dst.dtype, dst.shape);
  const TileMap& chunks = layouts_.get(ir::asyncCopyChunkLayout(dst.dtype, dst.shape));
  const size_t rank = dst.shape.size();
  SharedBuffer& buf = shared_[static_cast<size_t>(dst.sharedIndex)];
  std::vector<int64_t> c(rank);
  for (int64_t t = 0; t < numThreads_; ++t) {
    if (!chunks.primary[static_cast<size_t>(t)]) continue;  // replicas copy nothing
    AsyncQueue& queue = asyncQueues_[static_cast<size_t>(t)];
    for (int64_t v = 0; v < chunks.valuesPerThread; ++v) {
      const int64_t* chunk = chunks.coord(t, v);
      for (int64_t e = 0; e < vec; ++e) {
        for (size_t d = 0; d < rank; ++d) c[d] = chunk[d];
        c[rank - 1] = chunk[rank - 1] * vec + e;
        int64_t to = 0, from = 0;
        if (!baseIndex(dst, c.data(), to)) sharedOutOfBounds(op, dst, c.data(), t);
        SharedBuffer::Slot& slot = buf.slots[static_cast<size_t>(to)];
        checkAsyncOverwrite(op, buf, slot, to, t);
        checkBulkAccess(op, buf, slot, to, t, true);
        if (slot.writeEpoch == epoch_ && slot.writer != t)
          fail(DiagId::RunWriteWriteRace, op, {sharedSlotName(buf, to), describeThread(t), describeThread(slot.writer)},
               t, slot.writer, {Label{slot.writeOp ? slot.writeOp->range : buf.range, "the other write happens here"}});
        checkOverwriteWhileRead(op, buf, slot, to, t, "copy_async");
        uint64_t bits = baseIndex(src, c.data(), from) ? src.tensor->getBits(static_cast<size_t>(from)) : 0;
        if (opts_.synchronousCopies) {
          applyAsyncWrites(t, {AsyncWrite{dst.sharedIndex, to, bits, &op}});
          slot.asyncLanded = false;  // a plain write of thread t, now
          continue;
        }
        queue.open.push_back(AsyncWrite{dst.sharedIndex, to, bits, &op});
        ++slot.asyncPending;
        slot.asyncIssuer = static_cast<int32_t>(t);
        slot.asyncOp = &op;
      }
    }
  }
}

void BlockExecutor::execCommitGroup() {
  if (asyncQueues_.size() != static_cast<size_t>(numThreads_)) asyncQueues_.resize(static_cast<size_t>(numThreads_));
  for (AsyncQueue& queue : asyncQueues_) {
    queue.committed.push_back(std::move(queue.open));
    queue.open.clear();
  }
}

void BlockExecutor::execWaitGroup(const Op& op) {
  size_t keep = static_cast<size_t>(std::max<int64_t>(0, ir::WaitGroupOp(op).pending()));
  for (size_t t = 0; t < asyncQueues_.size(); ++t) {
    AsyncQueue& queue = asyncQueues_[t];
    if (queue.committed.size() <= keep) continue;
    size_t landing = queue.committed.size() - keep;
    for (size_t g = 0; g < landing; ++g) applyAsyncWrites(static_cast<int64_t>(t), queue.committed[g]);
    queue.committed.erase(queue.committed.begin(), queue.committed.begin() + static_cast<std::ptrdiff_t>(landing));
  }
}

void BlockExecutor::applyAsyncWrites(int64_t thread, const std::vector<AsyncWrite>& writes) {
  for (const AsyncWrite& w : writes) {
    SharedBuffer& buf = shared_[static_cast<size_t>(w.sharedIndex)];
    SharedBuffer::Slot& slot = buf.slots[static_cast<size_t>(w.linear)];
    if (slot.asyncPending > 0) --slot.asyncPending;
    slot.writeEpoch = epoch_;
    slot.writer = static_cast<int32_t>(thread);
    slot.written = true;
    slot.writeOp = w.op;
    slot.asyncLanded = true;
    size_t width = static_cast<size_t>(num::storageBytes(buf.dtype));
    for (size_t b = 0; b < width; ++b)
      buf.bytes[static_cast<size_t>(w.linear) * width + b] = static_cast<uint8_t>(w.bits >> (8 * b));
  }
}

void BlockExecutor::finishAsyncCopies() {
  for (size_t t = 0; t < asyncQueues_.size(); ++t) {
    AsyncQueue& queue = asyncQueues_[t];
    for (const std::vector<AsyncWrite>& group : queue.committed) applyAsyncWrites(static_cast<int64_t>(t), group);
    applyAsyncWrites(static_cast<int64_t>(t), queue.open);
    queue.committed.clear();
    queue.open.clear();
  }
}

}  // namespace argus::interp::detail
