// The mbarrier / bulk-copy check (AG2050-AG2057): the copy_bulk ring the
// pipelined policy builds (ir/pipeline.h, notes: common4) is proven for every
// iteration with no diagnostic, for 2 to 6 stages; each planted bug (hand-built
// IR: the pass only builds the correct shape) is reported with its iteration,
// stage and element, and the counterexamples that the CPU interpreter can run
// are replayed there.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "checker/checker.h"
#include "driver/compilation.h"
#include "runtime/interp/interpreter.h"
#include "tests/unit/interp_kernel_builder.h"

namespace argus::checker {
namespace {

using interp::testing::KernelBuilder;
using ir::BinaryKind;
using ir::DType;
using ir::OpKind;
using ir::ValueId;

struct Ring {
  int64_t stages = 3;
  int64_t extraBytes = 0;        // added to every expect_tx
  bool flipParity = false;       // wait on 1 - (j / S) % 2
  int64_t flipOnlyAt = -1;       // ... only in iteration j == flipOnlyAt
  bool nextStage = false;        // wait on stage (j + 1) % S
  bool skipWait = false;
  bool readBeforeWait = false;
  bool loopBarrier = true;       // orders iteration j - 1's reads before the copy into their stage
  bool skipInit = false;
  bool initBarrier = true;
  int64_t count = 1;             // mbarrier_init's arrivals
  bool ahead = false;            // issue S tiles ahead (one too many)
  bool wgmmaInFlight = false;    // issue S - 2 tiles ahead (the pass's shape with a wgmma in flight)
  bool copyOnNextBarrier = false;  // the copy completes on stage + 1, the expect_tx arms stage
  bool dot = false;              // also compute on the stage with a dot
  // specialize=True's shape (ir/pipeline.h): no block barrier; every thread arrives on the
  // stage's "free" mbarrier after reading it, and the refill waits on that.
  bool specialize = false;
  bool dropRelease = false;      // ... but nobody arrives
  bool flipFreeParity = false;   // ... and the refill waits on the wrong parity
};

constexpr int64_t kRows = 16, kCols = 16;
constexpr int64_t kTileBytes = kRows * kCols * 4;
const SourceRange kFreeWait{190, 200}, kRelease{210, 220};
const SourceRange kInit{10, 20}, kExpectPro{30, 40}, kCopyPro{50, 60}, kExpect{70, 80}, kCopy{90, 100},
    kWait{110, 120}, kRead{130, 140}, kEarlyRead{150, 160}, kDot{170, 180};

std::unique_ptr<ir::Function> makeRing(const Ring& o) {
  KernelBuilder k("ring", 4);
  ValueId x = k.tensor("X", DType::F32, {"M", kCols});
  ValueId z = k.tensor("Z", DType::F32, {"M", kCols});
  std::vector<ValueId> sizes = k.sizes();
  const int64_t S = o.stages;
  ValueId zero = k.i32(0);
  ValueId n = k.bin(BinaryKind::Div, k.add(sizes[0], k.i32(kRows - 1)), k.i32(kRows));
  ValueId buf = k.alloc("tiles", DType::F32, {S, kRows, kCols});
  ValueId bars = k.alloc("bars", DType::U64, {S});
  if (!o.skipInit)
    for (int64_t s = 0; s < S; ++s) {
      ir::Attrs a;
      argus::ir::MbarrierInitAttrs(a).arrivals(o.count);
      k.b.create(OpKind::MbarrierInit, {bars, k.i32(s)}, {}, kInit, a);
    }
  ValueId free = ir::kNoValue;
  if (o.specialize) {
    free = k.alloc("free", DType::U64, {S});
    for (int64_t s = 0; s < S; ++s) {
      ir::Attrs a;
      argus::ir::MbarrierInitAttrs(a).arrivals(k.fn->numThreads());
      k.b.create(OpKind::MbarrierInit, {free, k.i32(s)}, {}, kInit, a);
    }
  }
  if (o.initBarrier) k.barrier();
  auto issue = [&](ValueId tile, ValueId stage, bool prologue) {
    if (o.specialize && !prologue) {
      // The refill of a stage waits until every thread released its previous round.
      ValueId round = k.bin(BinaryKind::Sub, k.bin(BinaryKind::Div, tile, k.i32(S)), k.i32(1));
      ValueId parity = k.bin(BinaryKind::Rem, round, k.i32(2));
      if (o.flipFreeParity) parity = k.bin(BinaryKind::Sub, k.i32(1), parity);
      k.ifThenElse(k.cmp(ir::CmpKind::Ge, tile, k.i32(S)), {},
                   [&] { k.b.create(OpKind::MbarrierWait, {free, stage, parity}, {}, kFreeWait); return std::vector<ValueId>{}; },
                   [] { return std::vector<ValueId>{}; });
    }
    ir::Attrs a;
    argus::ir::MbarrierExpectTxAttrs(a).bytes(kTileBytes + o.extraBytes);
    k.b.create(OpKind::MbarrierExpectTx, {bars, stage}, {}, prologue ? kExpectPro : kExpect, a);
    ValueId copyStage = o.copyOnNextBarrier ? k.bin(BinaryKind::Rem, k.add(stage, k.i32(1)), k.i32(S)) : stage;
    k.b.create(OpKind::CopyBulk,
               {k.view(buf, {stage, zero, zero}, {kRows, kCols}),
                k.view(x, {k.mul(tile, k.i32(kRows)), zero}, {kRows, kCols}), bars, copyStage},
               {}, prologue ? kCopyPro : kCopy);
  };
  const int64_t lead = o.ahead ? S : o.wgmmaInFlight ? S - 2 : S - 1;
  for (int64_t p = 0; p < lead; ++p) {
    ValueId tile = k.i32(p);
    k.ifThenElse(k.cmp(ir::CmpKind::Lt, tile, n), {},
                 [&] { issue(tile, k.bin(BinaryKind::Rem, tile, k.i32(S)), true); return std::vector<ValueId>{}; },
                 [] { return std::vector<ValueId>{}; });
  }
  k.forLoop(zero, n, k.i32(1), {}, [&](ValueId j, std::vector<ValueId>) {
    k.fn->values[j].name = "kt";
    if (o.loopBarrier && !o.specialize) k.barrier();
    ValueId tile = k.add(j, k.i32(lead));
    k.ifThenElse(k.cmp(ir::CmpKind::Lt, tile, n), {},
                 [&] { issue(tile, k.bin(BinaryKind::Rem, tile, k.i32(S)), false); return std::vector<ValueId>{}; },
                 [] { return std::vector<ValueId>{}; });
    ValueId stage = k.bin(BinaryKind::Rem, j, k.i32(S));
    ValueId parity = k.bin(BinaryKind::Rem, k.bin(BinaryKind::Div, j, k.i32(S)), k.i32(2));
    ValueId flipped = k.bin(BinaryKind::Sub, k.i32(1), parity);
    if (o.flipParity) parity = flipped;
    if (o.flipOnlyAt >= 0) parity = k.select(k.cmp(ir::CmpKind::Eq, j, k.i32(o.flipOnlyAt)), flipped, parity);
    ValueId waitStage = o.nextStage ? k.bin(BinaryKind::Rem, k.add(j, k.i32(1)), k.i32(S)) : stage;
    ValueId tileView = k.view(buf, {stage, zero, zero}, {kRows, kCols});
    if (o.readBeforeWait) k.load(tileView, std::nullopt, kEarlyRead);
    if (!o.skipWait) k.b.create(OpKind::MbarrierWait, {bars, waitStage, parity}, {}, kWait);
    ValueId t = k.load(tileView, std::nullopt, kRead);
    if (o.dot) {
      ValueId acc = k.splat(k.f32(0), ir::Layout::canonical({kRows, kCols}));
      k.b.make(OpKind::Dot, {tileView, tileView, acc}, k.type(acc), kDot);
    }
    k.store(k.view(z, {k.mul(j, k.i32(kRows)), zero}, {kRows, kCols}), t);
    if (o.specialize && !o.dropRelease) k.b.create(OpKind::MbarrierArrive, {free, stage}, {}, kRelease);
    return std::vector<ValueId>{};
  });
  k.barrier();
  return std::move(k.fn);
}

struct Result {
  std::unique_ptr<ir::Function> fn;
  DiagnosticSink diags;
};

std::unique_ptr<Result> checkRing(const Ring& o) {
  auto r = std::make_unique<Result>();
  r->fn = makeRing(o);
  EXPECT_EQ(ir::verify(*r->fn), std::vector<std::string>{});
  ir::Module module;
  module.functions.push_back(std::move(r->fn));
  Options options;
  options.queryRlimit = 100000000;
  options.kernelRlimit = 2000000000;
  check(module, r->diags, nullptr, options);
  r->fn = std::move(module.functions[0]);
  return r;
}

std::string describe(const DiagnosticSink& diags) {
  std::string s;
  for (const Diagnostic& d : diags.diagnostics()) s += std::string(d.code()) + ": " + d.message + "\n";
  return s;
}

const Diagnostic* find(const DiagnosticSink& diags, const char* code, SourceRange range) {
  for (const Diagnostic& d : diags.diagnostics())
    if (std::string(d.code()) == code && d.range == range) return &d;
  return nullptr;
}

std::string fact(const Diagnostic& d, const std::string& name) {
  if (!d.counterexample) return "";
  for (const auto& [key, value] : d.counterexample->facts)
    if (key == name) return value;
  return "";
}

int64_t iteration(const Diagnostic& d) {
  if (!d.counterexample || d.counterexample->iteration.empty()) return -1;
  return d.counterexample->iteration[0].second;
}

int64_t launchSize(const Diagnostic& d, int64_t fallback) {
  std::string launch = fact(d, "launch");
  auto at = launch.find("M = ");
  return at == std::string::npos ? fallback : std::stoll(launch.substr(at + 4));
}

// The interpreter runs the kernel at the counterexample's launch and must stop at `range`.
void replay(const ir::Function& fn, int64_t m, SourceRange range) {
  auto x = interp::HostTensor::zeros(DType::F32, {m, kCols});
  auto z = interp::HostTensor::zeros(DType::F32, {m, kCols});
  std::vector<interp::ArgValue> args = {x, z};
  auto error = interp::run(fn, args);
  ASSERT_TRUE(error.has_value()) << "the interpreter ran clean at M = " << m;
  EXPECT_EQ(error->range, range) << error->message;
}

TEST(CheckerMbarrier, PipelinedRingIsProvenForEveryIteration) {
  for (int64_t stages : {2, 3, 4, 6}) {
    SCOPED_TRACE("stages = " + std::to_string(stages));
    Ring o;
    o.stages = stages;
    o.dot = true;
    auto r = checkRing(o);
    EXPECT_TRUE(r->diags.diagnostics().empty()) << describe(r->diags);
  }
}

TEST(CheckerMbarrier, RingTwoAheadIsProven) {
  for (int64_t stages : {3, 4}) {
    SCOPED_TRACE("stages = " + std::to_string(stages));
    for (bool specialize : {false, true}) {
      Ring o;
      o.stages = stages;
      o.wgmmaInFlight = true;
      o.specialize = specialize;
      auto r = checkRing(o);
      EXPECT_TRUE(r->diags.diagnostics().empty()) << describe(r->diags);
    }
  }
}

TEST(CheckerMbarrier, WarpSpecializedRingIsProven) {
  for (int64_t stages : {2, 3, 4}) {
    SCOPED_TRACE("stages = " + std::to_string(stages));
    Ring o;
    o.stages = stages;
    o.specialize = true;
    auto r = checkRing(o);
    EXPECT_TRUE(r->diags.diagnostics().empty()) << describe(r->diags);
  }
}

TEST(CheckerMbarrier, WarpSpecializedRingWithoutReleaseOverwritesAStageBeingRead) {
  Ring o;
  o.specialize = true;
  o.dropRelease = true;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2051", kCopy);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(iteration(*d), 1);  // refills stage 0, read in iteration 0
  EXPECT_NE(fact(*d, "the read").find("in iteration kt = 0"), std::string::npos) << fact(*d, "the read");
  // The refill's wait on the free mbarrier waits for a phase nobody arms.
  const Diagnostic* hang = find(r->diags, "AG2052", kFreeWait);
  ASSERT_TRUE(hang) << describe(r->diags);
  EXPECT_EQ(iteration(*hang), 1);
}

TEST(CheckerMbarrier, WarpSpecializedRingWithWrongReleaseParity) {
  Ring o;
  o.specialize = true;
  o.flipFreeParity = true;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2052", kFreeWait);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(iteration(*d), 1);
  EXPECT_EQ(fact(*d, "stage"), "0");
  EXPECT_EQ(fact(*d, "parity needed"), "0");
}

TEST(CheckerMbarrier, FlippedParityIsAStaleStage) {
  Ring o;
  o.flipParity = true;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2052", kWait);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(iteration(*d), 0);
  EXPECT_EQ(fact(*d, "stage"), "0");
  EXPECT_EQ(fact(*d, "parity"), "1");
  EXPECT_EQ(fact(*d, "parity needed"), "0");
  EXPECT_NE(d->message.find("stale stage"), std::string::npos) << d->message;
  replay(*r->fn, launchSize(*d, 48), kRead);
}

TEST(CheckerMbarrier, ParityWrongInOneLateIterationIsFound) {
  // Iteration 40 is far beyond any window of unrolled iterations: the
  // induction over the waits of each mbarrier covers it.
  Ring o;
  o.flipOnlyAt = 40;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2052", kWait);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(iteration(*d), 40);
  EXPECT_EQ(fact(*d, "stage"), "1");
  EXPECT_EQ(fact(*d, "parity needed"), "1");
  EXPECT_EQ(r->diags.diagnostics().size(), 1u) << describe(r->diags);
}

TEST(CheckerMbarrier, WaitOnTheNextStageLeavesTheReadUnguarded) {
  Ring o;
  o.nextStage = true;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2050", kRead);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(iteration(*d), 0);
  EXPECT_EQ(fact(*d, "element"), "tiles[0, 0, 0]");
  EXPECT_EQ(fact(*d, "stage"), "0");
  ASSERT_TRUE(d->counterexample->thread);
  EXPECT_EQ(*d->counterexample->thread, 0);
  replay(*r->fn, launchSize(*d, 48), kRead);
}

TEST(CheckerMbarrier, ReadBeforeTheWait) {
  Ring o;
  o.readBeforeWait = true;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2050", kEarlyRead);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(iteration(*d), 0);
  EXPECT_EQ(fact(*d, "element"), "tiles[0, 0, 0]");
  EXPECT_FALSE(find(r->diags, "AG2050", kRead)) << describe(r->diags);
  replay(*r->fn, launchSize(*d, 48), kEarlyRead);
}

TEST(CheckerMbarrier, MissingWait) {
  Ring o;
  o.skipWait = true;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2050", kRead);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(iteration(*d), 0);
  replay(*r->fn, launchSize(*d, 48), kRead);
}


TEST(CheckerMbarrier, CopyOverwritesAStageStillBeingRead) {
  Ring o;
  o.loopBarrier = false;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2051", kCopy);
  ASSERT_TRUE(d) << describe(r->diags);
  // Iteration 1 refills stage 0, which iteration 0 was reading.
  EXPECT_EQ(iteration(*d), 1);
  EXPECT_EQ(fact(*d, "element").substr(0, 8), "tiles[0,");
  EXPECT_NE(fact(*d, "the read").find("in iteration kt = 0"), std::string::npos) << fact(*d, "the read");
  replay(*r->fn, launchSize(*d, 48), kCopy);
}

TEST(CheckerMbarrier, ExpectTxBytesMustMatchTheCopies) {
  Ring o;
  o.extraBytes = 64;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2053", kExpect);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(fact(*d, "announced"), std::to_string(kTileBytes + 64));
  EXPECT_EQ(fact(*d, "copied"), std::to_string(kTileBytes));
  EXPECT_TRUE(find(r->diags, "AG2053", kExpectPro));
  replay(*r->fn, 48, kWait);  // the phase waits for 64 bytes that never come
}

TEST(CheckerMbarrier, CopyOnAnotherMbarrierThanItsExpectTx) {
  Ring o;
  o.copyOnNextBarrier = true;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2054", kCopy);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_NE(fact(*d, "copy mbarrier"), fact(*d, "armed mbarrier"));
}

TEST(CheckerMbarrier, UninitializedMbarrier) {
  Ring o;
  o.skipInit = true;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2055", kExpectPro);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_NE(d->message.find("before any mbarrier_init"), std::string::npos) << d->message;
  replay(*r->fn, 48, kExpectPro);
}

TEST(CheckerMbarrier, InitWithoutBarrier) {
  Ring o;
  o.initBarrier = false;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2055", kExpectPro);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_NE(d->message.find("before the barrier()"), std::string::npos) << d->message;
  // Inside the loop the barrier at the top of each iteration publishes the init.
  EXPECT_FALSE(find(r->diags, "AG2055", kWait)) << describe(r->diags);
}

TEST(CheckerMbarrier, ArrivalCountAboveWhatAPhaseGets) {
  Ring o;
  o.count = 2;
  auto r = checkRing(o);
  const Diagnostic* d = find(r->diags, "AG2056", kWait);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(fact(*d, "arrivals"), "1");
  EXPECT_EQ(fact(*d, "expected"), "2");
  replay(*r->fn, launchSize(*d, 48), kWait);
}

TEST(CheckerMbarrier, IssuingOneStageTooFarAheadReArmsAnUnwaitedPhase) {
  Ring o;
  o.ahead = true;
  auto r = checkRing(o);
  EXPECT_TRUE(find(r->diags, "AG2057", kExpect)) << describe(r->diags);
  const Diagnostic* d = find(r->diags, "AG2051", kCopy);
  ASSERT_TRUE(d) << describe(r->diags);
  EXPECT_EQ(iteration(*d), 0);
}

}  // namespace
}  // namespace argus::checker

// ---- from source: the pipelined policy's copy_bulk ring (examples/gemm_wgmma.ag)

namespace argus::checker {
namespace {
namespace source {

struct Compiled {
  std::unique_ptr<Compilation> compilation;
  DiagnosticSink diags;
};

std::unique_ptr<Compiled> compile(const std::string& text) {
  auto out = std::make_unique<Compiled>();
  CompileOptions options;
  options.arch = "sm_90a";
  out->compilation = std::make_unique<Compilation>(SourceFile("bulk.ag", text), options);
  const ir::Module& module = out->compilation->ir();
  EXPECT_FALSE(out->compilation->hasErrors()) << "the test kernel must pass sema";
  Options checkerOptions;
  checkerOptions.queryRlimit = 100000000;
  checkerOptions.kernelRlimit = 2000000000;
  check(module, out->diags, &out->compilation->source(), checkerOptions);
  return out;
}

std::string readExample(const std::string& name) {
  std::ifstream in(std::filesystem::path(ARGUS_SOURCE_DIR) / "examples" / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool hasOp(const ir::Block& b, OpKind kind) {
  for (const auto& op : b.ops) {
    if (op->kind == kind) return true;
    for (const ir::Block& r : op->regions)
      if (hasOp(r, kind)) return true;
  }
  return false;
}

TEST(CheckerMbarrierSource, HopperExamplesAreClean) {
  for (const char* example : {"gemm_wgmma.ag", "moe_gemm.ag"}) {
    SCOPED_TRACE(example);
    auto c = compile(readExample(example));
    const ir::Module& module = c->compilation->ir();
    ASSERT_FALSE(module.functions.empty());
    // The policy pass gave the copies their mbarriers: the checker saw the protocol.
    EXPECT_TRUE(hasOp(module.functions[0]->body, OpKind::MbarrierWait));
    EXPECT_TRUE(c->diags.diagnostics().empty()) << describe(c->diags);
  }
}

TEST(CheckerMbarrierSource, BulkOperandFromTheNextKSliceIsCaught) {
  // The tag flow follows copy_bulk like copy_async: W's tile comes from K slice kt + 1.
  std::string text = readExample("gemm_wgmma.ag");
  const std::string from = "W.tile((BN, BK))[program_id(1), kt]";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "W.tile((BN, BK))[program_id(1), kt + 1]");
  auto c = compile(text);
  std::string codes;
  for (const Diagnostic& d : c->diags.diagnostics()) codes += std::string(d.code()) + " ";
  EXPECT_NE(codes.find("AG2035"), std::string::npos) << describe(c->diags);
  EXPECT_EQ(codes.find("AG205"), std::string::npos) << describe(c->diags);
}

}  // namespace source
}  // namespace
}  // namespace argus::checker
