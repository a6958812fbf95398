// Hopper ops in the interpreter: mbarriers, copy_bulk (TMA) rings, their
// misuse reported as run-time errors, and dot with a wgmma accumulator.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/pipeline.h"
#include "runtime/interp/interpreter.h"
#include "tests/unit/interp_kernel_builder.h"

namespace argus::interp {
namespace {

using namespace testing;

std::string describe(const std::optional<RunError>& e) { return e ? e->message : "ok"; }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void mbarrierInit(KernelBuilder& k, ValueId bars, ValueId index, int64_t count, SourceRange range = {}) {
  ir::Attrs a;
  argus::ir::MbarrierInitAttrs(a).arrivals(count);
  k.b.create(OpKind::MbarrierInit, {bars, index}, {}, range, a);
}
void expectTx(KernelBuilder& k, ValueId bars, ValueId index, int64_t bytes, SourceRange range = {}) {
  ir::Attrs a;
  argus::ir::MbarrierExpectTxAttrs(a).bytes(bytes);
  k.b.create(OpKind::MbarrierExpectTx, {bars, index}, {}, range, a);
}
void arrive(KernelBuilder& k, ValueId bars, ValueId index) { k.b.create(OpKind::MbarrierArrive, {bars, index}, {}, {}); }
void wait(KernelBuilder& k, ValueId bars, ValueId index, ValueId parity, SourceRange range = {}) {
  k.b.create(OpKind::MbarrierWait, {bars, index, parity}, {}, range);
}
void copyBulk(KernelBuilder& k, ValueId dst, ValueId src, ValueId bars, ValueId index, SourceRange range = {}) {
  std::vector<ValueId> operands = {dst, src};
  if (bars != ir::kNoValue) operands.insert(operands.end(), {bars, index});
  k.b.create(OpKind::CopyBulk, operands, {}, range);
}

// Knobs that break the hand-written ring in one way each.
struct RingOptions {
  int64_t extraBytes = 0;     // added to the expect_tx count
  bool flipParity = false;    // wait on the wrong parity
  bool skipInit = false;      // never initialize the mbarriers
  bool readBeforeWait = false;
  bool loopBarrier = true;    // the barrier that orders iteration j-1's reads before the copy into their stage
  bool lastWait = true;       // wait for the last tile
};

constexpr int64_t kStages = 3, kRows = 8, kCols = 32, kTileBytes = kRows * kCols * 4;
const SourceRange kWaitRange{500, 510}, kCopyRange{400, 410}, kExpectRange{300, 310}, kReadRange{600, 610};

// Z[j*8 .. j*8+8, :] = X[j*8 .. j*8+8, :] through a 3-stage ring of copy_bulk
// copies, exactly the shape the pipelined policy gives a loop of copy_bulk (ir/pipeline.h).
std::unique_ptr<ir::Function> makeRing(const RingOptions& o) {
  KernelBuilder k("ring", 4);
  ValueId x = k.tensor("X", DType::F32, {"M", kCols});
  ValueId z = k.tensor("Z", DType::F32, {48, kCols});
  std::vector<ValueId> sizes = k.sizes();
  ValueId zero = k.i32(0);
  ValueId n = k.bin(BinaryKind::Div, k.add(sizes[0], k.i32(kRows - 1)), k.i32(kRows));
  ValueId buf = k.alloc("tiles", DType::F32, {kStages, kRows, kCols}, {100, 110});
  ValueId bars = k.alloc("bars", DType::U64, {kStages}, {200, 210});
  if (!o.skipInit)
    for (int64_t s = 0; s < kStages; ++s) mbarrierInit(k, bars, k.i32(s), 1);
  k.barrier();
  auto issue = [&](ValueId iteration, ValueId stage) {
    expectTx(k, bars, stage, kTileBytes + o.extraBytes, kExpectRange);
    copyBulk(k, k.view(buf, {stage, zero, zero}, {kRows, kCols}),
             k.view(x, {k.mul(iteration, k.i32(kRows)), zero}, {kRows, kCols}), bars, stage, kCopyRange);
  };
  for (int64_t p = 0; p + 1 < kStages; ++p) {
    ValueId iteration = k.i32(p);
    k.ifThenElse(k.cmp(ir::CmpKind::Lt, iteration, n), {}, [&] { issue(iteration, iteration); return std::vector<ValueId>{}; },
                 [] { return std::vector<ValueId>{}; });
  }
  ValueId ub = o.lastWait ? n : k.bin(BinaryKind::Sub, n, k.i32(1));
  k.forLoop(zero, ub, k.i32(1), {}, [&](ValueId j, std::vector<ValueId>) {
    if (o.loopBarrier) k.barrier();
    ValueId ahead = k.add(j, k.i32(kStages - 1));
    k.ifThenElse(k.cmp(ir::CmpKind::Lt, ahead, n), {},
                 [&] { issue(ahead, k.bin(BinaryKind::Rem, ahead, k.i32(kStages))); return std::vector<ValueId>{}; },
                 [] { return std::vector<ValueId>{}; });
    ValueId stage = k.bin(BinaryKind::Rem, j, k.i32(kStages));
    ValueId parity = k.bin(BinaryKind::Rem, k.bin(BinaryKind::Div, j, k.i32(kStages)), k.i32(2));
    if (o.flipParity) parity = k.bin(BinaryKind::Sub, k.i32(1), parity);
    ValueId tileView = k.view(buf, {stage, zero, zero}, {kRows, kCols});
    if (o.readBeforeWait) k.load(tileView, std::nullopt, kReadRange);
    wait(k, bars, stage, parity, kWaitRange);
    ValueId tile = k.load(tileView, std::nullopt, kReadRange);
    k.store(k.view(z, {k.mul(j, k.i32(kRows)), zero}, {kRows, kCols}), tile);
    return std::vector<ValueId>{};
  });
  k.barrier();
  return std::move(k.fn);
}

struct RingRun {
  HostTensor x, z;
  std::optional<RunError> error;
};

RingRun runRing(const ir::Function& fn, int64_t m) {
  RingRun r{HostTensor::zeros(DType::F32, {m, kCols}), HostTensor::zeros(DType::F32, {48, kCols}), std::nullopt};
  for (size_t i = 0; i < r.x.size(); ++i) r.x.set(i, static_cast<double>(i) * 0.5 + 1);
  for (size_t i = 0; i < r.z.size(); ++i) r.z.set(i, -7);  // poison: every element must be written
  std::vector<ArgValue> args = {r.x, r.z};
  r.error = run(fn, args);
  return r;
}

void expectCopied(const RingRun& r, int64_t m) {
  for (int64_t row = 0; row < 48; ++row)
    for (int64_t col = 0; col < kCols; ++col) {
      size_t at = static_cast<size_t>(row * kCols + col);
      double want = row < m ? r.x.get(at) : row < (m + kRows - 1) / kRows * kRows ? 0.0 : -7.0;
      ASSERT_EQ(r.z.get(at), want) << "Z[" << row << ", " << col << "]";
    }
}

TEST(InterpBulk, ThreeStageRingCopiesEveryTile) {
  auto fn = makeRing({});
  ASSERT_EQ(ir::verify(*fn), std::vector<std::string>{});
  for (int64_t m : {45, 48, 8, 17, 1}) {  // 6 tiles: two rounds of parities; partial tiles zero-filled
    SCOPED_TRACE("M = " + std::to_string(m));
    RingRun r = runRing(*fn, m);
    ASSERT_FALSE(r.error) << describe(r.error);
    expectCopied(r, m);
  }
}

TEST(InterpBulk, WrongParityReadsDataStillInFlight) {
  RingOptions o;
  o.flipParity = true;
  auto fn = makeRing(o);
  RingRun r = runRing(*fn, 45);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->id, DiagId::RunBulkCopyPendingRead);
  EXPECT_TRUE(isSharedRace(r.error->id));
  EXPECT_EQ(r.error->range, kReadRange);
  EXPECT_EQ(r.error->message,
            "block (0, 0, 0): shared-memory race on tiles[0, 0, 0]: thread 0 (warp 0, lane 0) reads it before the "
            "copy_bulk into it completed (it may still hold the old contents); the copy lands when phase 0 of "
            "mbarrier bars[0] completes, which mbarrier_wait(bars, 0, parity 0) waits for: read after that wait");
  ASSERT_EQ(r.error->labels.size(), 1u);
  EXPECT_EQ(r.error->labels[0].range, kCopyRange);
}

TEST(InterpBulk, ReadBeforeWaitIsARace) {
  RingOptions o;
  o.readBeforeWait = true;
  auto fn = makeRing(o);
  RingRun r = runRing(*fn, 45);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->id, DiagId::RunBulkCopyPendingRead);
  EXPECT_TRUE(contains(r.error->message, "reads it before the copy_bulk into it completed")) << r.error->message;
}

TEST(InterpBulk, ExpectTxTooSmallUnderflows) {
  RingOptions o;
  o.extraBytes = -4;
  auto fn = makeRing(o);
  RingRun r = runRing(*fn, 45);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->id, DiagId::RunMbarrierTxUnderflow);
  EXPECT_EQ(r.error->range, kCopyRange);
  EXPECT_EQ(r.error->message,
            "block (0, 0, 0): the copy_bulk ops in flight on mbarrier bars[0] complete 1024 bytes, but its phase 0 "
            "expects only 1020 transaction bytes: the count would underflow and the phase complete before the copies "
            "land; the bytes of mbarrier_expect_tx must equal the bytes of the phase's copies");
  ASSERT_EQ(r.error->labels.size(), 1u);
  EXPECT_EQ(r.error->labels[0].range, kExpectRange);
}

TEST(InterpBulk, ExpectTxTooLargeDeadlocks) {
  RingOptions o;
  o.extraBytes = 4;
  auto fn = makeRing(o);
  RingRun r = runRing(*fn, 45);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->id, DiagId::RunMbarrierTxDeadlock);
  EXPECT_EQ(r.error->range, kWaitRange);
  EXPECT_EQ(r.error->message,
            "block (0, 0, 0): mbarrier_wait(parity 0) on mbarrier bars[0] waits forever: it waits for phase 0, which "
            "expects 1028 transaction bytes (announced by mbarrier_expect_tx), but the copy_bulk ops issued on it "
            "deliver only 1024 bytes; the bytes of mbarrier_expect_tx must equal the bytes of the phase's copies");
  ASSERT_EQ(r.error->labels.size(), 2u);
  EXPECT_EQ(r.error->labels[0].range, kExpectRange);
}

TEST(InterpBulk, UninitializedMbarrier) {
  RingOptions o;
  o.skipInit = true;
  auto fn = makeRing(o);
  RingRun r = runRing(*fn, 45);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->id, DiagId::RunMbarrierUninitialized);
  EXPECT_EQ(r.error->range, kExpectRange);
  EXPECT_EQ(r.error->message,
            "block (0, 0, 0): mbarrier_expect_tx uses mbarrier bars[0], which no mbarrier_init has initialized; "
            "initialize every mbarrier (and add a barrier()) before its first use");
}

TEST(InterpBulk, CopyIntoAStageStillBeingReadIsARace) {
  RingOptions o;
  o.loopBarrier = false;
  auto fn = makeRing(o);
  RingRun r = runRing(*fn, 45);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->id, DiagId::RunCopyAfterReadRace);
  EXPECT_TRUE(isSharedRace(r.error->id));
  EXPECT_EQ(r.error->range, kCopyRange);
  EXPECT_EQ(r.error->message,
            "block (0, 0, 0): shared-memory race on tiles[0, 0, 1]: the copy_bulk of thread 0 (warp 0, lane 0) may "
            "overwrite it while thread 1 (warp 0, lane 1) may still be reading it; put a barrier() between the reads "
            "and this copy_bulk");
}

TEST(InterpBulk, BlockEndingWithACopyInFlight) {
  RingOptions o;
  o.lastWait = false;
  auto fn = makeRing(o);
  RingRun r = runRing(*fn, 45);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->id, DiagId::RunBulkCopyAtBlockEnd);
  EXPECT_EQ(r.error->range, kCopyRange);
  EXPECT_EQ(r.error->message,
            "block (0, 0, 0): the block ends while this copy_bulk is still in flight: no mbarrier_wait waited for "
            "phase 1 of mbarrier bars[2], which it completes; wait for every copy before the kernel ends");
}

// One mbarrier, one copy of the 8 x 16 view at (r0, c0) of X (21, 32) into a buffer,
// expect_tx of `bytes`, a wait, Z = the buffer, and optionally a second wait (parity 1).

std::unique_ptr<ir::Function> makeSingleCopy(int64_t r0, int64_t c0, int64_t bytes, bool secondWait, bool initBarrier = true,
                                             bool withMbarrier = true) {
  KernelBuilder k("single", 4);
  ValueId x = k.tensor("X", DType::F32, {21, 32});
  ValueId z = k.tensor("Z", DType::F32, {8, 16});
  k.sizes();
  ValueId zero = k.i32(0);
  ValueId buf = k.alloc("tile", DType::F32, {8, 16});
  ValueId bars = k.alloc("bars", DType::U64, {1});
  mbarrierInit(k, bars, zero, 1, {10, 20});
  if (initBarrier) k.barrier();
  expectTx(k, bars, zero, bytes, kExpectRange);
  ValueId dst = k.view(buf, {zero, zero}, {8, 16});
  copyBulk(k, dst, k.view(x, {k.i32(r0), k.i32(c0)}, {8, 16}), withMbarrier ? bars : ir::kNoValue, zero, kCopyRange);
  wait(k, bars, zero, zero, kWaitRange);
  k.store(k.view(z, {zero, zero}, {8, 16}), k.load(dst));
  if (secondWait) wait(k, bars, zero, k.i32(1), {700, 710});
  return std::move(k.fn);
}

std::optional<RunError> runSingle(const ir::Function& fn, HostTensor& x, HostTensor& z) {
  x = HostTensor::zeros(DType::F32, {21, 32});
  z = HostTensor::zeros(DType::F32, {8, 16});
  for (size_t i = 0; i < x.size(); ++i) x.set(i, static_cast<double>(i) + 1);
  for (size_t i = 0; i < z.size(); ++i) z.set(i, -7);
  std::vector<ArgValue> args = {x, z};
  return run(fn, args);
}

TEST(InterpBulk, OutOfBoundsElementsAreZeroAndCountAsBytes) {
  // Rows 20..27 and columns 24..39: one row and 8 columns inside X; the whole 8 x 16 box counts.
  auto fn = makeSingleCopy(20, 24, 8 * 16 * 4, false);
  ASSERT_EQ(ir::verify(*fn), std::vector<std::string>{});
  HostTensor x, z;
  auto error = runSingle(*fn, x, z);
  ASSERT_FALSE(error) << describe(error);
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t c = 0; c < 16; ++c) {
      double want = r == 0 && c < 8 ? x.get(static_cast<size_t>(20 * 32 + 24 + c)) : 0.0;
      EXPECT_EQ(z.get(static_cast<size_t>(r * 16 + c)), want) << r << ", " << c;
    }

  // Counting only the 8 elements inside the tensor underflows.
  auto inBoundsOnly = makeSingleCopy(20, 24, 8 * 4, false);
  error = runSingle(*inBoundsOnly, x, z);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunMbarrierTxUnderflow);
  EXPECT_TRUE(contains(error->message, "complete 512 bytes, but its phase 0 expects only 32 transaction bytes"))
      << error->message;
}

TEST(InterpBulk, WaitingAgainOnTheNextPhaseDeadlocks) {
  auto fn = makeSingleCopy(0, 0, 512, true);
  HostTensor x, z;
  auto error = runSingle(*fn, x, z);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunTimeFault);  // AG6001: an mbarrier wait that lacks arrivals
  EXPECT_FALSE(isSharedRace(error->id));
  EXPECT_EQ(error->range, (SourceRange{700, 710}));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): mbarrier_wait(parity 1) on mbarrier bars[0] waits forever: it waits for phase 1, which has "
            "0 of its 1 expected arrival, and no thread can arrive while the whole block waits (phase 0 has completed: "
            "waiting for it takes parity 0)");
  ASSERT_FALSE(error->labels.empty());
  EXPECT_EQ(error->labels.back().range, (SourceRange{10, 20}));
  for (int64_t r = 0; r < 8; ++r)  // the first phase's copy landed and was stored
    for (int64_t c = 0; c < 16; ++c) EXPECT_EQ(z.get(static_cast<size_t>(r * 16 + c)), x.get(static_cast<size_t>(r * 32 + c)));
}

TEST(InterpBulk, WaitBeforeTheInitIsVisibleIsARace) {
  auto fn = makeSingleCopy(0, 0, 512, false, /*initBarrier=*/false);
  HostTensor x, z;
  auto error = runSingle(*fn, x, z);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunMbarrierInitRace);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->range, kWaitRange);
  EXPECT_EQ(error->message,
            "block (0, 0, 0): mbarrier_wait of thread 1 (warp 0, lane 1) uses mbarrier bars[0] before a barrier() made "
            "its mbarrier_init (by thread 0 (warp 0, lane 0)) visible; add barrier() after the mbarrier_init");
}

TEST(InterpBulk, CopyBulkWithoutMbarrierIsAnInternalError) {
  auto fn = makeSingleCopy(0, 0, 512, false, true, /*withMbarrier=*/false);
  ASSERT_EQ(ir::verify(*fn), std::vector<std::string>{});
  HostTensor x, z;
  auto error = runSingle(*fn, x, z);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunInvalidIR);
  EXPECT_EQ(error->range, kCopyRange);
  EXPECT_EQ(error->message,
            "block (0, 0, 0): internal error: the kernel's IR is invalid: this copy_bulk reached the interpreter "
            "without the mbarrier it completes on; the compiler must lower its pipelined loop first");
}

TEST(InterpBulk, StoreIntoACopyInFlightIsARace) {
  KernelBuilder k("overwrite", 4);
  ValueId x = k.tensor("X", DType::F32, {8, 16});
  k.sizes();
  ValueId zero = k.i32(0);
  ValueId buf = k.alloc("tile", DType::F32, {8, 16});
  ValueId bars = k.alloc("bars", DType::U64, {2});
  ValueId one = k.i32(1);
  mbarrierInit(k, bars, one, 1);
  k.barrier();
  expectTx(k, bars, one, 512);
  ValueId dst = k.view(buf, {zero, zero}, {8, 16});
  copyBulk(k, dst, k.view(x, {zero, zero}, {8, 16}), bars, one, kCopyRange);
  k.store(dst, k.splat(k.f32(1), Layout::canonical({8, 16})), {800, 810});
  wait(k, bars, one, zero);
  HostTensor xt = HostTensor::zeros(DType::F32, {8, 16});
  std::vector<ArgValue> args = {xt};
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunWriteOverBulkCopy);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->range, (SourceRange{800, 810}));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shared-memory race on tile[0, 0]: thread 0 (warp 0, lane 0) writes it while a copy_bulk "
            "into it is still in flight; the copy lands when phase 0 of mbarrier bars[1] completes, which "
            "mbarrier_wait(bars, 1, parity 0) waits for: write after that wait");
}

TEST(InterpBulk, MbarrierIndexOutOfRange) {
  KernelBuilder k("index", 4);
  k.sizes();
  ValueId bars = k.alloc("bars", DType::U64, {2});
  mbarrierInit(k, bars, k.i32(2), 1, {5, 9});
  std::vector<ArgValue> args;
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunMbarrierIndex);
  EXPECT_EQ(error->range, (SourceRange{5, 9}));
  EXPECT_EQ(error->message, "block (0, 0, 0): mbarrier_init uses mbarrier 2 of 'bars', which holds 2 mbarriers");
}

// Every thread arrives: an mbarrier counting the whole block works as a barrier;
// a smaller count completes several phases per arrive.
TEST(InterpBulk, ArriveCountsEveryThread) {
  struct Case { int64_t count, firstParity, secondParity; };
  for (Case c : {Case{128, 0, 1}, Case{64, 1, 1}, Case{1, 1, 1}}) {
    SCOPED_TRACE("count " + std::to_string(c.count));
    KernelBuilder k("arrive", 4);
    k.sizes();
    ValueId zero = k.i32(0);
    ValueId bars = k.alloc("bars", DType::U64, {1});
    mbarrierInit(k, bars, zero, c.count);
    k.barrier();
    arrive(k, bars, zero);
    wait(k, bars, zero, k.i32(c.firstParity));
    arrive(k, bars, zero);
    wait(k, bars, zero, k.i32(c.secondParity));
    ASSERT_EQ(ir::verify(*k.fn), std::vector<std::string>{});
    std::vector<ArgValue> args;
    auto error = run(*k.fn, args);
    EXPECT_FALSE(error) << describe(error);
  }
}

// Arrivals beyond the count while the phase waits for transaction bytes.
TEST(InterpBulk, TooManyArrivals) {
  KernelBuilder k("arrive", 4);
  k.sizes();
  ValueId zero = k.i32(0);
  ValueId bars = k.alloc("bars", DType::U64, {1});
  mbarrierInit(k, bars, zero, 1);
  k.barrier();
  expectTx(k, bars, zero, 64);
  arrive(k, bars, zero);
  std::vector<ArgValue> args;
  auto error = run(*k.fn, args);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunMbarrierArrivalOverflow);
  EXPECT_EQ(error->message,
            "block (0, 0, 0): thread 0 (warp 0, lane 0) arrives on mbarrier bars[0], whose phase 0 already has all 1 "
            "expected arrival and only waits for 64 transaction bytes; a phase takes exactly the count given to "
            "mbarrier_init");
}

// One mbarrier bars[0] of count 1 (initialized, then a barrier) and a tile (8, 16) f32 in
// shared memory: the start of the kernels below.
struct OneBarrier {
  KernelBuilder k{"one", 4};
  ValueId x, zero, buf, bars;
  OneBarrier() {
    x = k.tensor("X", DType::F32, {8, 16});
    k.sizes();
    zero = k.i32(0);
    buf = k.alloc("tile", DType::F32, {8, 16});
    bars = k.alloc("bars", DType::U64, {1});
    mbarrierInit(k, bars, zero, 1, {10, 20});
    k.barrier();
  }
  ValueId tile() { return k.view(buf, {zero, zero}, {8, 16}); }
  void copy(SourceRange range = {}) { copyBulk(k, tile(), k.view(x, {zero, zero}, {8, 16}), bars, zero, range); }
  std::optional<RunError> run() {
    EXPECT_EQ(ir::verify(*k.fn), std::vector<std::string>{});
    HostTensor xt = HostTensor::zeros(DType::F32, {8, 16});
    std::vector<ArgValue> args = {xt};
    return interp::run(*k.fn, args);
  }
};

// A store of the canonical (8, 16) layout gives tile[0, 1] to thread 1; the copy_bulk of
// thread 0 then overwrites it with no barrier in between.
TEST(InterpBulk, CopyBulkOverAnotherThreadsWriteIsARace) {
  OneBarrier o;
  o.k.store(o.tile(), o.k.splat(o.k.f32(1), Layout::canonical({8, 16})), {800, 810});
  expectTx(o.k, o.bars, o.zero, 512);
  o.copy(kCopyRange);
  auto error = o.run();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunCopyAfterWriteRace);
  EXPECT_TRUE(isSharedRace(error->id));
  EXPECT_EQ(error->range, kCopyRange);
  EXPECT_EQ(error->message,
            "block (0, 0, 0): shared-memory race on tile[0, 1]: the copy_bulk of thread 0 (warp 0, lane 0) overwrites "
            "it after thread 1 (warp 0, lane 1) wrote it with no barrier() in between; put a barrier() between that "
            "write and this copy_bulk");
  ASSERT_EQ(error->labels.size(), 1u);
  EXPECT_EQ(error->labels[0].range, (SourceRange{800, 810}));
}

TEST(InterpBulk, ReinitializingAnMbarrierWithACopyInFlight) {
  OneBarrier o;
  expectTx(o.k, o.bars, o.zero, 512);
  o.copy(kCopyRange);
  mbarrierInit(o.k, o.bars, o.zero, 1, {900, 910});
  auto error = o.run();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunMbarrierReinitialized);
  EXPECT_EQ(error->range, (SourceRange{900, 910}));
  EXPECT_EQ(error->message,
            "block (0, 0, 0): mbarrier_init re-initializes mbarrier bars[0] while copy_bulk ops still complete on it; "
            "wait for their phase to complete before initializing it again");
  ASSERT_EQ(error->labels.size(), 1u);
  EXPECT_EQ(error->labels[0].range, kCopyRange);
}

// The copy is issued before expect_tx: its arrival completes the count with fewer bytes than
// are already in flight.
TEST(InterpBulk, ExpectTxAfterTheCopyUnderflows) {
  OneBarrier o;
  o.copy(kCopyRange);
  expectTx(o.k, o.bars, o.zero, 256, kExpectRange);
  auto error = o.run();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunMbarrierTxUnderflow);
  EXPECT_EQ(error->range, kExpectRange);
  EXPECT_EQ(error->message,
            "block (0, 0, 0): the copy_bulk ops in flight on mbarrier bars[0] complete 512 bytes, but its phase 0 "
            "expects only 256 transaction bytes: the count would underflow and the phase complete before the copies "
            "land; the bytes of mbarrier_expect_tx must equal the bytes of the phase's copies");
  ASSERT_EQ(error->labels.size(), 1u);
  EXPECT_EQ(error->labels[0].range, kCopyRange);
}

TEST(InterpBulk, ParityIsZeroOrOne) {
  OneBarrier o;
  wait(o.k, o.bars, o.zero, o.k.i32(2), kWaitRange);
  auto error = o.run();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, DiagId::RunMbarrierParity);
  EXPECT_EQ(error->range, kWaitRange);
  EXPECT_EQ(error->message, "block (0, 0, 0): mbarrier_wait on mbarrier bars[0] with parity 2; the parity of a phase is 0 or 1");
}

// The pipelined policy's own output for a loop of copy_bulk runs and copies every tile.
TEST(InterpBulk, PipelinedLoopOfCopyBulk) {
  KernelBuilder k("pipelined", 4);
  ValueId x = k.tensor("X", DType::F32, {"M", kCols});
  ValueId z = k.tensor("Z", DType::F32, {48, kCols});
  std::vector<ValueId> sizes = k.sizes();
  ValueId zero = k.i32(0);
  ValueId n = k.bin(BinaryKind::Div, k.add(sizes[0], k.i32(kRows - 1)), k.i32(kRows));
  ValueId buf = k.alloc("tile", DType::F32, {kRows, kCols});
  std::vector<ValueId> operands = {zero, n, k.i32(1)};
  ir::Attrs stages;
  argus::ir::ForAttrs(stages).stages(kStages);
  ir::Op& loop = k.b.create(OpKind::For, operands, {}, {}, stages);
  ValueId j = k.b.addBlockArg(loop.regions[0], Type::scalar(DType::I32), "j");
  k.b.setBlock(&loop.regions[0]);
  ValueId dst = k.view(buf, {zero, zero}, {kRows, kCols});
  copyBulk(k, dst, k.view(x, {k.mul(j, k.i32(kRows)), zero}, {kRows, kCols}), ir::kNoValue, ir::kNoValue);
  ValueId tile = k.load(k.view(buf, {zero, zero}, {kRows, kCols}));
  k.store(k.view(z, {k.mul(j, k.i32(kRows)), zero}, {kRows, kCols}), tile);
  k.b.create(OpKind::Yield, {}, {}, {});
  k.b.setBlock(&k.fn->body);
  ASSERT_EQ(ir::verify(*k.fn), std::vector<std::string>{});
  ASSERT_TRUE(ir::applyPipelining(*k.fn).empty());
  ASSERT_EQ(ir::verify(*k.fn), std::vector<std::string>{}) << ir::print(*k.fn);
  for (int64_t m : {45, 16, 3}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    RingRun r = runRing(*k.fn, m);
    ASSERT_FALSE(r.error) << describe(r.error) << "\n" << ir::print(*k.fn);
    expectCopied(r, m);
  }
}

// C = A @ B with a wgmma accumulator: the same distribution as mma warps (4 * warpgroups, 1).
TEST(InterpBulk, DotWithWgmmaAccumulator) {
  for (int64_t warpgroups : {1, 2}) {
    SCOPED_TRACE("warpgroups " + std::to_string(warpgroups));
    const int64_t m = 64 * warpgroups, nn = 32, kk = 32;
    KernelBuilder k("wgmma", 4 * warpgroups);
    ValueId a = k.tensor("A", DType::F16, {m, kk});
    ValueId b = k.tensor("B", DType::F16, {kk, nn});
    ValueId c = k.tensor("C", DType::F32, {m, nn});
    k.sizes();
    ValueId zero = k.i32(0);
    ValueId aS = k.alloc("a_s", DType::F16, {m, kk});
    ValueId bS = k.alloc("b_s", DType::F16, {kk, nn});
    k.store(k.view(aS, {zero, zero}, {m, kk}), k.load(k.view(a, {zero, zero}, {m, kk})));
    k.store(k.view(bS, {zero, zero}, {kk, nn}), k.load(k.view(b, {zero, zero}, {kk, nn})));
    k.barrier();
    Layout accLayout = Layout::wgmmaAccumulator(m, nn, warpgroups);
    ValueId acc0 = k.splat(k.f32(0.5), accLayout);
    ValueId acc = k.dot(k.view(aS, {zero, zero}, {m, kk}), k.view(bS, {zero, zero}, {kk, nn}), acc0);
    k.store(k.view(c, {zero, zero}, {m, nn}), k.convert(acc, Layout::canonical({m, nn})));
    ASSERT_EQ(ir::verify(*k.fn), std::vector<std::string>{});
    HostTensor at = HostTensor::zeros(DType::F16, {m, kk}), bt = HostTensor::zeros(DType::F16, {kk, nn});
    HostTensor ct = HostTensor::zeros(DType::F32, {m, nn});
    for (size_t i = 0; i < at.size(); ++i) at.set(i, static_cast<double>(static_cast<int64_t>(i * 7 % 13) - 6) * 0.25);
    for (size_t i = 0; i < bt.size(); ++i) bt.set(i, static_cast<double>(static_cast<int64_t>(i * 5 % 11) - 5) * 0.5);
    std::vector<ArgValue> args = {at, bt, ct};
    auto error = run(*k.fn, args);
    ASSERT_FALSE(error) << describe(error);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t jj = 0; jj < nn; ++jj) {
        float sum = 0.5f;
        for (int64_t q = 0; q < kk; ++q)
          sum = std::fma(static_cast<float>(at.get(static_cast<size_t>(i * kk + q))),
                         static_cast<float>(bt.get(static_cast<size_t>(q * nn + jj))), sum);
        ASSERT_EQ(ct.get(static_cast<size_t>(i * nn + jj)), sum) << i << ", " << jj;
      }
  }
}

}  // namespace
}  // namespace argus::interp
