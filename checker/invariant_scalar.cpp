// Z3 encoding of block-uniform i32 scalars for the invariant checks.
#include "checker/invariant_scalar.h"
#include "checker/operands_first.h"
#include "checker/scalar_semantics.h"
#include "ir/ops.h"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace argus::checker {

using ir::BinaryKind;
using ir::CmpKind;
using ir::OpKind;
using LK = ir::LaunchExpr::Kind;

namespace {

bool isI32(const ir::Type& t) { return t.kind == ir::TypeKind::Scalar && t.dtype == ir::DType::I32; }
bool isBool(const ir::Type& t) { return t.kind == ir::TypeKind::Scalar && t.dtype == ir::DType::Bool; }

constexpr int64_t kI32Min = INT32_MIN, kI32Max = INT32_MAX;

std::optional<ScalarRange> fits(int64_t lo, int64_t hi) {
  if (lo < kI32Min || hi > kI32Max || lo > hi) return std::nullopt;
  return ScalarRange{lo, hi};
}

// The result of an op that wraps: its exact range when no value overflows, else any i32.
ScalarRange wrapped(int64_t lo, int64_t hi) {
  if (lo < kI32Min || hi > kI32Max || lo > hi) return ScalarRange{kI32Min, kI32Max};
  return ScalarRange{lo, hi};
}

std::optional<ScalarRange> rangeOf(const ir::Function& fn, const ScalarScope& scope, ir::ValueId id, int depth) {
  if (depth > 64 || id >= fn.values.size() || !isI32(fn.values[id].type)) return std::nullopt;
  const ir::Op* def = fn.values[id].def;
  if (!def) {
    for (const ir::Op* loop : scope.loops) {
      if (loop->regions.empty() || loop->regions[0].args.empty() || loop->regions[0].args[0] != id) continue;
      if (loop->operands.size() < 3) return std::nullopt;
      const ir::ForOp forOp(*loop);  // scope.loops holds For ops
      auto lb = rangeOf(fn, scope, forOp.lowerBound(), depth + 1);
      auto step = rangeOf(fn, scope, forOp.step(), depth + 1);
      if (!lb || !step || step->lo <= 0) return std::nullopt;
      int64_t hi = kI32Max - 1;  // iv < ub <= 2^31 - 1
      if (auto ub = rangeOf(fn, scope, forOp.upperBound(), depth + 1)) hi = std::min(hi, ub->hi - 1);
      return fits(lb->lo, std::max(lb->lo, hi));
    }
    for (const ir::Param& p : fn.params)
      if (p.value == id && p.kind == ir::ParamKind::Size) return ScalarRange{0, kI32Max};
    return std::nullopt;
  }
  auto operand = [&](size_t i) { return rangeOf(fn, scope, def->operands[i], depth + 1); };
  switch (def->kind) {
    case OpKind::Const: {
      const int64_t value = ir::ConstOp(*def).intValue();
      return fits(value, value);
    }
    case OpKind::ProgramId: {
      const int64_t axis = ir::ProgramIdOp(*def).axis();
      const ir::LaunchExpr& grid = fn.grid[axis >= 0 && axis < 3 ? axis : 0];
      if (grid.kind == LK::Const && grid.value >= 1) return ScalarRange{0, grid.value - 1};
      return ScalarRange{0, kI32Max - 1};
    }
    case OpKind::Binary: {
      if (def->operands.size() != 2) return std::nullopt;
      auto x = operand(0), y = operand(1);
      if (!x || !y) return std::nullopt;
      switch (ir::BinaryOp(*def).binaryKind()) {
        case BinaryKind::Add: return wrapped(x->lo + y->lo, x->hi + y->hi);
        case BinaryKind::Sub: return wrapped(x->lo - y->hi, x->hi - y->lo);
        case BinaryKind::Mul: {
          int64_t p[] = {x->lo * y->lo, x->lo * y->hi, x->hi * y->lo, x->hi * y->hi};  // |x|, |y| <= 2^31
          return wrapped(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
        }
        case BinaryKind::Div: {
          // Truncating division by a positive divisor is monotone in each operand: the corners bound it.
          if (y->lo <= 0) return std::nullopt;
          int64_t q[] = {x->lo / y->lo, x->lo / y->hi, x->hi / y->lo, x->hi / y->hi};
          return fits(*std::min_element(q, q + 4), *std::max_element(q, q + 4));
        }
        case BinaryKind::Rem:
          if (y->lo <= 0) return std::nullopt;
          if (x->lo >= 0 && x->hi < y->lo) return *x;  // never reaches the divisor
          if (x->lo >= 0) return fits(0, std::min(x->hi, y->hi - 1));
          return fits(-(y->hi - 1), x->hi < 0 ? 0 : y->hi - 1);  // takes the dividend's sign
        case BinaryKind::Min: return fits(std::min(x->lo, y->lo), std::min(x->hi, y->hi));
        case BinaryKind::Max: return fits(std::max(x->lo, y->lo), std::max(x->hi, y->hi));
        default: return std::nullopt;
      }
    }
    case OpKind::Select: {
      if (def->operands.size() != 3) return std::nullopt;
      auto a = operand(1), b = operand(2);
      if (!a || !b) return std::nullopt;
      return fits(std::min(a->lo, b->lo), std::max(a->hi, b->hi));
    }
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<ScalarRange> scalarRange(const ir::Function& fn, const ScalarScope& scope, ir::ValueId id) {
  return rangeOf(fn, scope, id, 0);
}

ScalarEncoder::ScalarEncoder(z3::context& ctx, const ir::Function& fn, const ScalarScope& scope, bool impliedRequirements)
    : ctx_(ctx), fn_(fn), scope_(scope) {
  for (size_t l = 0; l < scope.loops.size(); ++l) {
    const ir::Op* loop = scope.loops[l];
    z3::expr j = ctx_.bv_const(("j" + std::to_string(l)).c_str(), 32);
    iterations_.push_back(j);
    if (loop->operands.size() < 3 || loop->regions.empty() || loop->regions[0].args.empty()) continue;
    const ir::ForOp forOp(*loop);
    z3::expr lb = scalar(forOp.lowerBound()), ub = scalar(forOp.upperBound()), step = scalar(forOp.step());
    z3::expr iv64 = z3::sext(lb, 32) + z3::sext(step, 32) * z3::zext(j, 32);
    constraints_.push_back(z3::ult(j, ctx_.bv_val(static_cast<uint64_t>(0xFFFFFFFFu), 32)));
    constraints_.push_back(step > 0 && iv64 < z3::sext(ub, 32));
    z3::expr iv = iv64.extract(31, 0);
    memo_.emplace(loop->regions[0].args[0], iv);
    inductionVars_.emplace_back(loop->regions[0].args[0], iv);
  }
  for (const auto& [cond, taken] : scope.conditions)
    if (auto c = condition(cond)) constraints_.push_back(taken ? *c : !*c);
  // The launch the kernel accepts: its requirements on the sizes it uses.
  inRequirement_ = true;
  for (const ir::Requirement& r : fn.requirements)
    if (impliedRequirements || !r.implied)
      if (auto c = launchBool(r.condition)) constraints_.push_back(*c);
  inRequirement_ = false;
}

z3::expr ScalarEncoder::sizeVar(int index) {
  if (!inRequirement_ && std::find(reportedSizes_.begin(), reportedSizes_.end(), index) == reportedSizes_.end())
    reportedSizes_.push_back(index);
  if (auto it = sizes_.find(index); it != sizes_.end()) return it->second;
  std::string name = index >= 0 && static_cast<size_t>(index) < fn_.sizeNames.size() ? fn_.sizeNames[index]
                                                                                      : std::to_string(index);
  z3::expr v = ctx_.bv_const(("size_" + name).c_str(), 32);
  constraints_.push_back(v >= 0);
  sizes_.emplace(index, v);
  return v;
}

z3::expr ScalarEncoder::programId(int axis) {
  if (auto it = programIds_.find(axis); it != programIds_.end()) return it->second;
  z3::expr pid = ctx_.bv_const(("program_id" + std::to_string(axis)).c_str(), 32);
  programIds_.emplace(axis, pid);
  constraints_.push_back(pid >= 0);
  if (axis >= 0 && axis < 3)
    if (auto grid = launchInt(fn_.grid[axis])) constraints_.push_back(z3::sext(pid, 32) < *grid);
  return pid;
}

std::vector<z3::expr> ScalarEncoder::nonEmptyGrid() {
  std::vector<z3::expr> out;
  for (int axis = 0; axis < 3; ++axis)
    if (auto grid = launchInt(fn_.grid[axis])) out.push_back(*grid >= ctx_.bv_val(1, 64));
  return out;
}

std::vector<z3::expr> ScalarEncoder::notLastBlock() {
  std::vector<z3::expr> out;
  for (const auto& [axis, pid] : programIds_)
    if (axis >= 0 && axis < 3)
      if (auto grid = launchInt(fn_.grid[axis])) out.push_back(z3::sext(pid, 32) + 1 < *grid);
  return out;
}

// In 64 bits, as the runtime evaluates launch expressions (ir::LaunchExpr::evaluate,
// tests/data/launch_expr_vectors.json): in 32 bits, cdiv(N, 256) near N = 2^31 and a
// requirement on M * K past 2^31 wrapped and admitted launches the host refuses.
std::optional<z3::expr> ScalarEncoder::launchInt(const ir::LaunchExpr& e) {
  return encodeLaunchInt(ctx_, e, [&](int64_t index) { return sizeVar(static_cast<int>(index)); });
}

std::optional<z3::expr> ScalarEncoder::launchBool(const ir::LaunchExpr& e) {
  return encodeLaunchCondition(ctx_, e, [&](int64_t index) { return sizeVar(static_cast<int>(index)); });
}

// A bool scalar as a Z3 condition, when it is built from i32 comparisons; else nothing (not assumed).
std::optional<z3::expr> ScalarEncoder::condition(ir::ValueId id) {
  if (auto it = conditionMemo_.find(id); it != conditionMemo_.end()) return it->second;
  if (encodingDepth_ >= kMaxEncodingDepth) return std::nullopt;
  ++encodingDepth_;
  std::optional<z3::expr> result = conditionTerm(id);
  --encodingDepth_;
  conditionMemo_.emplace(id, result);
  return result;
}

std::optional<z3::expr> ScalarEncoder::conditionTerm(ir::ValueId id) {
  if (id >= fn_.values.size() || !isBool(fn_.values[id].type)) return std::nullopt;
  const ir::Op* def = fn_.values[id].def;
  if (!def) return std::nullopt;
  switch (def->kind) {
    case OpKind::Const: return ctx_.bool_val(ir::ConstOp(*def).intValue() != 0);
    case OpKind::Compare: {
      const ir::CompareOp cmp(*def);
      if (def->operands.size() == 2 && isI32(fn_.values[cmp.lhs()].type))
        return encodeI32Compare(cmp.cmpKind(), scalar(cmp.lhs()), scalar(cmp.rhs()));
      return std::nullopt;
    }
    case OpKind::Unary:
      if (ir::UnaryOp(*def).unaryKind() == ir::UnaryKind::Not && def->operands.size() == 1)
        if (auto c = condition(ir::UnaryOp(*def).x())) return !*c;
      return std::nullopt;
    case OpKind::Binary: {
      if (def->operands.size() != 2) return std::nullopt;
      const ir::BinaryOp bin(*def);
      auto a = condition(bin.lhs()), b = condition(bin.rhs());
      if (!a || !b) return std::nullopt;
      if (ir::BinaryOp(*def).binaryKind() == BinaryKind::And) return *a && *b;
      if (ir::BinaryOp(*def).binaryKind() == BinaryKind::Or) return *a || *b;
      if (ir::BinaryOp(*def).binaryKind() == BinaryKind::Xor) return *a != *b;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

z3::expr ScalarEncoder::opaque(ir::ValueId id) {
  std::string name = id < fn_.values.size() && !fn_.values[id].name.empty() ? "'" + fn_.values[id].name + "'"
                                                                          : std::string("a computed value");
  bool known = false;
  for (const std::string& n : opaqueNames_) known = known || n == name;
  if (!known) opaqueNames_.push_back(name);
  return ctx_.bv_const(("opaque" + std::to_string(id)).c_str(), 32);
}

z3::expr ScalarEncoder::scalar(ir::ValueId id) {
  if (auto it = memo_.find(id); it != memo_.end()) return it->second;
  // Arithmetic chains, operands first (checker/operands_first.h); other
  // recursion (selects, conditions) stops at kMaxEncodingDepth: the value is
  // then unknown, which can only make a query unprovable, never wrong.
  std::vector<ir::ValueId> chain = operandsFirst(
      id, [&](ir::ValueId v) { return binaryOperands(fn_, v); }, [&](ir::ValueId v) { return memo_.count(v) > 0; });
  for (size_t i = 0; i + 1 < chain.size(); ++i) scalar(chain[i]);
  if (encodingDepth_ >= kMaxEncodingDepth) return opaque(id);
  ++encodingDepth_;
  z3::expr result = scalarTerm(id);
  --encodingDepth_;
  return result;
}

z3::expr ScalarEncoder::scalarTerm(ir::ValueId id) {
  z3::expr result = bv(0);
  const ir::Value* value = id < fn_.values.size() ? &fn_.values[id] : nullptr;
  const ir::Op* def = value ? value->def : nullptr;
  if (!value || !isI32(value->type)) {
    result = opaque(id);
  } else if (!def) {
    // A parameter: runtime sizes are known variables; anything else (a scalar
    // argument, a loop-carried value) is unknown.
    bool isSize = false;
    for (const ir::Param& p : fn_.params)
      if (p.value == id && p.kind == ir::ParamKind::Size)
        for (size_t i = 0; i < fn_.sizeNames.size() && !isSize; ++i)
          if (fn_.sizeNames[i] == p.name) {
            result = sizeVar(static_cast<int>(i));
            isSize = true;
          }
    if (!isSize) result = opaque(id);
  } else {
    auto operand = [&](size_t i) { return scalar(def->operands[i]); };
    switch (def->kind) {
      case OpKind::Const: result = bv(ir::ConstOp(*def).intValue()); break;
      case OpKind::ProgramId: result = programId(static_cast<int>(ir::ProgramIdOp(*def).axis())); break;
      case OpKind::NumPrograms: {
        const int64_t axis = ir::NumProgramsOp(*def).axis();
        auto grid = axis >= 0 && axis < 3 ? launchInt(fn_.grid[axis]) : std::nullopt;
        result = grid ? grid->extract(31, 0) : opaque(id);  // CUDA's grid limits keep it in i32
        break;
      }
      case OpKind::Binary: {
        if (def->operands.size() != 2) { result = opaque(id); break; }
        z3::expr x = operand(0), y = operand(1);
        if (auto r = encodeI32Binary(ir::BinaryOp(*def).binaryKind(), x, y)) result = *r;
        else result = opaque(id);
        break;
      }
      case OpKind::Select: {
        auto c = def->operands.size() == 3 ? condition(ir::SelectOp(*def).condition()) : std::nullopt;
        result = c ? z3::ite(*c, operand(1), operand(2)) : opaque(id);
        break;
      }
      default: result = opaque(id); break;
    }
  }
  memo_.emplace(id, result);
  return result;
}

std::optional<z3::model> ScalarEncoder::minimize(const z3::expr_vector& assertions, SolverBudget& budget) {
  z3::optimize opt(ctx_);
  budget.limit(opt);
  for (const z3::expr& a : assertions) opt.add(a);
  // Lexicographic: earliest outer iteration first, then program ids, then sizes.
  for (const z3::expr& j : iterations_) opt.minimize(j);
  for (const auto& [axis, pid] : programIds_) opt.minimize(pid);
  for (const auto& [index, size] : sizes_) opt.minimize(size);
  if (budget.check(opt) != z3::sat) return std::nullopt;
  return opt.get_model();
}

int64_t ScalarEncoder::valueOf(const z3::model& model, const z3::expr& e) {
  z3::expr v = model.eval(e, true);
  uint64_t bits = 0;
  if (!v.is_numeral() || !v.is_numeral_u64(bits)) return 0;
  return static_cast<int32_t>(static_cast<uint32_t>(bits));
}

std::vector<std::pair<std::string, int64_t>> ScalarEncoder::iterationValues(const z3::model& model) const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [id, iv] : inductionVars_) {
    const std::string& name = fn_.values[id].name;
    out.emplace_back(name.empty() ? "the loop variable" : name, valueOf(model, iv));
  }
  return out;
}

std::vector<std::pair<std::string, int64_t>> ScalarEncoder::launchValues(const z3::model& model) const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [axis, pid] : programIds_)
    out.emplace_back("program_id(" + std::to_string(axis) + ")", valueOf(model, pid));
  std::vector<int> reported = reportedSizes_;
  std::sort(reported.begin(), reported.end());
  for (int index : reported)
    out.emplace_back(static_cast<size_t>(index) < fn_.sizeNames.size() ? fn_.sizeNames[index] : "a size",
                     valueOf(model, sizes_.at(index)));
  return out;
}

// Mirrors the conditions ScalarEncoder assumes: anything else is dropped there,
// which would over-approximate where a store runs, so the check stays silent.
bool conditionEncodable(const ir::Function& fn, ir::ValueId id, int depth) {
  if (depth > 64 || id >= fn.values.size()) return false;
  const ir::Value& v = fn.values[id];
  if (v.type.kind != ir::TypeKind::Scalar || v.type.dtype != ir::DType::Bool || !v.def) return false;
  const ir::Op* def = v.def;
  switch (def->kind) {
    case OpKind::Const: return true;
    case OpKind::Compare: return def->operands.size() == 2 && isI32(fn.values[ir::CompareOp(*def).lhs()].type);
    case OpKind::Unary:
      return ir::UnaryOp(*def).unaryKind() == ir::UnaryKind::Not && def->operands.size() == 1 &&
             conditionEncodable(fn, ir::UnaryOp(*def).x(), depth + 1);
    case OpKind::Binary: {
      const ir::BinaryOp bin(*def);
      return def->operands.size() == 2 &&
             (ir::BinaryOp(*def).binaryKind() == ir::BinaryKind::And || ir::BinaryOp(*def).binaryKind() == ir::BinaryKind::Or ||
              ir::BinaryOp(*def).binaryKind() == ir::BinaryKind::Xor) &&
             conditionEncodable(fn, bin.lhs(), depth + 1) && conditionEncodable(fn, bin.rhs(), depth + 1);
    }
    default: return false;
  }
}

}  // namespace argus::checker
