// Use-def chains are as long as the kernel (`j = j * 3 + i`, a thousand
// times): encoders that build a term from its operands' terms must not recurse
// along them. operandsFirst lists the not-yet-encoded values a term needs, each
// after the values it is built from, with an explicit stack; encoding them in
// that order leaves the encoder one level of recursion per call.
#pragma once

#include <utility>
#include <vector>

#include "ir/ir.h"
#include "ir/ops.h"

namespace argus::checker {

// `inputs(v)`: the values v's term reads; `known(v)`: v is already encoded.
// The result ends with `root` itself (unless it is known).
template <class Inputs, class Known>
std::vector<ir::ValueId> operandsFirst(ir::ValueId root, Inputs&& inputs, Known&& known) {
  std::vector<ir::ValueId> order;
  std::vector<bool> done;  // by value id: in `order`
  auto isDone = [&](ir::ValueId v) { return known(v) || (v < done.size() && done[v]); };
  // (value, its inputs are pushed). A value may be pushed twice (shared by two
  // users); the copy on top finishes first and the other is then skipped.
  std::vector<std::pair<ir::ValueId, bool>> work{{root, false}};
  while (!work.empty()) {
    auto [v, expanded] = work.back();
    if (isDone(v)) {
      work.pop_back();
    } else if (expanded) {
      work.pop_back();
      order.push_back(v);
      if (v >= done.size()) done.resize(v + 1, false);
      done[v] = true;
    } else {
      work.back().second = true;
      for (ir::ValueId input : inputs(v))
        if (!isDone(input)) work.push_back({input, false});
    }
  }
  return order;
}

// The operands an i32 binary operation's term is built from; nothing for other values.
inline std::vector<ir::ValueId> binaryOperands(const ir::Function& fn, ir::ValueId id) {
  if (id >= fn.values.size()) return {};
  const ir::Value& v = fn.values[id];
  if (!v.def || v.def->kind != ir::OpKind::Binary || v.def->operands.size() != 2) return {};
  if (!v.type.isScalar() || v.type.dtype != ir::DType::I32) return {};
  const ir::BinaryOp bin(*v.def);
  return {bin.lhs(), bin.rhs()};
}

}  // namespace argus::checker
