// The race check reads which shared memory each op touches from ir/ops.def. Every declared
// effect on shared memory must be one it can encode, or one another check owns (writes that
// complete on an mbarrier: the mbarrier check), so that no op's accesses are skipped unseen.
#include <gtest/gtest.h>

#include "checker/sync_walk.h"

namespace argus::checker {
namespace {

TEST(CheckerEffects, EverySharedEffectInTheOpTableIsEncodedOrOwnedByTheMbarrierCheck) {
  int encoded = 0;
  for (size_t i = 0; i < ir::kNumOpKinds; ++i) {
    const auto kind = static_cast<ir::OpKind>(i);
    for (const ir::EffectDecl& effect : ir::opInfo(kind).effects) {
      if (effect.space == ir::EffectSpace::Global) continue;  // invariant_separation.cpp
      if (effect.completion == ir::Completion::Mbarrier) continue;
      EXPECT_TRUE(accessRoleOf(kind, effect).has_value())
          << ir::opKindName(kind) << " operand " << int(effect.operand)
          << ": a shared-memory effect the race check cannot encode";
      ++encoded;
    }
  }
  EXPECT_GE(encoded, 5);  // load, store, both dot operands, copy_async's destination
}

TEST(CheckerEffects, EveryGlobalWriteInTheOpTableIsOneTheSeparationCheckEncodes) {
  // invariant_separation.cpp encodes a store's tile (its primary owners); any other global
  // write would be "cannot prove" there.
  int writes = 0;
  for (size_t i = 0; i < ir::kNumOpKinds; ++i) {
    const auto kind = static_cast<ir::OpKind>(i);
    for (const ir::EffectDecl& effect : ir::opInfo(kind).effects) {
      if (effect.access != ir::MemoryAccess::Write || effect.space == ir::EffectSpace::Shared) continue;
      EXPECT_EQ(effect.elements, ir::EffectElements::StoredValueLayout) << ir::opKindName(kind);
      ++writes;
    }
  }
  EXPECT_GE(writes, 1);  // store
}

TEST(CheckerEffects, AnEffectWithoutAnEncodingIsNotGivenARole) {
  // A write of a whole view by one thread that completes at once (no such op today): the
  // collector would list its op as unmodeled, and the race check says "cannot prove".
  ir::EffectDecl oneThreadWrite{ir::MemoryAccess::Write, 0, ir::EffectSpace::Shared, ir::MemoryProxy::Generic,
                                ir::Completion::AtOnce, ir::EffectElements::WholeViewOneThread};
  EXPECT_FALSE(accessRoleOf(ir::OpKind::Store, oneThreadWrite).has_value());
  ir::EffectDecl dotWrite{ir::MemoryAccess::Write, 1, ir::EffectSpace::Shared, ir::MemoryProxy::Generic,
                          ir::Completion::AtOnce, ir::EffectElements::AccumulatorLayout};
  EXPECT_FALSE(accessRoleOf(ir::OpKind::Dot, dotWrite).has_value());
  ir::EffectDecl dotB{ir::MemoryAccess::Read, 1, ir::EffectSpace::Shared, ir::MemoryProxy::Generic,
                      ir::Completion::AtOnce, ir::EffectElements::AccumulatorLayout};
  EXPECT_EQ(accessRoleOf(ir::OpKind::Dot, dotB, /*transB=*/true), AccessRole::DotBTransposed);
}

}  // namespace
}  // namespace argus::checker
