// Run-time faults: races, out-of-bounds shared accesses, bad arguments, ...
#include <gtest/gtest.h>

#include "runtime/interp/interpreter.h"
#include "tests/unit/interp_kernel_builder.h"

namespace argus::interp {
namespace {

using namespace testing;
using ir::ReduceKind;

std::string describe(const std::optional<RunError>& e) { return e ? e->message : "ok"; }

// Row maxima of a (4, 32) tile go through shared memory: the reduced layout is
// owned by threads 0, 32, 64, 96, but a load of the same view gives row r to
// thread r. Without a barrier that is a race.
std::unique_ptr<ir::Function> makeRowStats(bool withBarrier) {
  KernelBuilder k("rowstats", 4);
  ValueId x = k.tensor("x", DType::F32, {4, 32});
  ValueId out = k.tensor("out", DType::F32, {4, 1});
  k.sizes();
  ValueId zero = k.i32(0);
  ValueId stats = k.alloc("stats", DType::F32, {4, 1}, {100, 105});
  ValueId m = k.reduce(ReduceKind::Max, k.load(k.view(x, {zero, zero}, {4, 32})), 1);
  ValueId view = k.view(stats, {zero, zero}, {4, 1});
  k.store(view, m, {200, 210});
  if (withBarrier) k.barrier();
  ValueId back = k.load(view, std::nullopt, {300, 310});
  k.store(k.view(out, {zero, zero}, {4, 1}), back);
  return std::move(k.fn);
}

TEST(InterpFaults, StoreThenLoadWithoutBarrierIsARace) {
  auto fn = makeRowStats(false);
  ASSERT_EQ(ir::verify(*fn), std::vector<std::string>{});
  HostTensor x = HostTensor::zeros(DType::F32, {4, 32}), out = HostTensor::zeros(DType::F32, {4, 1});
  std::vector<ArgValue> args = {x, out};
  auto error = run(*fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunSharedRace);
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shared-memory race on stats[1, 0]: thread 1 (warp 0, lane 1) reads it after "
            "thread 32 (warp 1, lane 0) wrote it with no barrier() in between");
  EXPECT_EQ(error->arguments,
            (std::vector<std::string>{"stats[1, 0]", "thread 1 (warp 0, lane 1)", "thread 32 (warp 1, lane 0)"}));
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->range, (SourceRange{300, 310}));
  EXPECT_EQ(error->thread, 1);
  EXPECT_EQ(error->otherThread, 32);
  EXPECT_EQ(error->block, 0);
  ASSERT_EQ(error->labels.size(), 1u);
  EXPECT_EQ(error->labels[0].range, (SourceRange{200, 210}));

  Diagnostic d = toDiagnostic(*error);
  EXPECT_STREQ(d.code(), "AG6004");
  EXPECT_EQ(d.arguments, error->arguments);
  ASSERT_TRUE(d.counterexample);
  EXPECT_EQ(d.counterexample->thread, 1);
  EXPECT_EQ(d.counterexample->warp, 0);
  EXPECT_EQ(d.counterexample->lane, 1);
}

TEST(InterpFaults, BarrierMakesItSafe) {
  auto fn = makeRowStats(true);
  HostTensor x = HostTensor::zeros(DType::F32, {4, 32}), out = HostTensor::zeros(DType::F32, {4, 1});
  for (size_t i = 0; i < x.size(); ++i) x.set(i, static_cast<double>((i * 7) % 31));
  std::vector<ArgValue> args = {x, out};
  auto error = run(*fn, args);
  ASSERT_FALSE(error) << describe(error);
  for (size_t r = 0; r < 4; ++r) {
    double want = 0;
    for (size_t c = 0; c < 32; ++c) want = std::max(want, x.get(r * 32 + c));
    EXPECT_EQ(out.get(r), want);
  }
}

TEST(InterpFaults, TwoWritersWithoutBarrier) {
  KernelBuilder k("waw", 4);
  k.sizes();
  ValueId zero = k.i32(0);
  ValueId buf = k.alloc("buf", DType::I32, {128});
  // Canonical (128,) is owned by thread t for element t; (1, 128) reduced on 0 is too,
  // but (128,) written after a shift by one view element is owned by another thread.
  ValueId t = k.iota({128}, 0);
  k.store(k.view(buf, {zero}, {128}), t);
  ValueId small = k.iota({64}, 0);
  k.store(k.view(buf, {k.i32(1)}, {64}), small, {50, 60});
  std::vector<ArgValue> args;
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunWriteWriteRace);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shared-memory race on buf[1]: thread 0 (warp 0, lane 0) and thread 1 (warp 0, lane 1) "
            "both write it with no barrier() in between");
  EXPECT_EQ(error->range, (SourceRange{50, 60}));
}

// Thread t writes buf[t], a barrier, every thread reads buf[0..63] (threads 64..127 are
// replicas), then thread t writes buf[t + 1], which thread t + 1 read, with no barrier.
TEST(InterpFaults, OverwritingWhatAnotherThreadReadIsARace) {
  KernelBuilder k("war", 4);
  k.sizes();
  ValueId zero = k.i32(0);
  ValueId buf = k.alloc("buf", DType::I32, {128});
  k.store(k.view(buf, {zero}, {128}), k.iota({128}, 0));
  k.barrier();
  k.load(k.view(buf, {zero}, {64}));
  k.store(k.view(buf, {k.i32(1)}, {64}), k.iota({64}, 0), {70, 80});
  ASSERT_EQ(ir::verify(*k.fn), std::vector<std::string>{});
  std::vector<ArgValue> args;
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunWriteAfterReadRace);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shared-memory race on buf[1]: thread 0 (warp 0, lane 0) overwrites it while thread 1 "
            "(warp 0, lane 1) may still be reading it; put a barrier() between the reads and this write");
  EXPECT_EQ(error->range, (SourceRange{70, 80}));
  EXPECT_EQ(error->thread, 0);
  EXPECT_EQ(error->otherThread, 1);
}

// copy_async of X (8, 32) f32 into s with one warp: thread 8r' + c' copies the four elements
// (r, 4c'..4c'+3) of rows r = r' and r' + 4 (ir/async.h); a load gives thread t column t.
struct AsyncKernel {
  KernelBuilder k{"async", 1};
  ValueId x, s, zero;
  AsyncKernel() {
    x = k.tensor("X", DType::F32, {8, 32});
    k.sizes();
    zero = k.i32(0);
    s = k.alloc("s", DType::F32, {8, 32}, {10, 20});
  }
  ValueId tile() { return k.view(s, {zero, zero}, {8, 32}); }
  void copyAsync(SourceRange range = {}) { k.b.create(OpKind::CopyAsync, {tile(), k.view(x, {zero, zero}, {8, 32})}, {}, range); }
  void commitGroup() { k.b.create(OpKind::CommitGroup, {}, {}, {}); }
  void waitGroup(int64_t pending) {
    ir::Attrs a;
    argus::ir::WaitGroupAttrs(a).pending(pending);
    k.b.create(OpKind::WaitGroup, {}, {}, {}, a);
  }
  std::optional<RunError> run() {
    EXPECT_EQ(ir::verify(*k.fn), std::vector<std::string>{});
    HostTensor xt = HostTensor::zeros(DType::F32, {8, 32});
    std::vector<ArgValue> args = {xt};
    return interp::run(*k.fn, args);
  }
};

TEST(InterpFaults, ReadBeforeTheAsyncCopyCompletedIsARace) {
  AsyncKernel a;
  a.copyAsync({30, 40});
  a.commitGroup();
  a.k.load(a.tile(), std::nullopt, {50, 60});
  auto error = a.run();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunAsyncCopyPendingRead);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shared-memory race on s[0, 0]: thread 0 (warp 0, lane 0) reads it before the async copy "
            "completed (issued by thread 0 (warp 0, lane 0)): add wait_group(0) and barrier() between the copy_async "
            "and this read");
  EXPECT_EQ(error->range, (SourceRange{50, 60}));
  ASSERT_EQ(error->labels.size(), 1u);
  EXPECT_EQ(error->labels[0].range, (SourceRange{30, 40}));
}

TEST(InterpFaults, ReadOfALandedAsyncCopyWithoutABarrierIsARace) {
  AsyncKernel a;
  a.copyAsync();
  a.commitGroup();
  a.waitGroup(0);
  a.k.load(a.tile());
  auto error = a.run();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunAsyncCopyUnsyncedRead);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shared-memory race on s[1, 0]: thread 0 (warp 0, lane 0) reads it before the async copy "
            "completed for it: the copy landed in thread 8 (warp 0, lane 8)'s wait_group, and no barrier() follows; "
            "add barrier() after the wait_group");
  EXPECT_EQ(error->otherThread, 8);

  AsyncKernel fixed;  // with the barrier
  fixed.copyAsync();
  fixed.commitGroup();
  fixed.waitGroup(0);
  fixed.k.barrier();
  fixed.k.load(fixed.tile());
  auto none = fixed.run();
  EXPECT_FALSE(none) << describe(none);
}

TEST(InterpFaults, WriteIntoAnAsyncCopyInFlightIsARace) {
  AsyncKernel a;
  a.copyAsync();
  a.k.store(a.tile(), a.k.splat(a.k.f32(1), Layout::canonical({8, 32})), {70, 80});
  auto error = a.run();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunWriteOverAsyncCopy);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shared-memory race on s[0, 0]: thread 0 (warp 0, lane 0) writes it while a copy_async "
            "into it (issued by thread 0 (warp 0, lane 0)) is still in flight; add wait_group(..) and barrier() "
            "before this write");
  EXPECT_EQ(error->range, (SourceRange{70, 80}));
}

TEST(InterpFaults, AsyncCopyOverWhatAnotherThreadReadIsARace) {
  AsyncKernel a;
  a.k.store(a.tile(), a.k.splat(a.k.f32(1), Layout::canonical({8, 32})));
  a.k.barrier();
  a.k.load(a.tile());
  a.copyAsync({30, 40});
  auto error = a.run();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunCopyAfterReadRace);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shared-memory race on s[0, 1]: the copy_async of thread 0 (warp 0, lane 0) may overwrite "
            "it while thread 1 (warp 0, lane 1) may still be reading it; put a barrier() between the reads and this "
            "copy_async");
  EXPECT_EQ(error->range, (SourceRange{30, 40}));
}

TEST(InterpFaults, ReplicasReadingWhatOthersWrote) {
  KernelBuilder k("replicas", 4);
  ValueId out = k.tensor("out", DType::I32, {64});
  k.sizes();
  ValueId zero = k.i32(0);
  ValueId buf = k.alloc("buf", DType::I32, {128});
  k.store(k.view(buf, {zero}, {128}), k.iota({128}, 0));
  k.barrier();
  // (64,) over 4 warps: warps 2 and 3 replicate warps 0 and 1, and every thread reads.
  ValueId v = k.load(k.view(buf, {zero}, {64}));
  k.store(k.view(out, {zero}, {64}), v);
  std::vector<ArgValue> ok;
  HostTensor o = HostTensor::zeros(DType::I32, {64});
  ok.push_back(o);
  ASSERT_FALSE(run(*k.fn, ok)) << "with the barrier";
  // Remove the barrier: thread 64 (a replica of thread 0) reads element 0 written by thread 0: fine,
  // but thread 32 reads element 32 written by thread 32 too; element 0 is also read by thread 64.
  // Each element e < 64 is written by thread e and read by e and e + 64: a race for e + 64.
  auto& ops = k.fn->body.ops;
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i]->kind == OpKind::Barrier) {
      ops.erase(ops.begin() + static_cast<long>(i));
      break;
    }
  std::vector<ArgValue> args = {o};
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->thread, 64);
  EXPECT_EQ(error->otherThread, 0);
}

TEST(InterpFaults, OutOfBoundsSharedView) {
  KernelBuilder k("oob", 2);
  k.sizes();
  ValueId buf = k.alloc("buf", DType::F32, {2, 64}, {10, 20});
  ValueId tile = k.splat(k.f32(1), Layout::canonical({64}));
  k.store(k.view(buf, {k.i32(1), k.i32(32)}, {64}), tile, {30, 40});
  std::vector<ArgValue> args;
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunSharedOutOfBounds);
  EXPECT_EQ(error->message,
            "block (0, 0, 0): store of a view at (1, 32) reaches element (1, 64) outside shared buffer 'buf' of shape "
            "(2, 64) (thread 32 (warp 1, lane 0), view element (32))");
  EXPECT_EQ(error->range, (SourceRange{30, 40}));
  ASSERT_EQ(error->labels.size(), 1u);
  EXPECT_EQ(error->labels[0].range, (SourceRange{10, 20}));
}

TEST(InterpFaults, UninitializedSharedRead) {
  KernelBuilder k("uninit", 1);
  k.sizes();
  ValueId buf = k.alloc("buf", DType::F32, {32});
  k.load(k.view(buf, {k.i32(0)}, {32}));
  std::vector<ArgValue> args;
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunUninitializedShared);
  RunOptions lenient;
  lenient.checkUninitializedShared = false;
  EXPECT_FALSE(run(*k.fn, args, lenient));
}

TEST(InterpFaults, IntegerDivisionByZero) {
  KernelBuilder k("div", 1);
  ValueId x = k.tensor("x", DType::I32, {32});
  k.sizes();
  ValueId v = k.load(k.view(x, {k.i32(0)}, {32}));
  k.bin(BinaryKind::Div, k.splat(k.i32(7), Layout::canonical({32})), v);
  HostTensor xt = HostTensor::zeros(DType::I32, {32});
  for (size_t i = 0; i < 32; ++i) xt.setInt(i, i == 5 ? 0 : 3);
  std::vector<ArgValue> args = {xt};
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunDivisionByZero);
  EXPECT_EQ(error->message, "block (0, 0, 0): integer division by zero at element (5) (thread 5 (warp 0, lane 5), value 0)");
  EXPECT_EQ(error->thread, 5);
  EXPECT_FALSE(isSharedRace(error->id));
}

TEST(InterpFaults, ScalarRemainderByZero) {
  KernelBuilder k("rem", 1);
  ValueId n = k.scalar("n", DType::I32);
  k.sizes();
  k.bin(BinaryKind::Rem, k.i32(7), n);
  std::vector<ArgValue> args = {0};
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunDivisionByZero);
  EXPECT_EQ(error->message, "block (0, 0, 0): integer remainder by zero");
  EXPECT_EQ(error->arguments, (std::vector<std::string>{"remainder", ""}));
  EXPECT_FALSE(error->thread);
}

TEST(InterpFaults, ShiftOutOfRangeHasItsOwnCode) {
  KernelBuilder k("shift", 1);
  ValueId x = k.tensor("x", DType::I32, {32});
  k.sizes();
  ValueId v = k.load(k.view(x, {k.i32(0)}, {32}));
  k.bin(BinaryKind::Shl, k.splat(k.i32(1), Layout::canonical({32})), v);
  HostTensor xt = HostTensor::zeros(DType::I32, {32});
  for (size_t i = 0; i < 32; ++i) xt.setInt(i, i == 9 ? 32 : 1);
  std::vector<ArgValue> args = {xt};
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunShiftOutOfRange);
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shift amount 32 is out of range for i32 (0 to 31) at element (9) (thread 9 (warp 0, lane 9), "
            "value 0)");
  EXPECT_EQ(error->thread, 9);
}

TEST(InterpFaults, NonPositiveStepAndOpLimit) {
  KernelBuilder k("loop", 1);
  ValueId step = k.scalar("step", DType::I32);
  k.sizes();
  k.forLoop(k.i32(0), k.i32(1000000), step, {}, [&](ValueId, std::vector<ValueId>) { return std::vector<ValueId>{}; });
  std::vector<ArgValue> args = {0};
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunNonPositiveStep);
  EXPECT_EQ(error->message, "block (0, 0, 0): the loop step is 0; range() needs a positive step");

  std::vector<ArgValue> one = {1};
  RunOptions limited;
  limited.maxOpsPerBlock = 1000;
  error = run(*k.fn, one, limited);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunOpLimit);
  EXPECT_FALSE(run(*k.fn, one));
}

TEST(InterpFaults, ArgumentChecks) {
  KernelBuilder k("args", 1);
  k.tensor("x", DType::F32, {"N", 4});
  k.tensor("y", DType::F32, {"N"});
  k.scalar("alpha", DType::F32);
  k.sizes();
  HostTensor x = HostTensor::zeros(DType::F32, {10, 4}), y = HostTensor::zeros(DType::F32, {12});
  std::vector<ArgValue> args = {x, y, 1.0};
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunSizeMismatch);
  EXPECT_EQ(error->message, "tensor 'y' dimension 0 is N and must be 10 (as tensor 'x' dimension 0), but it is 12");
  EXPECT_EQ(error->arguments, (std::vector<std::string>{"y", "0", "N", "10", "x", "0", "12"}));

  // Each mismatch has its kind; `expect` runs the kernel and checks both.
  auto expect = [&](std::vector<ArgValue> given, DiagId id, const std::string& message) {
    auto e = run(*k.fn, given);
    ASSERT_TRUE(e) << message;
    EXPECT_EQ(e->id, id) << e->message;
    EXPECT_EQ(e->message, message);
    EXPECT_FALSE(isSharedRace(e->id));
  };
  HostTensor bad = HostTensor::zeros(DType::F32, {10, 5});
  expect({bad, y, 1.0}, DiagId::RunTensorExtent, "tensor 'x' dimension 1 must be 4, but it is 5");

  HostTensor wrongType = HostTensor::zeros(DType::BF16, {10, 4});
  expect({wrongType, y, 1.0}, DiagId::RunTensorDType, "tensor 'x' must hold f32, but it holds bf16");

  HostTensor flat = HostTensor::zeros(DType::F32, {40});
  expect({flat, y, 1.0}, DiagId::RunTensorRank, "tensor 'x' must have rank 2, but its shape is (40,)");

  HostTensor negative;  // no data: the extent is checked first
  negative.shape = {-1, 4};
  expect({negative, y, 1.0}, DiagId::RunTensorExtentRange, "tensor 'x' dimension 0 has extent -1, outside 0 to 2^31-1");

  HostTensor shortData = HostTensor::zeros(DType::F32, {10, 4});
  shortData.bytes.resize(8);
  expect({shortData, y, 1.0}, DiagId::RunTensorData, "tensor 'x' has 8 bytes of data for shape (10, 4), which needs 160");

  expect({x, y}, DiagId::RunArgumentMismatch, "kernel 'args' takes 3 arguments (x, y, alpha), but 2 were given");
  expect({x, 2.0, 1.0}, DiagId::RunArgumentNotATensor, "argument 'y' must be a tensor, but a scalar was given");
  expect({static_cast<HostTensor*>(nullptr), y, 1.0}, DiagId::RunArgumentNotATensor,
         "argument 'x' must be a tensor, but it is a null pointer");
  HostTensor y10 = HostTensor::zeros(DType::F32, {10});
  expect({x, y10, y10}, DiagId::RunArgumentNotAScalar, "argument 'alpha' must be a f32 scalar, but a tensor was given");

  args = {x, y10, 1.0};
  EXPECT_EQ(describe(run(*k.fn, args)), "ok");
}

TEST(InterpFaults, SizeThatNoTensorGives) {
  KernelBuilder k("nosize", 1);
  k.tensor("x", DType::F32, {4});
  k.fn->grid[0] = k.size("N");
  k.sizes();
  HostTensor x = HostTensor::zeros(DType::F32, {4});
  std::vector<ArgValue> args = {x};
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunMissingSize);
  EXPECT_EQ(error->message, "no tensor gives the size 'N'");
}

TEST(InterpFaults, GridAxisOutOfRange) {
  KernelBuilder k("grid", 1);
  k.tensor("x", DType::F32, {"N"});
  k.fn->grid[1] = KernelBuilder::expr(ir::LaunchExpr::Kind::Sub, k.size("N"), KernelBuilder::constant(100));
  k.sizes();
  HostTensor x = HostTensor::zeros(DType::F32, {10});
  std::vector<ArgValue> args = {x};
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunGridAxis);
  EXPECT_EQ(error->message, "grid axis 1 (N - 100) is -90 for N = 10");

  k.fn->grid[1] = KernelBuilder::expr(ir::LaunchExpr::Kind::FloorDiv, k.size("N"), KernelBuilder::constant(0));
  error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunGridAxis);
  EXPECT_EQ(error->message, "grid axis 1 (N // 0) is division by zero for N = 10");
}

// A shared buffer of 2^61 f32 is more than a vector can hold: no allocation is even tried.
TEST(InterpFaults, OutOfMemoryIsReportedNotThrown) {
  KernelBuilder k("huge", 1);
  k.sizes();
  k.alloc("buf", DType::F32, {int64_t{1} << 61});
  std::vector<ArgValue> args;
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunOutOfMemory);
  EXPECT_EQ(error->message, "the interpreter ran out of memory running kernel 'huge'");
}

// ir::verify compares the parents of a broadcast's layouts but not their kinds: a broadcast
// from an mma layout to a blocked one reaches the interpreter, whose threads do not hold the
// elements they would broadcast. (Should the verifier reject it one day, this test needs
// another way into the interpreter's internal error.)
TEST(InterpFaults, InternalErrorNamesTheKernel) {
  KernelBuilder k("mixed", 1);
  k.sizes();
  Layout rows = Layout::mma(16, 8, 1, 1);
  rows.reducedMask = 2;  // (16, 1): one value per row
  ValueId x = k.splat(k.f32(1), rows);
  k.b.make(OpKind::Broadcast, {x}, Type::tile(DType::F32, Layout::canonical({16, 8})), {20, 30});
  ASSERT_EQ(ir::verify(*k.fn), std::vector<std::string>{});
  std::vector<ArgValue> args;
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunInternalError);
  EXPECT_EQ(error->range, (SourceRange{20, 30}));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): internal error in the interpreter running kernel 'mixed': the source element (4, 0) of a "
            "broadcast is not held by thread 0 (warp 0, lane 0), which holds its result element (4, 0)");
  EXPECT_EQ(error->thread, 0);
}

TEST(InterpFaults, InvalidIRIsReportedNotRun) {
  KernelBuilder k("broken", 1);
  k.sizes();
  k.b.make(OpKind::Binary, {k.f32(1), k.i32(2)}, Type::scalar(DType::F32), {});
  std::vector<ArgValue> args;
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunInvalidIR);
  EXPECT_EQ(error->message.rfind("internal error: the kernel's IR is invalid: ", 0), 0u) << error->message;
}

}  // namespace
}  // namespace argus::interp
