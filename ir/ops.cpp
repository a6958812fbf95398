#include "ir/ops.h"

#include <iterator>

#include "ir/async.h"

namespace argus::ir {

namespace {

// Each op's effect list, with a default entry at its end so that an op without effects still
// has a (one-element) array; the table's spans leave that entry out.
#define ARGUS_OP(Kind, name, minOperands, maxOperands, results, regions, sync, traits) \
  constexpr EffectDecl k##Kind##Effects[] = {
#define ARGUS_EFFECT(access, operand, space, proxy, completion, elements)                    \
  EffectDecl{MemoryAccess::access, operand, EffectSpace::space, MemoryProxy::proxy, \
             Completion::completion, EffectElements::elements},
#define ARGUS_END_OP \
  EffectDecl{}       \
  }                  \
  ;
#include "ir/ops.def"
#undef ARGUS_OP
#undef ARGUS_EFFECT
#undef ARGUS_END_OP

#define ARGUS_OP(Kind, name, minOperands, maxOperands, results, regions, sync, traits) \
  OpInfo{name,                                                                         \
         minOperands,                                                                  \
         maxOperands,                                                                  \
         results,                                                                      \
         regions,                                                                      \
         SyncKind::sync,                                                               \
         traits,                                                                       \
         std::span<const EffectDecl>(k##Kind##Effects, std::size(k##Kind##Effects) - 1)},
const OpInfo kOpInfo[] = {
#include "ir/ops.def"
};
#include "ir/ops_undef.def"

static_assert(std::size(kOpInfo) == kNumOpKinds, "ir/ops.def and OpKind disagree");

}  // namespace

const OpInfo& opInfo(OpKind kind) { return kOpInfo[static_cast<size_t>(kind)]; }

std::optional<Layout> effectLayout(const Function& fn, const Op& op, const EffectDecl& effect) {
  auto tileLayout = [&](ValueId id) -> std::optional<Layout> {
    if (id >= fn.values.size() || !fn.values[id].type.isTile()) return std::nullopt;
    return fn.values[id].type.layout;
  };
  switch (effect.elements) {
    case EffectElements::ResultLayout: return op.results.empty() ? std::nullopt : tileLayout(op.results[0]);
    case EffectElements::StoredValueLayout: {
      auto store = as<StoreOp>(op);
      return store ? tileLayout(store->value()) : std::nullopt;
    }
    case EffectElements::AccumulatorLayout: {
      auto dot = as<DotOp>(op);
      return dot ? tileLayout(dot->acc()) : std::nullopt;
    }
    case EffectElements::AsyncCopyChunks: {
      if (effect.operand >= op.operands.size() || op.operands[effect.operand] >= fn.values.size()) return std::nullopt;
      const Type& view = fn.values[op.operands[effect.operand]].type;
      return asyncCopyChunkLayout(view.dtype, view.shape);
    }
    case EffectElements::WholeViewOneThread: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<size_t> writtenViewOperand(OpKind kind) {
  for (const EffectDecl& effect : opInfo(kind).effects)
    if (effect.access == MemoryAccess::Write) return effect.operand;
  return std::nullopt;
}

std::optional<size_t> writtenDataOperand(OpKind kind) {
  switch (kind) {
#define ARGUS_OP(Kind, name, minOperands, maxOperands, results, regions, sync, traits) case OpKind::Kind: {
#define ARGUS_WRITES_FROM(operand) return size_t{operand};
#define ARGUS_END_OP \
  return std::nullopt; \
  }
#include "ir/ops.def"
#include "ir/ops_undef.def"
  }
  return std::nullopt;
}

bool writesOperand(OpKind kind, size_t operand) {
  for (const EffectDecl& effect : opInfo(kind).effects)
    if (effect.operand == operand && effect.access == MemoryAccess::Write) return true;
  return false;
}

std::optional<int64_t> constantInt(const Function& fn, ValueId v) {
  if (v >= fn.values.size()) return std::nullopt;
  const Value& value = fn.values[v];
  if (!value.def || value.def->kind != OpKind::Const || !value.type.isScalar() || isFloat(value.type.dtype))
    return std::nullopt;
  return ConstOp(*value.def).intValue();
}

std::vector<MemoryEffect> memoryEffects(const Function& fn, const Op& op) {
  std::vector<MemoryEffect> out;
  for (const EffectDecl& decl : opInfo(op.kind).effects) {
    if (decl.operand >= op.operands.size()) continue;
    ValueId view = op.operands[decl.operand];
    if (view >= fn.values.size()) continue;
    const Type& type = fn.values[view].type;
    if (type.kind != TypeKind::View) continue;
    out.push_back(MemoryEffect{&decl, view, type.space});
  }
  return out;
}

}  // namespace argus::ir
