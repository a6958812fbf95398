// Structural and type checks of the Tile IR (the rules documented in ir/ir.h).
// Messages name the op and its source offset; they are for compiler developers.
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/ops.h"

namespace argus::ir {

namespace {

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

class Verifier {
 public:
  explicit Verifier(const Function& fn) : fn_(fn), defined_(fn.values.size(), 0), seen_(fn.values.size(), 0) {}

  std::vector<std::string> run() {
    checkSignature();
    verifyBlock(fn_.body, nullptr);
    return std::move(errors_);
  }

 private:
  const Function& fn_;
  std::vector<std::string> errors_;
  std::vector<char> defined_;  // visible at the current point
  std::vector<char> seen_;     // defined somewhere already (SSA: once)
  const Op* op_ = nullptr;     // op being checked, for messages

  void error(const std::string& message) {
    std::string where = "kernel '" + fn_.name + "': ";
    if (op_) where += std::string(opKindName(op_->kind)) + " at offset " + std::to_string(op_->range.begin) + ": ";
    errors_.push_back(where + message);
  }

  bool valid(ValueId id) const { return id < fn_.values.size(); }
  const Type& type(ValueId id) const { return fn_.values[id].type; }
  std::string name(ValueId id) const {
    if (!valid(id)) return "%<invalid " + std::to_string(id) + ">";
    const Value& v = fn_.values[id];
    return "%" + (v.name.empty() ? "" : v.name + ".") + std::to_string(id);
  }

  void checkType(const Type& t, const std::string& what) {
    if (t.kind == TypeKind::Tile) {
      const Layout& l = t.layout;
      if (l.parent.empty()) error(what + " is a tile of rank 0");
      if (l.parent.size() > 16) { error(what + " has rank " + std::to_string(l.parent.size()) + ", more than 16"); return; }
      for (int64_t e : l.parent)
        if (!isPowerOfTwo(e)) { error(what + " has a layout extent " + std::to_string(e) + " that is not a power of two"); break; }
      if (l.parent.size() < 32 && (l.reducedMask >> l.parent.size()) != 0)
        error(what + " reduces an axis beyond its rank");
      if (t.shape != l.shape()) error(what + " has shape inconsistent with its layout: " + t.str());
      if (l.vec != 1 && (l.isMma() || !isPowerOfTwo(l.vec) || l.parent.back() % l.vec != 0))
        error(what + " has a vectorized layout that is not blocked or whose vec does not divide its last extent: " + t.str());
    }
    if (t.kind == TypeKind::Shared || t.kind == TypeKind::View) {
      if (t.shape.empty()) error(what + " has rank 0");
      for (int64_t e : t.shape)
        if (e <= 0) { error(what + " has a non-positive extent in " + t.str()); break; }
    }
  }

  void define(ValueId id, std::vector<ValueId>& scope) {
    if (!valid(id)) { error("defines an invalid value id " + std::to_string(id)); return; }
    if (seen_[id]) error(name(id) + " is defined more than once");
    seen_[id] = defined_[id] = 1;
    scope.push_back(id);
    checkType(type(id), name(id));
  }

  void checkSignature() {
    if (!isPowerOfTwo(fn_.numWarps) || fn_.numWarps > 32)
      error("warps = " + std::to_string(fn_.numWarps) + " is not a power of two from 1 to 32");
    if (fn_.body.args.size() != fn_.params.size()) {
      error("the body has " + std::to_string(fn_.body.args.size()) + " arguments for " +
            std::to_string(fn_.params.size()) + " parameters");
      return;
    }
    for (size_t i = 0; i < fn_.params.size(); ++i) {
      const Param& p = fn_.params[i];
      ValueId arg = fn_.body.args[i];
      if (p.value != arg) error("parameter '" + p.name + "' is not bound to body argument " + std::to_string(i));
      if (!valid(arg)) continue;
      const Type& t = type(arg);
      std::string what = "parameter '" + p.name + "'";
      switch (p.kind) {
        case ParamKind::Tensor: {
          if (t.kind != TypeKind::Tensor || t.dtype != p.dtype || t.shape.size() != p.dims.size()) {
            error(what + " has type " + t.str() + ", expected a tensor of " + dtypeName(p.dtype) +
                  " with rank " + std::to_string(p.dims.size()));
            break;
          }
          for (size_t d = 0; d < p.dims.size(); ++d) {
            const DimRef& dim = p.dims[d];
            if (dim.constant < 0 && (dim.sizeIndex < 0 || static_cast<size_t>(dim.sizeIndex) >= fn_.sizeNames.size()))
              error(what + " dimension " + std::to_string(d) + " names no size");
            int64_t expect = dim.constant >= 0 ? dim.constant : -1;
            if (t.shape[d] != expect) error(what + " dimension " + std::to_string(d) + " disagrees with its type " + t.str());
          }
          break;
        }
        case ParamKind::Size:
          if (t != Type::scalar(DType::I32)) error(what + " is a size and must be an i32 scalar, got " + t.str());
          break;
        case ParamKind::Scalar:
          if (t != Type::scalar(p.dtype)) error(what + " has type " + t.str() + ", expected " + dtypeName(p.dtype));
          break;
      }
    }
    for (int axis = 0; axis < 3; ++axis) checkLaunchExpr(fn_.grid[axis], "grid axis " + std::to_string(axis));
    for (const Requirement& r : fn_.requirements) checkLaunchExpr(r.condition, "requirement '" + r.text + "'");
  }

  void checkLaunchExpr(const LaunchExpr& e, const std::string& what) {
    using K = LaunchExpr::Kind;
    if (e.kind == K::Size && (e.value < 0 || static_cast<size_t>(e.value) >= fn_.sizeNames.size()))
      error(what + " refers to size index " + std::to_string(e.value) + " which does not exist");
    size_t arity = e.kind == K::Const || e.kind == K::Size ? 0 : e.kind == K::Not ? 1 : 2;
    if (e.operands.size() != arity) error(what + " has a malformed expression");
    for (const LaunchExpr& o : e.operands) checkLaunchExpr(o, what);
  }

  // Verifies a block; `parent` is the op owning it (null for the body).
  void verifyBlock(const Block& block, const Op* parent) {
    std::vector<ValueId> scope;
    const Op* saved = op_;
    for (ValueId a : block.args) define(a, scope);
    for (size_t i = 0; i < block.ops.size(); ++i) {
      const Op* op = block.ops[i].get();
      op_ = op;
      if (!op) { error("null op"); continue; }
      bool last = i + 1 == block.ops.size();
      if (op->kind == OpKind::Yield && (!parent || !last))
        error(parent ? "yield must be the last op of its region" : "yield outside of a for or if region");
      for (ValueId v : op->operands) {
        if (!valid(v)) error("uses an invalid value id " + std::to_string(v));
        else if (!defined_[v]) error("uses " + name(v) + " which is not defined before this point");
      }
      for (uint32_t r = 0; r < op->results.size(); ++r) {
        ValueId id = op->results[r];
        if (valid(id) && (fn_.values[id].def != op || fn_.values[id].resultIndex != r))
          error("result " + name(id) + " does not point back to its op");
      }
      bool operandsOk = true;
      for (ValueId v : op->operands) operandsOk = operandsOk && valid(v);
      if (operandsOk) checkOp(*op);
      for (const Block& region : op->regions) {
        verifyBlock(region, op);
        op_ = op;
      }
      for (ValueId r : op->results) define(r, scope);
    }
    op_ = parent;
    if (parent && (block.ops.empty() || block.ops.back()->kind != OpKind::Yield))
      error("a region of " + std::string(opKindName(parent->kind)) + " does not end in yield");
    for (ValueId v : scope) defined_[v] = 0;
    op_ = saved;
  }

  bool isValueType(const Type& t) { return t.kind == TypeKind::Scalar || t.kind == TypeKind::Tile; }

  void expectSameType(ValueId v, const Type& want, const std::string& role) {
    if (type(v) != want) error(role + " " + name(v) + " has type " + type(v).str() + ", expected " + want.str());
  }

  // The counts ir/ops.def declares: operands within [min, max], results and regions exact.
  bool checkArity(const Op& op) {
    const OpInfo& info = opInfo(op.kind);
    const auto operands = static_cast<int>(op.operands.size());
    bool ok = true;
    if (operands < info.minOperands || (info.maxOperands >= 0 && operands > info.maxOperands)) {
      std::string want = std::to_string(info.minOperands);
      if (info.maxOperands != info.minOperands)
        want += info.maxOperands < 0 ? " or more" : " to " + std::to_string(info.maxOperands);
      error("expects " + want + " operands, got " + std::to_string(operands));
      ok = false;
    }
    if (info.results >= 0 && op.results.size() != static_cast<size_t>(info.results)) {
      error("expects " + std::to_string(info.results) + " results, got " + std::to_string(op.results.size()));
      ok = false;
    }
    if (op.regions.size() != static_cast<size_t>(info.regions)) {
      error("expects " + std::to_string(info.regions) + " regions, got " + std::to_string(op.regions.size()));
      ok = false;
    }
    for (ValueId v : op.operands) ok = valid(v) && ok;
    for (ValueId r : op.results) ok = valid(r) && ok;
    if (!ok) return false;
    // A declared effect's view looks into the memory the declaration allows.
    for (const EffectDecl& effect : info.effects) {
      if (effect.operand >= op.operands.size() || effect.space == EffectSpace::AnySpace) continue;
      const Type& t = type(op.operands[effect.operand]);
      if (t.kind != TypeKind::View) continue;
      const bool shared = effect.space == EffectSpace::Shared;
      if (t.space != (shared ? MemSpace::Shared : MemSpace::Global)) {
        error("operand " + std::to_string(effect.operand) + " must be a " + (shared ? "shared" : "global") +
              " view, got " + t.str());
        ok = false;
      }
    }
    return ok;
  }

  void checkOp(const Op& op) {
    if (!checkArity(op)) return;
    switch (op.kind) {
      case OpKind::Const: {
        const Type& t = type(op.results[0]);
        if (!t.isScalar()) error("result must be a scalar, got " + t.str());
        const int64_t value = ConstOp(op).intValue();
        if (t.dtype == DType::Bool && value != 0 && value != 1) error("a bool constant must be 0 or 1");
        return;
      }
      case OpKind::ProgramId: return checkGridAxis(op, ProgramIdOp(op).axis());
      case OpKind::NumPrograms: return checkGridAxis(op, NumProgramsOp(op).axis());
      case OpKind::Binary: return checkBinary(op);
      case OpKind::Compare: {
        const CompareOp cmp(op);
        const Type& x = type(cmp.lhs());
        if (!isValueType(x)) { error("operands must be scalars or tiles, got " + x.str()); return; }
        expectSameType(cmp.rhs(), x, "operand");
        Type want = x;
        want.dtype = DType::Bool;
        expectSameType(op.results[0], want, "result");
        return;
      }
      case OpKind::Unary: return checkUnary(op);
      case OpKind::Fma: {
        const Type& t = type(op.results[0]);
        if (!isValueType(t) || !isFloat(t.dtype)) error("operates on floats only, got " + t.str());
        for (ValueId v : op.operands) expectSameType(v, t, "operand");
        return;
      }
      case OpKind::Select: {
        const Type& t = type(op.results[0]);
        if (!isValueType(t)) error("result must be a scalar or a tile, got " + t.str());
        Type cond = t;
        cond.dtype = DType::Bool;
        const SelectOp select(op);
        expectSameType(select.condition(), cond, "condition");
        expectSameType(select.ifTrue(), t, "operand");
        expectSameType(select.ifFalse(), t, "operand");
        return;
      }
      case OpKind::Cast: {
        const Type& x = type(CastOp(op).x());
        if (!isValueType(x)) { error("operand must be a scalar or a tile, got " + x.str()); return; }
        Type want = x;
        want.dtype = CastOp(op).to();
        expectSameType(op.results[0], want, "result");
        return;
      }
      case OpKind::Splat: {
        const Type& x = type(SplatOp(op).scalar());
        const Type& t = type(op.results[0]);
        if (!x.isScalar()) error("operand must be a scalar, got " + x.str());
        if (!t.isTile()) error("result must be a tile, got " + t.str());
        else if (x.dtype != t.dtype) error("operand dtype " + std::string(dtypeName(x.dtype)) + " differs from the result's " + t.str());
        return;
      }
      case OpKind::Iota: {
        const Type& t = type(op.results[0]);
        if (!t.isTile() || t.dtype != DType::I32) error("result must be an i32 tile, got " + t.str());
        else if (const int64_t axis = IotaOp(op).axis(); axis < 0 || static_cast<size_t>(axis) >= t.shape.size())
          error("axis " + std::to_string(axis) + " is out of range for " + t.str());
        return;
      }
      case OpKind::Broadcast: {
        const Type& x = type(BroadcastOp(op).x());
        const Type& t = type(op.results[0]);
        if (!x.isTile() || !t.isTile()) { error("operand and result must be tiles, got " + x.str() + " -> " + t.str()); return; }
        if (x.dtype != t.dtype) error("changes the dtype: " + x.str() + " -> " + t.str());
        if (x.layout.parent != t.layout.parent || x.layout.vec != t.layout.vec)
          error("operand and result layouts have different parents: " + x.str() + " -> " + t.str());
        if ((t.layout.reducedMask & ~x.layout.reducedMask) != 0)
          error("result reduces an axis the operand does not: " + x.str() + " -> " + t.str());
        return;
      }
      case OpKind::ConvertLayout: {
        const Type& x = type(ConvertLayoutOp(op).x());
        const Type& t = type(op.results[0]);
        if (!x.isTile() || !t.isTile()) { error("operand and result must be tiles, got " + x.str() + " -> " + t.str()); return; }
        if (x.dtype != t.dtype || x.shape != t.shape) error("must keep dtype and shape: " + x.str() + " -> " + t.str());
        return;
      }
      case OpKind::Reshape: {
        const Type& x = type(ReshapeOp(op).x());
        const Type& t = type(op.results[0]);
        if (!x.isTile() || !t.isTile()) { error("operand and result must be tiles, got " + x.str() + " -> " + t.str()); return; }
        if (x.dtype != t.dtype || x.numElements() != t.numElements())
          error("must keep dtype and element count: " + x.str() + " -> " + t.str());
        return;
      }
      case OpKind::Reduce: {
        const ReduceOp reduce(op);
        const Type& x = type(reduce.x());
        const Type& t = type(op.results[0]);
        if (!x.isTile()) { error("operand must be a tile, got " + x.str()); return; }
        const int64_t axis = reduce.axis();
        if (axis < 0 || axis >= 32 || static_cast<size_t>(axis) >= x.shape.size()) {
          error("axis " + std::to_string(axis) + " is out of range for " + x.str());
          return;
        }
        Layout want = x.layout;
        want.reducedMask |= 1u << axis;
        expectSameType(op.results[0], Type::tile(x.dtype, want), "result");
        (void)t;
        return;
      }
      case OpKind::ReduceAll: {
        const Type& x = type(ReduceAllOp(op).x());
        if (!x.isTile()) { error("operand must be a tile, got " + x.str()); return; }
        expectSameType(op.results[0], Type::scalar(x.dtype), "result");
        return;
      }
      case OpKind::AllocShared:
        if (type(op.results[0]).kind != TypeKind::Shared) error("result must be a shared buffer, got " + type(op.results[0]).str());
        return;
      case OpKind::View: return checkView(op);
      case OpKind::Load: {
        const LoadOp load(op);
        const Type& v = type(load.view());
        if (v.kind != TypeKind::View) { error("operand must be a view, got " + v.str()); return; }
        if (op.operands.size() == 2) expectSameType(load.other(), Type::scalar(v.dtype), "'other'");
        // The canonical layout, its vectorized form (ir/vector_layout.h), or a tensor-core
        // accumulator's layout (an epilogue's residual read in place, ir/dot_layout.h).
        const Layout& layout = type(op.results[0]).layout;
        if (layout.isMma() && layout.reducedMask == 0) {
          expectSameType(op.results[0], Type::tile(v.dtype, layout), "result");
          if (layout.parent != v.shape) error("result layout " + layoutStr(layout) + " does not cover " + v.str());
          return;
        }
        expectSameType(op.results[0], Type::tile(v.dtype, Layout::vectorized(v.shape, layout.vec)), "result");
        return;
      }
      case OpKind::Store: {
        const StoreOp store(op);
        const Type& v = type(store.view());
        const Type& t = type(store.value());
        if (v.kind != TypeKind::View) { error("first operand must be a view, got " + v.str()); return; }
        if (!t.isTile()) { error("second operand must be a tile, got " + t.str()); return; }
        if (v.dtype != t.dtype || v.shape != t.shape) error("stores " + t.str() + " into " + v.str() + ": dtype and shape must agree");
        return;
      }
      case OpKind::Dot: return checkDot(op);
      case OpKind::Barrier:
      case OpKind::CommitGroup:
        return;
      case OpKind::WaitGroup:
        if (const int64_t pending = WaitGroupOp(op).pending(); pending < 0)
          error("wait_group count must be non-negative, got " + std::to_string(pending));
        return;
      case OpKind::CopyAsync: {
        const CopyAsyncOp copy(op);
        const Type& dst = type(copy.dst());
        const Type& src = type(copy.src());
        if (dst.kind != TypeKind::View) { error("destination must be a shared view, got " + dst.str()); return; }
        if (src.kind != TypeKind::View) { error("source must be a global view, got " + src.str()); return; }
        if (dst.dtype != src.dtype || dst.shape != src.shape) error("copies " + src.str() + " into " + dst.str() + ": dtype and shape must agree");
        return;
      }
      case OpKind::MbarrierInit: {
        const MbarrierInitOp init(op);
        checkMbarrier(init.bars(), init.index());
        checkPositive(op, init.arrivals());
        return;
      }
      case OpKind::MbarrierExpectTx: {
        const MbarrierExpectTxOp expectTx(op);
        checkMbarrier(expectTx.bars(), expectTx.index());
        checkPositive(op, expectTx.bytes());
        return;
      }
      case OpKind::MbarrierArrive: {
        const MbarrierArriveOp arrive(op);
        checkMbarrier(arrive.bars(), arrive.index());
        return;
      }
      case OpKind::MbarrierWait: {
        const MbarrierWaitOp wait(op);
        checkMbarrier(wait.bars(), wait.index());
        expectSameType(wait.parity(), Type::scalar(DType::I32), "parity");
        return;
      }
      case OpKind::CopyBulk: {
        if (op.operands.size() != 2 && op.operands.size() != 4) { error("expects (dst, src) or (dst, src, bars, index)"); return; }
        if (!op.results.empty()) { error("copy_bulk has no results"); return; }
        const CopyBulkOp copy(op);
        const Type& dst = type(copy.dst());
        const Type& src = type(copy.src());
        if (dst.kind != TypeKind::View) { error("destination must be a shared view, got " + dst.str()); return; }
        if (src.kind != TypeKind::View) { error("source must be a global view, got " + src.str()); return; }
        if (dst.dtype != src.dtype || dst.shape != src.shape) error("copies " + src.str() + " into " + dst.str() + ": dtype and shape must agree");
        if (op.operands.size() == 4) checkMbarrier(copy.bars(), copy.index());
        return;
      }
      case OpKind::For: return checkFor(op);
      case OpKind::If: return checkIf(op);
      case OpKind::Yield:
        if (!op.results.empty()) error("yield has no results");
        return;
      case OpKind::TagSet: {
        const TagSetOp tag(op);
        const Type& t = type(tag.tile());
        if (!t.isTile()) { error("tags attach to tiles, got " + t.str()); return; }
        expectSameType(tag.tagValue(), Type::scalar(DType::I32), "tag value");
        expectSameType(op.results[0], t, "result");
        if (TagSetOp(op).tagName().empty()) error("expects a tag name");
        return;
      }
      case OpKind::Assert: return checkAssert(op);
    }
    error("unknown op kind");
  }

  void checkGridAxis(const Op& op, int64_t axis) {
    if (type(op.results[0]) != Type::scalar(DType::I32)) error("result must be i32, got " + type(op.results[0]).str());
    if (axis < 0 || axis > 2) error("axis " + std::to_string(axis) + " is not 0, 1 or 2");
  }

  void checkPositive(const Op& op, int64_t count) {
    if (count < 1) error(std::string(opKindName(op.kind)) + " needs a positive count, got " + std::to_string(count));
  }

  // An mbarrier operand pair (bars, index): a shared u64 buffer of rank 1 and an i32 index.
  void checkMbarrier(ValueId barsValue, ValueId index) {
    const Type& bars = type(barsValue);
    if (bars.kind != TypeKind::Shared || bars.dtype != DType::U64 || bars.shape.size() != 1)
      error("mbarriers must be a shared buffer of u64 with rank 1, got " + bars.str());
    expectSameType(index, Type::scalar(DType::I32), "mbarrier index");
  }

  // The postfix condition of an Assert (ir.h, AssertCode): well-formed, one truth left.
  void checkAssert(const Op& op) {
    if (!op.results.empty()) { error("assert has no results"); return; }
    const AssertOp assertion(op);
    const std::vector<std::string>& names = assertion.names();
    if (names.empty()) { error("expects the message as its first name"); return; }
    enum Kind { Int, Truth };
    std::vector<Kind> stack;
    const std::vector<int64_t>& code = assertion.code();
    auto pop = [&](Kind want) {
      if (stack.empty() || stack.back() != want) return false;
      stack.pop_back();
      return true;
    };
    for (size_t pc = 0; pc < code.size();) {
      auto arg = [&](size_t i) { return pc + i < code.size() ? code[pc + i] : int64_t{-1}; };
      int64_t k = arg(1);
      bool operandOk = k >= 0 && static_cast<size_t>(k) < op.operands.size() && valid(op.operands[static_cast<size_t>(k)]);
      switch (static_cast<AssertCode>(code[pc])) {
        case AssertCode::Const: stack.push_back(Int); pc += 2; break;
        case AssertCode::Scalar:
          if (!operandOk) { error("condition reads operand " + std::to_string(k) + ", which does not exist"); return; }
          expectSameType(op.operands[static_cast<size_t>(k)], Type::scalar(DType::I32), "scalar operand");
          stack.push_back(Int);
          pc += 2;
          break;
        case AssertCode::Tag: {
          if (!operandOk) { error("condition reads operand " + std::to_string(k) + ", which does not exist"); return; }
          const Type& t = type(op.operands[static_cast<size_t>(k)]);
          bool carries = t.isTile() || t.kind == TypeKind::Shared || (t.kind == TypeKind::View && t.space == MemSpace::Shared);
          if (!carries) error("tags are read from tiles and shared memory, got " + t.str());
          int64_t n = arg(2), d = arg(3);
          if (n < 1 || static_cast<size_t>(n) >= names.size()) { error("tag name index out of range"); return; }
          if (names[static_cast<size_t>(n)] == "origin" && d < 0) error("origin coordinate must be >= 0");
          stack.push_back(Int);
          pc += 4;
          break;
        }
        case AssertCode::Binary:
        case AssertCode::Compare:
          if (!pop(Int) || !pop(Int)) { error("condition pops a missing integer"); return; }
          stack.push_back(static_cast<AssertCode>(code[pc]) == AssertCode::Binary ? Int : Truth);
          pc += 2;
          break;
        case AssertCode::And:
        case AssertCode::Or:
          if (!pop(Truth) || !pop(Truth)) { error("condition pops a missing truth"); return; }
          stack.push_back(Truth);
          pc += 1;
          break;
        case AssertCode::Not:
          if (!pop(Truth)) { error("condition pops a missing truth"); return; }
          stack.push_back(Truth);
          pc += 1;
          break;
        case AssertCode::Neg:
          if (!pop(Int)) { error("condition pops a missing integer"); return; }
          stack.push_back(Int);
          pc += 1;
          break;
        default: error("unknown condition instruction " + std::to_string(code[pc])); return;
      }
    }
    if (stack.size() != 1 || stack[0] != Truth) error("the condition must leave exactly one truth");
  }

  void checkBinary(const Op& op) {
    const Type& t = type(op.results[0]);
    if (!isValueType(t)) { error("result must be a scalar or a tile, got " + t.str()); return; }
    const BinaryOp binary(op);
    expectSameType(binary.lhs(), t, "operand");
    expectSameType(binary.rhs(), t, "operand");
    DType d = t.dtype;
    const char* kind = binaryKindName(binary.binaryKind());
    switch (binary.binaryKind()) {
      case BinaryKind::And: case BinaryKind::Or: case BinaryKind::Xor:
        if (isFloat(d)) error(std::string(kind) + " needs integers or bools, got " + t.str());
        break;
      case BinaryKind::Shl: case BinaryKind::Shr:
        if (!isInteger(d)) error(std::string(kind) + " needs integers, got " + t.str());
        break;
      case BinaryKind::Pow:
        if (!isFloat(d)) error("pow needs floats, got " + t.str());
        break;
      default:
        if (d == DType::Bool) error(std::string(kind) + " is not defined on bool");
        break;
    }
  }

  void checkUnary(const Op& op) {
    const Type& t = type(op.results[0]);
    if (!isValueType(t)) { error("result must be a scalar or a tile, got " + t.str()); return; }
    expectSameType(UnaryOp(op).x(), t, "operand");
    DType d = t.dtype;
    const UnaryKind unary = UnaryOp(op).unaryKind();
    switch (unary) {
      case UnaryKind::Neg: case UnaryKind::Abs:
        if (d == DType::Bool) error(std::string(unaryKindName(unary)) + " is not defined on bool");
        break;
      case UnaryKind::Not:
        if (isFloat(d)) error("not needs integers or bools, got " + t.str());
        break;
      default:
        if (!isFloat(d)) error(std::string(unaryKindName(unary)) + " needs floats, got " + t.str());
        break;
    }
  }

  void checkView(const Op& op) {
    if (op.operands.empty()) { error("expects a base and offsets"); return; }
    if (op.results.size() != 1 || !valid(op.results[0])) { error("expects 1 result"); return; }
    const Type& base = type(ViewOp(op).base());
    const Type& t = type(op.results[0]);
    if (base.kind != TypeKind::Tensor && base.kind != TypeKind::Shared) {
      error("base must be a tensor or a shared buffer, got " + base.str());
      return;
    }
    if (op.operands.size() != base.shape.size() + 1)
      error("expects " + std::to_string(base.shape.size()) + " offsets for " + base.str() + ", got " +
            std::to_string(op.operands.size() - 1));
    for (size_t i = 1; i < op.operands.size(); ++i) expectSameType(op.operands[i], Type::scalar(DType::I32), "offset");
    if (t.kind != TypeKind::View) { error("result must be a view, got " + t.str()); return; }
    MemSpace space = base.kind == TypeKind::Shared ? MemSpace::Shared : MemSpace::Global;
    if (t.space != space || t.dtype != base.dtype) error("result " + t.str() + " does not match its base " + base.str());
    if (t.swizzle != base.swizzle) error("result " + t.str() + " must carry the swizzle of its base " + base.str());
    if (t.shape.empty() || t.shape.size() > base.shape.size())
      error("view rank " + std::to_string(t.shape.size()) + " must be from 1 to the base rank " + std::to_string(base.shape.size()));
  }

  void checkDot(const Op& op) {
    const DotOp dot(op);
    const Type& a = type(dot.a());
    const Type& b = type(dot.b());
    const Type& acc = type(dot.acc());
    auto sharedView2 = [](const Type& t) { return t.kind == TypeKind::View && t.space == MemSpace::Shared && t.shape.size() == 2; };
    bool registerA = a.isTile() && a.shape.size() == 2 && a.layout.isMma();
    if ((!registerA && !sharedView2(a)) || !sharedView2(b)) { error("a and b must be rank-2 shared views (a may be an mma-layout tile), got " + a.str() + " and " + b.str()); return; }
    if (!acc.isTile() || acc.shape.size() != 2) { error("acc must be a rank-2 tile, got " + acc.str()); return; }
    if (!isFloat(acc.dtype)) error("acc must be a float tile, got " + acc.str());
    if (registerA && (!acc.layout.isMma() || acc.layout.warpsN != 1 || a.layout.warpsN != 1 || a.layout.warpsM != acc.layout.warpsM))
      error("a register operand a needs mma layouts with warps (WM, 1) on a and acc, got " + a.str() + " and " + acc.str());
    if (a.dtype != b.dtype) error("a and b have different dtypes: " + a.str() + " and " + b.str());
    const bool transB = dot.transB();
    const int64_t bK = transB ? b.shape[1] : b.shape[0], bN = transB ? b.shape[0] : b.shape[1];
    if (a.shape[1] != bK || a.shape[0] != acc.shape[0] || bN != acc.shape[1])
      error("shapes do not compose: " + a.str() + " x " + b.str() + " -> " + acc.str() + " (want (M,K) x (K,N) -> (M,N))");
    expectSameType(op.results[0], acc, "result");
  }

  void checkYieldTypes(const Block& region, const std::vector<ValueId>& results, const std::string& regionName) {
    if (region.ops.empty() || region.ops.back()->kind != OpKind::Yield) return;  // reported by verifyBlock
    const Op& y = *region.ops.back();
    if (y.operands.size() != results.size()) {
      error(regionName + " yields " + std::to_string(y.operands.size()) + " values for " + std::to_string(results.size()) + " results");
      return;
    }
    for (size_t i = 0; i < results.size(); ++i)
      if (valid(y.operands[i]) && valid(results[i]) && type(y.operands[i]) != type(results[i]))
        error(regionName + " yields " + type(y.operands[i]).str() + " for result " + std::to_string(i) + " of type " + type(results[i]).str());
  }

  void checkFor(const Op& op) {
    size_t numIters = op.operands.size() - 3;
    const ForOp loop(op);
    const Type& lb = type(loop.lowerBound());
    if (!lb.isScalar() || !isInteger(lb.dtype)) error("bounds must be integer scalars, got " + lb.str());
    expectSameType(loop.upperBound(), lb, "upper bound");
    expectSameType(loop.step(), lb, "step");
    if (op.results.size() != numIters) {
      error("has " + std::to_string(op.results.size()) + " results for " + std::to_string(numIters) + " iteration values");
      return;
    }
    for (size_t i = 0; i < numIters; ++i)
      if (valid(op.results[i])) expectSameType(op.operands[3 + i], type(op.results[i]), "initial value");
    if (op.regions.size() != 1) { error("must have exactly one region"); return; }
    const Block& body = op.regions[0];
    if (body.args.size() != numIters + 1) {
      error("region has " + std::to_string(body.args.size()) + " arguments, expected the induction variable and " + std::to_string(numIters) + " iteration values");
      return;
    }
    if (valid(body.args[0]) && type(body.args[0]) != lb) error("induction variable must have the bounds' type " + lb.str());
    for (size_t i = 0; i < numIters; ++i)
      if (valid(body.args[1 + i]) && valid(op.results[i]) && type(body.args[1 + i]) != type(op.results[i]))
        error("region argument " + std::to_string(1 + i) + " has type " + type(body.args[1 + i]).str() + ", expected " + type(op.results[i]).str());
    checkYieldTypes(body, op.results, "the loop body");
  }

  void checkIf(const Op& op) {
    expectSameType(IfOp(op).condition(), Type::scalar(DType::Bool), "condition");
    if (op.regions.size() != 2) { error("must have a then and an else region"); return; }
    for (size_t r = 0; r < 2; ++r) {
      if (!op.regions[r].args.empty()) error(std::string(r ? "else" : "then") + " region must have no arguments");
      checkYieldTypes(op.regions[r], op.results, r ? "the else region" : "the then region");
    }
  }
};

}  // namespace

std::vector<std::string> verify(const Function& fn) { return Verifier(fn).run(); }

std::vector<std::string> verify(const Module& module) {
  std::vector<std::string> all;
  for (const auto& fn : module.functions) {
    if (!fn) continue;
    std::vector<std::string> errors = verify(*fn);
    all.insert(all.end(), errors.begin(), errors.end());
  }
  return all;
}

}  // namespace argus::ir
