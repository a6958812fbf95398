// ir/ops.def as the one definition of each op: the derived names, counts and accessors, and
// the memory effects that the checker's access collection reads.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "ir/ops.h"

namespace argus::ir {
namespace {

OpKind kindAt(size_t i) { return static_cast<OpKind>(i); }

TEST(OpTable, NamesAreUniqueAndCountsConsistent) {
  std::set<std::string> names;
  for (size_t i = 0; i < kNumOpKinds; ++i) {
    const OpInfo& info = opInfo(kindAt(i));
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate op name " << info.name;
    EXPECT_STREQ(opKindName(kindAt(i)), info.name);
    EXPECT_GE(info.minOperands, 0) << info.name;
    if (info.maxOperands >= 0) {
      EXPECT_LE(info.minOperands, info.maxOperands) << info.name;
    }
    EXPECT_EQ(info.regions > 0, info.has(kControl)) << info.name;
    for (const EffectDecl& effect : info.effects) {
      if (info.maxOperands >= 0) {
        EXPECT_LT(effect.operand, info.maxOperands) << info.name;
      }
      EXPECT_FALSE(info.has(kPure)) << info.name << " is pure but declares a memory effect";
    }
    if (info.sync != SyncKind::None) {
      EXPECT_FALSE(info.has(kPure)) << info.name << " is pure but synchronizes";
    }
  }
  EXPECT_EQ(names.size(), kNumOpKinds);
}

// The checker's tag flow follows data into memory through these two; an op that writes
// memory without naming where the data comes from would be invisible to it.
TEST(OpTable, EveryWriteNamesItsViewAndItsData) {
  for (size_t i = 0; i < kNumOpKinds; ++i) {
    const OpInfo& info = opInfo(kindAt(i));
    std::optional<size_t> view = writtenViewOperand(kindAt(i)), data = writtenDataOperand(kindAt(i));
    EXPECT_EQ(view.has_value(), data.has_value()) << info.name << ": a Write effect needs ARGUS_WRITES_FROM and back";
    if (view && data) {
      EXPECT_NE(*view, *data) << info.name;
      EXPECT_LT(static_cast<int>(*data), info.minOperands) << info.name << ": the written data must be a required operand";
    }
  }
  EXPECT_EQ(writtenViewOperand(OpKind::Store), 0u);
  EXPECT_EQ(writtenDataOperand(OpKind::Store), 1u);
  EXPECT_EQ(writtenDataOperand(OpKind::CopyBulk), 1u);
  EXPECT_FALSE(writtenDataOperand(OpKind::Load).has_value());
}

TEST(OpTable, ArithmeticIsTheDeclaredTrait) {
  EXPECT_TRUE(isArithmetic(OpKind::Fma));
  EXPECT_TRUE(isArithmetic(OpKind::Cast));
  EXPECT_FALSE(isArithmetic(OpKind::Splat));  // pure, but builds a tile
  EXPECT_FALSE(isArithmetic(OpKind::Load));
  EXPECT_TRUE(opInfo(OpKind::Splat).has(kPure));
  EXPECT_FALSE(opInfo(OpKind::Splat).has(kArithmetic));
}

// A function with a shared buffer, a global tensor and one op under test appended by `body`.
struct Fixture {
  Function fn;
  Builder b{fn, &fn.body};
  ValueId tensor, buffer, zero;
  Fixture() {
    tensor = b.addBlockArg(fn.body, Type::tensor(DType::F16, {64, 64}), "x");
    buffer = b.make(OpKind::AllocShared, {}, Type::shared(DType::F16, {64, 64}), {});
    zero = b.constInt(0, DType::I32);
  }
  ValueId sharedView() { return b.make(OpKind::View, {buffer, zero, zero}, Type::view(MemSpace::Shared, DType::F16, {64, 64}), {}); }
  ValueId globalView() { return b.make(OpKind::View, {tensor, zero, zero}, Type::view(MemSpace::Global, DType::F16, {64, 64}), {}); }
};

// The typed editors and getters generated from one ARGUS_ATTR / ARGUS_FLAG line agree, and
// attributes that share a field (a flag word, the list of names) do not disturb each other.
TEST(OpAttrs, EditorsAndGettersAgree) {
  Op dot;
  dot.kind = OpKind::Dot;
  DotAttrs(dot.attrs).transB(true).wgmmaInFlight(true);
  EXPECT_TRUE(DotOp(dot).transB());
  EXPECT_TRUE(DotOp(dot).wgmmaInFlight());
  DotAttrs(dot.attrs).transB(false);
  EXPECT_FALSE(DotOp(dot).transB());
  EXPECT_TRUE(DotOp(dot).wgmmaInFlight()) << "clearing one flag cleared its neighbour";

  Op loop;
  loop.kind = OpKind::For;
  ForAttrs(loop.attrs).stages(3).specialize(true);
  EXPECT_EQ(ForOp(loop).stages(), 3);
  EXPECT_TRUE(ForOp(loop).specialize());
  ForAttrs(loop.attrs).stages(0);  // the pipelining pass clears the stages, not the request
  EXPECT_TRUE(ForOp(loop).specialize());

  Op init;
  init.kind = OpKind::MbarrierInit;
  MbarrierInitAttrs(init.attrs).arrivals(256).clusterRelease(true);
  EXPECT_EQ(MbarrierInitOp(init).arrivals(), 256);
  EXPECT_TRUE(MbarrierInitOp(init).clusterRelease());

  Op reduce;
  reduce.kind = OpKind::Reduce;
  ReduceAttrs(reduce.attrs).reduceKind(ReduceKind::Max).axis(1);
  EXPECT_EQ(reduceKindOf(reduce), ReduceKind::Max);
  EXPECT_EQ(ReduceOp(reduce).axis(), 1);

  Op assertion;
  assertion.kind = OpKind::Assert;
  EXPECT_EQ(AssertOp(assertion).message(), "") << "an absent name reads as empty, not a throw";
  AssertAttrs(assertion.attrs).names({"", "origin"}).message("the K slices agree");
  EXPECT_EQ(AssertOp(assertion).message(), "the K slices agree");
  ASSERT_EQ(AssertOp(assertion).names().size(), 2u) << "setting the message kept the tag names";
  EXPECT_EQ(AssertOp(assertion).names()[1], "origin");

  Op tag;
  tag.kind = OpKind::TagSet;
  TagSetAttrs(tag.attrs).tagName("kt");
  EXPECT_EQ(TagSetOp(tag).tagName(), "kt");
}

TEST(OpEffects, CopyAsyncWritesSharedThroughItsGroupAndReadsGlobal) {
  Fixture f;
  ValueId dst = f.sharedView(), src = f.globalView();
  Op& copy = f.b.create(OpKind::CopyAsync, {dst, src}, {}, {});
  std::vector<MemoryEffect> effects = memoryEffects(f.fn, copy);
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_EQ(effects[0].view, dst);
  EXPECT_EQ(effects[0].space, MemSpace::Shared);
  EXPECT_EQ(effects[0].decl->access, MemoryAccess::Write);
  EXPECT_EQ(effects[0].decl->completion, Completion::AsyncGroup);
  EXPECT_EQ(effects[1].view, src);
  EXPECT_EQ(effects[1].space, MemSpace::Global);
  EXPECT_EQ(effects[1].decl->access, MemoryAccess::Read);
  CopyAsyncOp typed(copy);
  EXPECT_EQ(typed.dst(), dst);
  EXPECT_EQ(typed.src(), src);
}

TEST(OpEffects, DotWithARegisterOperandReadsOnlyB) {
  Fixture f;
  Type tile = Type::tile(DType::F16, Layout::canonical({64, 64}));
  Type acc = Type::tile(DType::F32, Layout::canonical({64, 64}));
  ValueId a = f.b.make(OpKind::Load, {f.sharedView()}, tile, {});
  ValueId b = f.sharedView();
  ValueId zero = f.b.make(OpKind::Splat, {f.b.constFloat(0, DType::F32)}, acc, {});
  Attrs trans;
  DotAttrs(trans).transB(true);
  Op& dot = f.b.create(OpKind::Dot, {a, b, zero}, {acc}, {}, trans);
  std::vector<MemoryEffect> effects = memoryEffects(f.fn, dot);
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(effects[0].view, b);
  EXPECT_EQ(effects[0].decl->operand, 1);
  auto typed = as<DotOp>(dot);
  ASSERT_TRUE(typed.has_value());
  EXPECT_TRUE(typed->transB());
  EXPECT_FALSE(typed->wgmmaInFlight());
  EXPECT_EQ(typed->acc(), zero);
  EXPECT_FALSE(as<StoreOp>(dot).has_value());
}

TEST(OpEffects, OptionalOperandsAndTheirEffects) {
  Fixture f;
  ValueId bars = f.b.make(OpKind::AllocShared, {}, Type::shared(DType::U64, {2}), {});
  Op& leading = f.b.create(OpKind::CopyBulk, {f.sharedView(), f.globalView()}, {}, {});
  CopyBulkOp copy(leading);
  EXPECT_EQ(copy.bars(), kNoValue);
  EXPECT_EQ(copy.index(), kNoValue);
  Op& inLoop = f.b.create(OpKind::CopyBulk, {f.sharedView(), f.globalView(), bars, f.zero}, {}, {});
  EXPECT_EQ(CopyBulkOp(inLoop).bars(), bars);
  std::vector<MemoryEffect> effects = memoryEffects(f.fn, inLoop);
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_EQ(effects[0].decl->completion, Completion::Mbarrier);
  EXPECT_EQ(effects[0].decl->proxy, MemoryProxy::Bulk);
  EXPECT_EQ(opInfo(OpKind::MbarrierWait).sync, SyncKind::MbarrierWait);
  EXPECT_TRUE(memoryEffects(f.fn, *f.fn.body.ops.front()).empty());  // alloc_shared
}

TEST(OpVerify, CountsAndSpacesComeFromTheTable) {
  Fixture f;
  f.b.create(OpKind::CopyAsync, {f.globalView(), f.globalView()}, {}, {});
  f.b.create(OpKind::Barrier, {f.zero}, {}, {});
  f.b.create(OpKind::View, {}, {Type::view(MemSpace::Global, DType::F16, {64})}, {});
  std::vector<std::string> errors = verify(f.fn);
  auto mentions = [&](const std::string& text) {
    for (const std::string& e : errors)
      if (e.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(mentions("operand 0 must be a shared view")) << ::testing::PrintToString(errors);
  EXPECT_TRUE(mentions("barrier: expects 0 operands, got 1") || mentions("expects 0 operands, got 1"))
      << ::testing::PrintToString(errors);
  EXPECT_TRUE(mentions("expects 1 or more operands, got 0")) << ::testing::PrintToString(errors);
}

}  // namespace
}  // namespace argus::ir
