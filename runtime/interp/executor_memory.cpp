// Memory ops of the block executor: shared buffers, views, per-thread loads and
// stores, dot, and the shared-memory race checks.
//
// Race model: Barrier starts a new epoch. Within one epoch, a slot written by
// one thread may be read or written by no other thread, and a slot read by one
// thread may be written by no other thread (the missing barrier between the
// reads of one iteration and the writes of the next).
#include <algorithm>
#include <cmath>

#include "runtime/interp/executor.h"

namespace argus::interp::detail {

using ir::Op;
using ir::Type;

void BlockExecutor::execAllocShared(const Op& op) {
  const Type& t = typeOf(op.results[0]);
  SharedBuffer buf;
  buf.dtype = t.dtype;
  buf.shape = t.shape;
  buf.name = fn_.values[op.results[0]].name;
  buf.range = op.range;
  buf.allocOp = &op;
  size_t n = static_cast<size_t>(t.numElements());
  buf.bytes.assign(n * static_cast<size_t>(num::storageBytes(t.dtype)), 0);
  buf.slots.assign(n, SharedBuffer::Slot{});
  RtValue& r = values_[op.results[0]];
  r.kind = ir::TypeKind::Shared;
  // AllocShared inside a loop reuses its buffer: shared memory is static.
  for (size_t i = 0; i < shared_.size(); ++i)
    if (shared_[i].allocOp == &op) {
      r.sharedIndex = static_cast<int>(i);
      return;
    }
  shared_.push_back(std::move(buf));
  r.sharedIndex = static_cast<int>(shared_.size() - 1);
}

void BlockExecutor::execView(const Op& op) {
  const ir::ViewOp view(op);
  const RtValue& base = value(view.base());
  const Type& baseType = typeOf(view.base());
  const Type& t = typeOf(op.results[0]);
  RtValue r;
  r.kind = ir::TypeKind::View;
  ViewValue& v = r.view;
  v.shared = baseType.kind == ir::TypeKind::Shared;
  v.dtype = t.dtype;
  v.shape = t.shape;
  if (v.shared) {
    v.sharedIndex = base.sharedIndex;
    v.baseShape = shared_[static_cast<size_t>(base.sharedIndex)].shape;
  } else {
    v.tensor = base.tensor;
    v.baseShape = base.tensor->shape;
  }
  for (size_t i = 1; i < op.operands.size(); ++i) v.origin.push_back(value(op.operands[i]).scalar.i);
  values_[op.results[0]] = std::move(r);
}

bool BlockExecutor::baseIndex(const ViewValue& view, const int64_t* c, int64_t& linear) const {
  size_t r = view.baseShape.size(), k = view.shape.size();
  linear = 0;
  for (size_t d = 0; d < r; ++d) {
    int64_t x = view.origin[d] + (d >= r - k ? c[d - (r - k)] : 0);
    if (x < 0 || x >= view.baseShape[d]) return false;
    linear = linear * view.baseShape[d] + x;
  }
  return true;
}

void BlockExecutor::sharedOutOfBounds(const Op& op, const ViewValue& view, const int64_t* c, int64_t thread) {
  const SharedBuffer& buf = shared_[static_cast<size_t>(view.sharedIndex)];
  size_t r = view.baseShape.size(), k = view.shape.size();
  std::vector<int64_t> at(r);
  for (size_t d = 0; d < r; ++d) at[d] = view.origin[d] + (d >= r - k ? c[d - (r - k)] : 0);
  std::string name = buf.name.empty() ? "a shared buffer" : "shared buffer '" + buf.name + "'";
  fail(DiagId::RunSharedOutOfBounds, op,
       {ir::opKindName(op.kind), describeCoord(view.origin.data(), r), describeCoord(at.data(), r), name,
        describeCoord(buf.shape.data(), buf.shape.size()), describeThread(thread), describeCoord(c, k)},
       thread, std::nullopt, {Label{buf.range, "the buffer is allocated here"}});
}

std::string sharedSlotName(const SharedBuffer& buf, int64_t linear) {
  std::vector<int64_t> c(buf.shape.size());
  for (size_t d = buf.shape.size(); d-- > 0;) {
    c[d] = linear % buf.shape[d];
    linear /= buf.shape[d];
  }
  std::string s = (buf.name.empty() ? std::string("shared") : buf.name) + "[";
  for (size_t d = 0; d < c.size(); ++d) s += (d ? ", " : "") + std::to_string(c[d]);
  return s + "]";
}

namespace {
std::string slotName(const SharedBuffer& buf, int64_t linear) { return sharedSlotName(buf, linear); }
}  // namespace

Elem BlockExecutor::readShared(const Op& op, const ViewValue& view, const int64_t* c, int64_t thread) {
  int64_t linear = 0;
  if (!baseIndex(view, c, linear)) sharedOutOfBounds(op, view, c, thread);
  SharedBuffer& buf = shared_[static_cast<size_t>(view.sharedIndex)];
  SharedBuffer::Slot& slot = buf.slots[static_cast<size_t>(linear)];
  checkAsyncRead(op, buf, slot, linear, thread);  // a copy in flight explains an unwritten slot best
  checkBulkAccess(op, buf, slot, linear, thread, false);
  if (!slot.written && opts_.checkUninitializedShared)
    fail(DiagId::RunUninitializedShared, op, {describeThread(thread), slotName(buf, linear)}, thread, std::nullopt,
         {Label{buf.range, "the buffer is allocated here"}});
  if (slot.writeEpoch == epoch_ && slot.writer != thread)
    fail(DiagId::RunSharedRace, op, {slotName(buf, linear), describeThread(thread), describeThread(slot.writer)},
         thread, slot.writer, {Label{slot.writeOp ? slot.writeOp->range : buf.range, "the write happens here"}});
  int32_t t = static_cast<int32_t>(thread);
  if (slot.readEpoch != epoch_) {
    slot.readEpoch = epoch_;
    slot.reader = t;
    slot.otherReader = -1;
  } else if (slot.reader != t && slot.otherReader < 0) {
    slot.otherReader = t;
  }
  size_t width = static_cast<size_t>(num::storageBytes(buf.dtype));
  uint64_t bits = 0;
  for (size_t b = 0; b < width; ++b) bits |= static_cast<uint64_t>(buf.bytes[static_cast<size_t>(linear) * width + b]) << (8 * b);
  return num::decode(buf.dtype, bits);
}

void BlockExecutor::checkOverwriteWhileRead(const Op& op, const SharedBuffer& buf, const SharedBuffer::Slot& slot,
                                            int64_t linear, int64_t thread, const char* copy) const {
  if (slot.readEpoch != epoch_) return;
  int32_t other = slot.reader != thread ? slot.reader : slot.otherReader;
  if (other < 0) return;
  if (copy)
    fail(DiagId::RunCopyAfterReadRace, op, {slotName(buf, linear), copy, describeThread(thread), describeThread(other)},
         thread, other);
  fail(DiagId::RunWriteAfterReadRace, op, {slotName(buf, linear), describeThread(thread), describeThread(other)},
       thread, other);
}

void BlockExecutor::writeShared(const Op& op, const ViewValue& view, const int64_t* c, int64_t thread, const Elem& e) {
  int64_t linear = 0;
  if (!baseIndex(view, c, linear)) sharedOutOfBounds(op, view, c, thread);
  SharedBuffer& buf = shared_[static_cast<size_t>(view.sharedIndex)];
  SharedBuffer::Slot& slot = buf.slots[static_cast<size_t>(linear)];
  checkAsyncOverwrite(op, buf, slot, linear, thread);
  checkBulkAccess(op, buf, slot, linear, thread, true);
  std::vector<Label> where = {Label{slot.writeOp ? slot.writeOp->range : buf.range, "the other write happens here"}};
  if (slot.writeEpoch == epoch_ && slot.writer != thread)
    fail(DiagId::RunWriteWriteRace, op, {slotName(buf, linear), describeThread(thread), describeThread(slot.writer)},
         thread, slot.writer, std::move(where));
  checkOverwriteWhileRead(op, buf, slot, linear, thread, nullptr);
  slot.writeEpoch = epoch_;
  slot.writer = static_cast<int32_t>(thread);
  slot.written = true;
  slot.writeOp = &op;
  slot.asyncLanded = false;
  size_t width = static_cast<size_t>(num::storageBytes(buf.dtype));
  uint64_t bits = num::encode(buf.dtype, e);
  for (size_t b = 0; b < width; ++b) buf.bytes[static_cast<size_t>(linear) * width + b] = static_cast<uint8_t>(bits >> (8 * b));
}

void BlockExecutor::execLoad(const Op& op) {
  const ir::LoadOp load(op);
  const ViewValue& view = value(load.view()).view;
  const Type& rt = typeOf(op.results[0]);
  const TileMap& map = layouts_.get(rt.layout);
  Elem other;
  if (op.operands.size() > 1) other = value(load.other()).scalar;
  RtValue r;
  r.kind = ir::TypeKind::Tile;
  r.tile.resize(static_cast<size_t>(numThreads_ * map.valuesPerThread));
  for (int64_t t = 0; t < numThreads_; ++t)
    for (int64_t v = 0; v < map.valuesPerThread; ++v) {
      const int64_t* c = map.coord(t, v);
      Elem& out = r.tile[static_cast<size_t>(t * map.valuesPerThread + v)];
      if (view.shared) {
        out = readShared(op, view, c, t);
        continue;
      }
      int64_t linear = 0;
      out = baseIndex(view, c, linear) ? num::decode(view.dtype, view.tensor->getBits(static_cast<size_t>(linear))) : other;
    }
  values_[op.results[0]] = std::move(r);
}

void BlockExecutor::execStore(const Op& op) {
  const ir::StoreOp store(op);
  const ViewValue& view = value(store.view()).view;
  const RtValue& x = value(store.value());
  const TileMap& map = layouts_.get(typeOf(store.value()).layout);
  for (int64_t t = 0; t < numThreads_; ++t) {
    if (!map.primary[static_cast<size_t>(t)]) continue;  // replicas hold copies; one thread writes
    for (int64_t v = 0; v < map.valuesPerThread; ++v) {
      const int64_t* c = map.coord(t, v);
      const Elem& e = x.tile[static_cast<size_t>(t * map.valuesPerThread + v)];
      if (view.shared) {
        writeShared(op, view, c, t, e);
        continue;
      }
      int64_t linear = 0;
      if (baseIndex(view, c, linear)) view.tensor->setBits(static_cast<size_t>(linear), num::encode(view.dtype, e));
    }
  }
}

// c[m, n] = acc[m, n] + sum over k ascending of f32(a[m, k]) * f32(b[k, n]), one fmaf per step,
// computed by every thread that holds (m, n) of the accumulator. Each thread reads
// the rows of a and the columns of b its accumulator values need (once each).
void BlockExecutor::execDot(const Op& op) {
  const ir::DotOp dot(op);
  const bool registerA = typeOf(dot.a()).isTile();
  const bool transB = ir::DotOp(op).transB();
  const ViewValue& a = value(dot.a()).view;
  const ViewValue& b = value(dot.b()).view;
  const RtValue& acc = value(dot.acc());
  const Type& accType = typeOf(dot.acc());
  const TileMap& map = layouts_.get(accType.layout);
  const int64_t kExtent = registerA ? typeOf(dot.a()).shape[1] : a.shape[1];
  // A register operand: the element (m, k) as its primary owner holds it.
  auto registerElement = [&](int64_t m, int64_t k) {
    const Type& at = typeOf(dot.a());
    const TileMap& amap = layouts_.get(at.layout);
    const RtValue& tile = value(dot.a());
    for (int64_t t = 0; t < numThreads_; ++t) {
      int64_t v = amap.dist.valueIndexOf(t, {m, k});
      if (v >= 0) return num::toDouble(at.dtype, tile.tile[static_cast<size_t>(t * amap.valuesPerThread + v)]);
    }
    return 0.0;
  };
  const size_t kSize = static_cast<size_t>(kExtent);
  RtValue r;
  r.kind = ir::TypeKind::Tile;
  r.tile.resize(acc.tile.size());
  std::vector<int64_t> rows, cols;
  std::vector<float> aRows, bCols;  // [row index * K + k], [col index * K + k]
  for (int64_t t = 0; t < numThreads_; ++t) {
    rows.clear();
    cols.clear();
    for (int64_t v = 0; v < map.valuesPerThread; ++v) {
      const int64_t* mn = map.coord(t, v);
      if (std::find(rows.begin(), rows.end(), mn[0]) == rows.end()) rows.push_back(mn[0]);
      if (std::find(cols.begin(), cols.end(), mn[1]) == cols.end()) cols.push_back(mn[1]);
    }
    aRows.resize(rows.size() * kSize);
    bCols.resize(cols.size() * kSize);
    for (size_t i = 0; i < rows.size(); ++i)
      for (int64_t k = 0; k < kExtent; ++k) {
        int64_t c[2] = {rows[i], k};
        aRows[i * kSize + static_cast<size_t>(k)] = static_cast<float>(
            registerA ? registerElement(rows[i], k) : num::toDouble(a.dtype, readShared(op, a, c, t)));
      }
    for (size_t i = 0; i < cols.size(); ++i)
      for (int64_t k = 0; k < kExtent; ++k) {
        int64_t c[2] = {transB ? cols[i] : k, transB ? k : cols[i]};
        bCols[i * kSize + static_cast<size_t>(k)] = static_cast<float>(num::toDouble(b.dtype, readShared(op, b, c, t)));
      }
    for (int64_t v = 0; v < map.valuesPerThread; ++v) {
      const int64_t* mn = map.coord(t, v);
      const float* x = aRows.data() + static_cast<size_t>(std::find(rows.begin(), rows.end(), mn[0]) - rows.begin()) * kSize;
      const float* y = bCols.data() + static_cast<size_t>(std::find(cols.begin(), cols.end(), mn[1]) - cols.begin()) * kSize;
      size_t slot = static_cast<size_t>(t * map.valuesPerThread + v);
      float sum = static_cast<float>(acc.tile[slot].f);
      for (size_t k = 0; k < kSize; ++k) sum = std::fma(x[k], y[k], sum);
      r.tile[slot].f = num::roundToFloat(accType.dtype, sum);
    }
  }
  values_[op.results[0]] = std::move(r);
}

}  // namespace argus::interp::detail
