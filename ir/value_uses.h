// Who uses each value of a function body, which op each yield returns to, and
// which loop carries each region argument: the index the layout passes
// (ir/dot_layout.cpp, ir/vector_layout.cpp) walk a value's family with.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace argus::ir {

struct ValueUses {
  std::map<ValueId, std::vector<std::pair<const Op*, size_t>>> users;  // (user, operand index)
  std::map<const Op*, const Op*> parentOf;                             // yield -> the op whose region it ends
  std::map<ValueId, std::pair<const Op*, size_t>> loopOfArg;           // region argument -> (loop, carried index)

  // Recursion per nesting level of regions, which the front end bounds (frontend/limits.h).
  void index(const Block& block, const Op* parent = nullptr) {
    for (const auto& op : block.ops) {
      for (size_t i = 0; i < op->operands.size(); ++i) users[op->operands[i]].push_back({op.get(), i});
      if (op->kind == OpKind::Yield) parentOf[op.get()] = parent;
      if (op->kind == OpKind::For && !op->regions.empty())
        for (size_t i = 1; i < op->regions[0].args.size(); ++i) loopOfArg[op->regions[0].args[i]] = {op.get(), i - 1};
      for (const Block& region : op->regions) index(region, op.get());
    }
  }

  static const Op* yieldOf(const Block& block) {
    return !block.ops.empty() && block.ops.back()->kind == OpKind::Yield ? block.ops.back().get() : nullptr;
  }
};

}  // namespace argus::ir
