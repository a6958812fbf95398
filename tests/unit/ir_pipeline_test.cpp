// The pipelining policy (ir/pipeline.h): structure of the rewritten loop and
// the problems that keep a loop from being rewritten.
#include <gtest/gtest.h>

#include <functional>

#include "interp_kernel_builder.h"
#include "ir/ops.h"
#include "ir/pipeline.h"

namespace argus::ir {
namespace {

using interp::testing::KernelBuilder;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<OpKind> kinds(const Block& block) {
  std::vector<OpKind> out;
  for (const auto& op : block.ops) out.push_back(op->kind);
  return out;
}

const Op* findFor(const Block& block) {
  for (const auto& op : block.ops)
    if (op->kind == OpKind::For) return op.get();
  return nullptr;
}

enum class Variant {
  Plain, BarrierInBody, LoadFirst, PartialBuffer, SameBufferTwice, CarriedOffset, BufferUsedAfter,
  StepTwo, NestedUse, LateCopy
};

struct Gemm {
  std::unique_ptr<Function> fn;
  ValueId aS = kNoValue, bS = kNoValue;
};

// C = A @ B with a pipelined k loop of `stages` stages over `kTiles` tiles
// (a constant when kTilesConst >= 0, else cdiv(K, BK)); `variant` breaks it.
Gemm makeGemm(int64_t stages, int64_t kTilesConst = -1, Variant variant = Variant::Plain) {
  const int64_t bm = 32, bn = 32, bk = 16;
  KernelBuilder k("gemm");
  ValueId a = k.tensor("A", DType::F32, {"M", "K"});
  ValueId b = k.tensor("B", DType::F32, {"K", "N"});
  ValueId c = k.tensor("C", DType::F32, {"M", "N"});
  std::vector<ValueId> sizes = k.sizes();  // M, K, N
  ValueId aS = k.alloc("a_s", DType::F32, {bm, bk}, {100, 110});
  ValueId bS = k.alloc("b_s", DType::F32, {bk, bn}, {120, 130});
  ValueId row = k.mul(k.pid(0), k.i32(bm));
  ValueId col = k.mul(k.pid(1), k.i32(bn));
  ValueId acc0 = k.splat(k.f32(0), Layout::canonical({bm, bn}));
  ValueId kTiles = kTilesConst >= 0 ? k.i32(kTilesConst)
                                    : k.bin(BinaryKind::Div, k.add(sizes[1], k.i32(bk - 1)), k.i32(bk));
  ValueId zero = k.i32(0);
  ValueId step = k.i32(variant == Variant::StepTwo ? 2 : 1);
  auto results = k.forLoop(zero, kTiles, step, {acc0}, [&](ValueId kt, std::vector<ValueId> iters) {
    if (variant == Variant::LoadFirst) k.load(k.view(a, {row, zero}, {bm, bk}), std::nullopt, {200, 210});
    ValueId kIndex = variant == Variant::CarriedOffset ? k.cast(k.reduceAll(ReduceKind::Sum, iters[0]), DType::I32) : kt;
    ValueId kOff = k.mul(kIndex, k.i32(bk));
    ValueId aDst = variant == Variant::PartialBuffer ? k.view(aS, {zero, zero}, {bm, bk / 2}, {300, 310})
                                                     : k.view(aS, {zero, zero}, {bm, bk});
    k.b.create(OpKind::CopyAsync, {aDst, k.view(a, {row, kOff}, {bm, bk})}, {}, {400, 410});
    ValueId bDst = variant == Variant::SameBufferTwice ? k.view(aS, {zero, zero}, {bm, bk}) : k.view(bS, {zero, zero}, {bk, bn});
    ValueId bSrc = variant == Variant::SameBufferTwice ? k.view(a, {row, kOff}, {bm, bk}) : k.view(b, {kOff, col}, {bk, bn});
    k.b.create(OpKind::CopyAsync, {bDst, bSrc}, {}, {500, 510});
    if (variant == Variant::BarrierInBody) k.b.create(OpKind::Barrier, {}, {}, {600, 609});
    ValueId acc = iters[0];
    if (variant == Variant::NestedUse) {
      acc = k.forLoop(zero, k.i32(2), k.i32(1), {acc}, [&](ValueId, std::vector<ValueId> inner) {
        return std::vector<ValueId>{
            k.dot(k.view(aS, {zero, zero}, {bm, bk}), k.view(bS, {zero, zero}, {bk, bn}), inner[0])};
      })[0];
    } else {
      acc = k.dot(k.view(aS, {zero, zero}, {bm, bk}), k.view(bS, {zero, zero}, {bk, bn}), acc);
    }
    if (variant == Variant::LateCopy)
      k.b.create(OpKind::CopyAsync, {k.view(bS, {zero, zero}, {bk, bn}), k.view(b, {kOff, col}, {bk, bn})}, {}, {650, 660});
    return std::vector<ValueId>{acc};
  }, {50, 60});
  if (variant == Variant::BufferUsedAfter) k.load(k.view(bS, {zero, zero}, {bk, bn}, {700, 710}));
  k.store(k.view(c, {row, col}, {bm, bn}), results[0]);
  for (auto& op : k.fn->body.ops)
    if (op->kind == OpKind::For) ForAttrs(op->attrs).stages(stages);
  Gemm g{std::move(k.fn), aS, bS};
  return g;
}

std::vector<PipelineProblem> problemsOf(Variant variant) {
  Gemm g = makeGemm(3, -1, variant);
  const Op* loop = findFor(g.fn->body);
  std::vector<PipelineProblem> found = findPipeliningProblems(*g.fn, *loop);
  // The pass finds the same problems and leaves the loop alone.
  std::string before = print(*g.fn);
  std::vector<PipelineProblem> again = applyPipelining(*g.fn);
  EXPECT_EQ(again.size(), found.size());
  EXPECT_EQ(print(*g.fn), before);
  return found;
}

TEST(Pipeline, BuildsPrologueSteadyStateAndEpilogue) {
  Gemm g = makeGemm(3);
  ASSERT_TRUE(verify(*g.fn).empty());
  EXPECT_TRUE(applyPipelining(*g.fn).empty());
  std::vector<std::string> errors = verify(*g.fn);
  EXPECT_TRUE(errors.empty()) << errors.front() << "\n" << print(*g.fn);
  std::string text = print(*g.fn);

  // Each buffer has one stage per copy in flight, same dtype.
  EXPECT_EQ(g.fn->typeOf(g.aS), Type::shared(DType::F32, {3, 32, 16}));
  EXPECT_EQ(g.fn->typeOf(g.bS), Type::shared(DType::F32, {3, 16, 32}));

  const Op* loop = findFor(g.fn->body);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(ForOp(*loop).stages(), 0);
  // Prologue: S-1 = 2 guarded steps, each committing one group.
  size_t loopIndex = 0;
  while (g.fn->body.ops[loopIndex].get() != loop) ++loopIndex;
  int prologueIfs = 0, prologueCommits = 0;
  for (size_t i = 0; i < loopIndex; ++i) {
    prologueIfs += g.fn->body.ops[i]->kind == OpKind::If;
    prologueCommits += g.fn->body.ops[i]->kind == OpKind::CommitGroup;
  }
  EXPECT_EQ(prologueIfs, 2);
  EXPECT_EQ(prologueCommits, 2);
  // Epilogue: wait for everything, then a barrier, then the store.
  ASSERT_GE(g.fn->body.ops.size(), loopIndex + 3);
  EXPECT_EQ(g.fn->body.ops[loopIndex + 1]->kind, OpKind::WaitGroup);
  EXPECT_EQ(WaitGroupOp(*g.fn->body.ops[loopIndex + 1]).pending(), 0);
  EXPECT_EQ(g.fn->body.ops[loopIndex + 2]->kind, OpKind::Barrier);

  // Steady state: wait(S-2), barrier, guarded look-ahead copies, commit, stage, compute.
  const Block& body = loop->regions[0];
  std::vector<OpKind> k = kinds(body);
  ASSERT_GE(k.size(), 6u);
  EXPECT_EQ(k[0], OpKind::WaitGroup);
  EXPECT_EQ(WaitGroupOp(*body.ops[0]).pending(), 1);
  EXPECT_EQ(k[1], OpKind::Barrier);
  auto ifAt = std::find(k.begin(), k.end(), OpKind::If);
  auto commitAt = std::find(k.begin(), k.end(), OpKind::CommitGroup);
  auto dotAt = std::find(k.begin(), k.end(), OpKind::Dot);
  ASSERT_NE(ifAt, k.end());
  EXPECT_LT(ifAt, commitAt);
  EXPECT_LT(commitAt, dotAt);
  EXPECT_EQ(std::count(k.begin(), k.end(), OpKind::CopyAsync), 0);  // only under the guard
  const Op& guard = *body.ops[static_cast<size_t>(ifAt - k.begin())];
  std::vector<OpKind> guarded = kinds(guard.regions[0]);
  EXPECT_EQ(std::count(guarded.begin(), guarded.end(), OpKind::CopyAsync), 2);
  EXPECT_EQ(kinds(guard.regions[1]), std::vector<OpKind>{OpKind::Yield});

  // The dead copies' views are gone: the steady body keeps one view per dot operand.
  EXPECT_EQ(std::count(k.begin(), k.end(), OpKind::View), 2);
  // Every view of a staged buffer names a stage: base, stage, then the original offsets.
  std::function<void(const Block&)> checkViews = [&](const Block& block) {
    for (const auto& op : block.ops) {
      if (op->kind == OpKind::View && (ViewOp(*op).base() == g.aS || ViewOp(*op).base() == g.bS)) {
        EXPECT_EQ(op->operands.size(), 4u);
      }
      for (const Block& region : op->regions) checkViews(region);
    }
  };
  checkViews(g.fn->body);
  EXPECT_EQ(count(text, "commit_group"), 3u);
  EXPECT_EQ(count(text, "copy_async"), 6u);  // 2 prologue steps + the look-ahead, 2 buffers each
  EXPECT_NE(text.find("wait_group 1"), std::string::npos);
  EXPECT_NE(text.find("wait_group 0"), std::string::npos);
}

TEST(Pipeline, LookAheadIsLoopVariablePlusStagesMinusOne) {
  Gemm g = makeGemm(4);
  ASSERT_TRUE(applyPipelining(*g.fn).empty());
  const Op* loop = findFor(g.fn->body);
  const Block& body = loop->regions[0];
  ValueId j = body.args[0];
  const Op* ahead = nullptr;
  for (const auto& op : body.ops)
    if (op->kind == OpKind::Binary && BinaryOp(*op).binaryKind() == BinaryKind::Add && BinaryOp(*op).lhs() == j)
      ahead = op.get();
  ASSERT_NE(ahead, nullptr);
  const Op* three = g.fn->values[BinaryOp(*ahead).rhs()].def;
  ASSERT_NE(three, nullptr);
  EXPECT_EQ(ConstOp(*three).intValue(), 3);
  EXPECT_EQ(WaitGroupOp(*body.ops[0]).pending(), 2);  // wait_group(S-2)
  // The guarded copies read the look-ahead iteration: their source offsets use it.
  std::string text = print(*g.fn);
  EXPECT_EQ(count(text, "commit_group"), 4u);
  EXPECT_TRUE(verify(*g.fn).empty());
}

TEST(Pipeline, ConstantTripCountSmallerThanThePrologue) {
  Gemm g = makeGemm(4, 1);
  ASSERT_TRUE(applyPipelining(*g.fn).empty());
  EXPECT_TRUE(verify(*g.fn).empty()) << print(*g.fn);
  const Op* loop = findFor(g.fn->body);
  int copies = 0, commits = 0, ifs = 0;
  for (const auto& op : g.fn->body.ops) {
    if (op.get() == loop) break;
    copies += op->kind == OpKind::CopyAsync;
    commits += op->kind == OpKind::CommitGroup;
    ifs += op->kind == OpKind::If;
  }
  EXPECT_EQ(copies, 2);   // only iteration 0: a_s and b_s
  EXPECT_EQ(commits, 3);  // but one group per prologue step, so the waits count right
  EXPECT_EQ(ifs, 0);      // folded: n is a constant
}

TEST(Pipeline, ZeroTripCount) {
  Gemm g = makeGemm(3, 0);
  ASSERT_TRUE(applyPipelining(*g.fn).empty());
  EXPECT_TRUE(verify(*g.fn).empty()) << print(*g.fn);
  const Op* loop = findFor(g.fn->body);
  int copies = 0, commits = 0;
  for (const auto& op : g.fn->body.ops) {
    if (op.get() == loop) break;
    copies += op->kind == OpKind::CopyAsync;
    commits += op->kind == OpKind::CommitGroup;
  }
  EXPECT_EQ(copies, 0);
  EXPECT_EQ(commits, 2);
}

TEST(Pipeline, RuntimeTripCountGuardsEveryPrologueStep) {
  Gemm g = makeGemm(2);
  ASSERT_TRUE(applyPipelining(*g.fn).empty());
  EXPECT_TRUE(verify(*g.fn).empty());
  const Op* loop = findFor(g.fn->body);
  EXPECT_EQ(loop->regions[0].ops[0]->kind, OpKind::WaitGroup);
  EXPECT_EQ(WaitGroupOp(*loop->regions[0].ops[0]).pending(), 0);  // two stages: wait for everything
  EXPECT_EQ(g.fn->typeOf(g.aS).shape, (std::vector<int64_t>{2, 32, 16}));
}

TEST(Pipeline, ViewsInNestedRegionsReadTheStage) {
  Gemm g = makeGemm(3, -1, Variant::NestedUse);
  ASSERT_TRUE(applyPipelining(*g.fn).empty());
  std::vector<std::string> errors = verify(*g.fn);
  EXPECT_TRUE(errors.empty()) << errors.front();
}

TEST(Pipeline, PlainLoopsAreUntouched) {
  Gemm g = makeGemm(0);
  std::string before = print(*g.fn);
  EXPECT_TRUE(applyPipelining(*g.fn).empty());
  EXPECT_EQ(print(*g.fn), before);
}

TEST(PipelineProblems, ExplicitBarrier) {
  auto p = problemsOf(Variant::BarrierInBody);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, PipelineProblem::Kind::ExplicitSync);
  EXPECT_EQ(p[0].range, (SourceRange{600, 609}));
}

TEST(PipelineProblems, BodyMustStartWithCopies) {
  auto p = problemsOf(Variant::LoadFirst);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, PipelineProblem::Kind::NoLeadingCopy);
  EXPECT_EQ(p[0].range, (SourceRange{200, 210}));
}

TEST(PipelineProblems, CopyAfterTheComputation) {
  auto p = problemsOf(Variant::LateCopy);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, PipelineProblem::Kind::LateCopy);
  EXPECT_EQ(p[0].range, (SourceRange{650, 660}));
}

TEST(PipelineProblems, PartOfABuffer) {
  auto p = problemsOf(Variant::PartialBuffer);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, PipelineProblem::Kind::PartialBuffer);
  EXPECT_EQ(p[0].range, (SourceRange{400, 410}));
}

TEST(PipelineProblems, OneBufferTwice) {
  auto p = problemsOf(Variant::SameBufferTwice);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, PipelineProblem::Kind::BufferCopiedTwice);
  EXPECT_EQ(p[0].range, (SourceRange{500, 510}));
  EXPECT_EQ(p[0].related, (SourceRange{400, 410}));
}

TEST(PipelineProblems, SourceDependsOnALoopCarriedValue) {
  auto p = problemsOf(Variant::CarriedOffset);
  ASSERT_GE(p.size(), 1u);
  EXPECT_EQ(p[0].kind, PipelineProblem::Kind::SourceNotComputable);
}

TEST(PipelineProblems, BufferUsedAfterTheLoop) {
  auto p = problemsOf(Variant::BufferUsedAfter);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, PipelineProblem::Kind::BufferUsedOutside);
  EXPECT_EQ(p[0].range, (SourceRange{700, 710}));
  EXPECT_EQ(p[0].related, (SourceRange{50, 60}));
}

TEST(PipelineProblems, OnlyLoopsFromZeroWithStepOne) {
  auto p = problemsOf(Variant::StepTwo);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, PipelineProblem::Kind::BadLoop);
}

}  // namespace
}  // namespace argus::ir
