// The scalar side of the tag flow: the IR's i32 arithmetic as 32-bit Z3
// terms (loop variables, program_id, runtime sizes, + - * // % and friends),
// branch conditions, and the launch every query assumes.
#include <algorithm>

#include "checker/scalar_semantics.h"
#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::OpKind;

void TagFlow::prepass(const ir::Block& block, std::vector<const ir::Op*>& enclosing) {
  for (const auto& op : block.ops) {
    for (ir::ValueId r : op->results) valueLoops_[r] = enclosing;
    if (op->kind == OpKind::For) {
      loopJ_.emplace(op.get(), ctx_.bv_const(("j" + std::to_string(loopJ_.size())).c_str(), 32));
      enclosing.push_back(op.get());
      for (ir::ValueId a : op->regions[0].args) valueLoops_[a] = enclosing;
      prepass(op->regions[0], enclosing);
      enclosing.pop_back();
    } else {
      for (const ir::Block& region : op->regions) prepass(region, enclosing);
    }
  }
}

// A scalar the encoding does not interpret: one unknown per instance of the
// loops around its definition (an uninterpreted function of their iterations).
z3::expr TagFlow::opaque(ir::ValueId id) {
  std::string name = "v" + std::to_string(id);
  std::vector<z3::expr> js;
  for (const ir::Op* loop : valueLoops_[id]) js.push_back(loopJ_.at(loop));
  if (js.empty()) return ctx_.bv_const(name.c_str(), 32);
  z3::sort_vector domain(ctx_);
  z3::expr_vector args(ctx_);
  for (const z3::expr& j : js) {
    domain.push_back(ctx_.bv_sort(32));
    args.push_back(j);
  }
  return ctx_.function(name.c_str(), domain, ctx_.bv_sort(32))(args);
}

// The i32 values whose terms scalarTerm(id) is built from: a binary op's
// operands, a loop variable's bounds. Must match scalarTerm's reads.
std::vector<ir::ValueId> TagFlow::scalarInputs(ir::ValueId id) const {
  const ir::Value* value = id < fn_.values.size() ? &fn_.values[id] : nullptr;
  if (!value || !value->type.isScalar() || value->type.dtype != ir::DType::I32) return {};
  if (const ir::Op* def = value->def) {
    if (def->kind == OpKind::Binary) {
      const ir::BinaryOp bin(*def);
      return {bin.lhs(), bin.rhs()};
    }
    return {};
  }
  std::vector<ir::ValueId> inputs;
  for (const auto& [loop, j] : loopJ_)  // For ops (prepass)
    if (!loop->regions[0].args.empty() && loop->regions[0].args[0] == id && loop->operands.size() >= 3)
      inputs.insert(inputs.end(), {ir::ForOp(*loop).lowerBound(), ir::ForOp(*loop).step()});
  return inputs;
}

// A chain of dependent statements (`j = j * 3 + i`, a thousand times) is a
// use-def chain as long as the kernel: the terms are built inputs first from an
// explicit stack, so that scalarTerm's own calls of scalar() are cache hits and
// nothing recurses along the chain.
z3::expr TagFlow::scalar(ir::ValueId id) {
  if (auto it = scalars_.find(id); it != scalars_.end()) return it->second;
  std::vector<std::pair<ir::ValueId, bool>> work{{id, false}};  // (value, its inputs are pushed)
  while (!work.empty()) {
    auto [v, expanded] = work.back();
    if (scalars_.count(v)) {
      work.pop_back();
    } else if (expanded) {
      work.pop_back();
      scalarTerm(v);
    } else {
      work.back().second = true;
      for (ir::ValueId input : scalarInputs(v))
        if (!scalars_.count(input)) work.push_back({input, false});
    }
  }
  return scalars_.at(id);
}

z3::expr TagFlow::scalarTerm(ir::ValueId id) {
  if (auto it = scalars_.find(id); it != scalars_.end()) return it->second;
  z3::expr result = bv(0);
  const ir::Value* value = id < fn_.values.size() ? &fn_.values[id] : nullptr;
  const ir::Op* def = value ? value->def : nullptr;
  bool i32 = value && value->type.isScalar() && value->type.dtype == ir::DType::I32;
  if (!i32) {
    result = opaque(id);
  } else if (!def) {
    bool found = false;
    for (const auto& [loop, j] : loopJ_) {
      if (loop->regions[0].args.empty() || loop->regions[0].args[0] != id || loop->operands.size() < 3) continue;
      const ir::ForOp forOp(*loop);
      z3::expr lb = scalar(forOp.lowerBound()), stepValue = scalar(forOp.step());
      result = lb + stepValue * j;
      found = true;
    }
    if (!found) {
      result = opaque(id);
      for (const ir::Param& p : fn_.params)
        if (p.value == id && p.kind == ir::ParamKind::Size) result = ctx_.bv_const(p.name.c_str(), 32);
    }
  } else {
    auto operand = [&](size_t i) { return scalar(def->operands[i]); };
    switch (def->kind) {
      case OpKind::Const: result = bv(ir::ConstOp(*def).intValue()); break;
      case OpKind::ProgramId:
      case OpKind::NumPrograms: {
        std::string axis = std::to_string(ir::gridAxisOf(*def));
        z3::expr pid = ctx_.bv_const(("program_id(" + axis + ")").c_str(), 32);
        z3::expr num = ctx_.bv_const(("num_programs(" + axis + ")").c_str(), 32);
        bool fresh = std::none_of(launch_.begin(), launch_.end(), [&](const auto& l) { return l.first == "program_id(" + axis + ")"; });
        if (fresh) {
          launch_.emplace_back("program_id(" + axis + ")", pid);
          launch_.emplace_back("num_programs(" + axis + ")", num);
        }
        result = def->kind == OpKind::ProgramId ? pid : num;
        break;
      }
      case OpKind::Binary: {
        z3::expr x = operand(0), y = operand(1);
        if (auto r = encodeI32Binary(ir::BinaryOp(*def).binaryKind(), x, y)) result = *r;
        else result = opaque(id);
        break;
      }
      default: result = opaque(id); break;
    }
  }
  scalars_.emplace(id, result);
  return result;
}

// The launch every query assumes: sizes are non-negative i32, each grid axis
// has the extent the grid expression gives (evaluated in 64 bits, as the host
// does), and the kernel's require(...) conditions hold (else it never runs).
void TagFlow::declareLaunch() {
  auto sizeTerm = [&](int64_t index) {
    std::string name = index >= 0 && static_cast<size_t>(index) < fn_.sizeNames.size() ? fn_.sizeNames[static_cast<size_t>(index)]
                                                                                       : "size" + std::to_string(index);
    return ctx_.bv_const(name.c_str(), 32);
  };
  for (const ir::Param& p : fn_.params)
    if (p.kind == ir::ParamKind::Size) {
      z3::expr size = ctx_.bv_const(p.name.c_str(), 32);
      launchConstraints_.push_back(size >= 0);
      launch_.emplace_back(p.name, size);
    }
  for (int axis = 0; axis < 3; ++axis) {
    std::string a = std::to_string(axis);
    z3::expr pid = ctx_.bv_const(("program_id(" + a + ")").c_str(), 32);
    z3::expr num = ctx_.bv_const(("num_programs(" + a + ")").c_str(), 32);
    z3::expr onGrid = pid >= 0 && num >= 1 && pid < num;
    if (std::optional<z3::expr> extent = encodeLaunchInt(ctx_, fn_.grid[axis], sizeTerm)) onGrid = onGrid && z3::sext(num, 32) == *extent;
    launchConstraints_.push_back(onGrid);
  }
  for (const ir::Requirement& r : fn_.requirements)
    if (std::optional<z3::expr> holds = encodeLaunchCondition(ctx_, r.condition, sizeTerm)) launchConstraints_.push_back(*holds);
}

// A bool scalar the encoding understands: comparisons of i32 scalars, and/or/not
// of those, and constants.
std::optional<z3::expr> TagFlow::truth(ir::ValueId id) {
  const ir::Op* def = id < fn_.values.size() ? fn_.values[id].def : nullptr;
  if (!def || !fn_.values[id].type.isScalar() || fn_.values[id].type.dtype != ir::DType::Bool) return std::nullopt;
  if (def->kind == OpKind::Const) return ctx_.bool_val(ir::ConstOp(*def).intValue() != 0);
  if (def->kind == OpKind::Compare && def->operands.size() == 2) {
    const ir::CompareOp cmp(*def);
    const ir::Type& t = fn_.values[cmp.lhs()].type;
    if (!t.isScalar() || t.dtype != ir::DType::I32) return std::nullopt;
    z3::expr x = scalar(cmp.lhs()), y = scalar(cmp.rhs());
    return encodeI32Compare(cmp.cmpKind(), x, y);
  }
  if (def->kind == OpKind::Binary && def->operands.size() == 2 &&
      (ir::BinaryOp(*def).binaryKind() == ir::BinaryKind::And || ir::BinaryOp(*def).binaryKind() == ir::BinaryKind::Or)) {
    const ir::BinaryOp bin(*def);
    std::optional<z3::expr> x = truth(bin.lhs()), y = truth(bin.rhs());
    if (!x || !y) return std::nullopt;
    return ir::BinaryOp(*def).binaryKind() == ir::BinaryKind::And ? (*x && *y) : (*x || *y);
  }
  if (def->kind == OpKind::Unary && ir::UnaryOp(*def).unaryKind() == ir::UnaryKind::Not && def->operands.size() == 1) {
    std::optional<z3::expr> x = truth(ir::UnaryOp(*def).x());
    if (x) return !*x;
  }
  return std::nullopt;
}

}  // namespace argus::checker
