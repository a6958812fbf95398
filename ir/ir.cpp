#include "ir/ir.h"
#include "ir/ops.h"

#include <limits>

namespace argus::ir {

// ---------------------------------------------------------------- names

bool isArithmetic(OpKind kind) { return opInfo(kind).has(kArithmetic); }

ValueId sharedBufferOf(const Function& fn, ValueId view) {
  if (view >= fn.values.size()) return kNoValue;
  const Op* def = fn.values[view].def;
  if (!def || def->kind != OpKind::View || def->operands.empty()) return kNoValue;
  const ValueId base = ViewOp(*def).base();
  return base < fn.values.size() && fn.values[base].type.kind == TypeKind::Shared ? base : kNoValue;
}

const char* opKindName(OpKind k) { return opInfo(k).name; }

const char* binaryKindName(BinaryKind k) {
  switch (k) {
    case BinaryKind::Add: return "add";
    case BinaryKind::Sub: return "sub";
    case BinaryKind::Mul: return "mul";
    case BinaryKind::Div: return "div";
    case BinaryKind::Rem: return "rem";
    case BinaryKind::Min: return "min";
    case BinaryKind::Max: return "max";
    case BinaryKind::Pow: return "pow";
    case BinaryKind::And: return "and";
    case BinaryKind::Or: return "or";
    case BinaryKind::Xor: return "xor";
    case BinaryKind::Shl: return "shl";
    case BinaryKind::Shr: return "shr";
  }
  return "?";
}

const char* cmpKindName(CmpKind k) {
  switch (k) {
    case CmpKind::Eq: return "eq";
    case CmpKind::Ne: return "ne";
    case CmpKind::Lt: return "lt";
    case CmpKind::Le: return "le";
    case CmpKind::Gt: return "gt";
    case CmpKind::Ge: return "ge";
  }
  return "?";
}

const char* unaryKindName(UnaryKind k) {
  switch (k) {
    case UnaryKind::Neg: return "neg";
    case UnaryKind::Not: return "not";
    case UnaryKind::Abs: return "abs";
    case UnaryKind::Exp: return "exp";
    case UnaryKind::Exp2: return "exp2";
    case UnaryKind::Log: return "log";
    case UnaryKind::Log2: return "log2";
    case UnaryKind::Sqrt: return "sqrt";
    case UnaryKind::Rsqrt: return "rsqrt";
    case UnaryKind::Tanh: return "tanh";
    case UnaryKind::Erf: return "erf";
    case UnaryKind::Sin: return "sin";
    case UnaryKind::Cos: return "cos";
    case UnaryKind::Floor: return "floor";
    case UnaryKind::Ceil: return "ceil";
  }
  return "?";
}

const char* reduceKindName(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum: return "sum";
    case ReduceKind::Max: return "max";
    case ReduceKind::Min: return "min";
    case ReduceKind::Prod: return "prod";
  }
  return "?";
}

// ---------------------------------------------------------------- builder

ValueId Builder::addBlockArg(Block& block, Type type, std::string name, SourceRange range) {
  ValueId id = static_cast<ValueId>(fn_.values.size());
  Value v;
  v.type = std::move(type);
  v.name = std::move(name);
  v.range = range;
  fn_.values.push_back(std::move(v));
  block.args.push_back(id);
  return id;
}

Op& Builder::create(OpKind kind, std::vector<ValueId> operands, std::vector<Type> resultTypes,
                    SourceRange range, Attrs attrs) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->range = range;
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  if (kind == OpKind::For) op->regions.resize(1);
  if (kind == OpKind::If) op->regions.resize(2);
  for (uint32_t i = 0; i < resultTypes.size(); ++i) {
    ValueId id = static_cast<ValueId>(fn_.values.size());
    Value v;
    v.type = std::move(resultTypes[i]);
    v.def = op.get();
    v.resultIndex = i;
    v.range = range;
    fn_.values.push_back(std::move(v));
    op->results.push_back(id);
  }
  Op& ref = *op;
  block_->ops.push_back(std::move(op));
  return ref;
}

ValueId Builder::make(OpKind kind, std::vector<ValueId> operands, Type resultType, SourceRange range,
                      Attrs attrs) {
  return create(kind, std::move(operands), {std::move(resultType)}, range, std::move(attrs)).results[0];
}

ValueId Builder::constInt(int64_t v, DType t, SourceRange range) {
  Attrs a;
  ConstAttrs(a).intValue(v).dtype(t);
  return make(OpKind::Const, {}, Type::scalar(t), range, a);
}

ValueId Builder::constFloat(double v, DType t, SourceRange range) {
  Attrs a;
  ConstAttrs(a).floatValue(v).dtype(t);
  return make(OpKind::Const, {}, Type::scalar(t), range, a);
}

ValueId Builder::constBool(bool v, SourceRange range) {
  Attrs a;
  ConstAttrs(a).intValue(v ? 1 : 0).dtype(DType::Bool);
  return make(OpKind::Const, {}, Type::scalar(DType::Bool), range, a);
}

// ---------------------------------------------------------------- launch expressions

namespace {

int precedence(LaunchExpr::Kind k) {
  using K = LaunchExpr::Kind;
  switch (k) {
    case K::Or: return 1;
    case K::And: return 2;
    case K::Not: return 3;
    case K::Lt: case K::Le: case K::Gt: case K::Ge: case K::Eq: case K::Ne: return 4;
    case K::Add: case K::Sub: return 5;
    case K::Mul: case K::FloorDiv: case K::Mod: return 6;
    default: return 7;  // constants, sizes, calls
  }
}

const char* infixSpelling(LaunchExpr::Kind k) {
  using K = LaunchExpr::Kind;
  switch (k) {
    case K::Add: return " + ";
    case K::Sub: return " - ";
    case K::Mul: return " * ";
    case K::FloorDiv: return " // ";
    case K::Mod: return " % ";
    case K::Lt: return " < ";
    case K::Le: return " <= ";
    case K::Gt: return " > ";
    case K::Ge: return " >= ";
    case K::Eq: return " == ";
    case K::Ne: return " != ";
    case K::And: return " and ";
    case K::Or: return " or ";
    default: return nullptr;
  }
}

// Wrapping arithmetic without signed-overflow UB.
int64_t wrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

}  // namespace

std::string LaunchExpr::str(const std::vector<std::string>& sizeNames) const {
  auto operandStr = [&](size_t i) -> std::string {
    return i < operands.size() ? operands[i].str(sizeNames) : std::string("?");
  };
  switch (kind) {
    case Kind::Const: return std::to_string(value);
    case Kind::Size:
      return value >= 0 && static_cast<size_t>(value) < sizeNames.size()
                 ? sizeNames[static_cast<size_t>(value)]
                 : "size#" + std::to_string(value);
    case Kind::CeilDiv: return "cdiv(" + operandStr(0) + ", " + operandStr(1) + ")";
    case Kind::Min: return "min(" + operandStr(0) + ", " + operandStr(1) + ")";
    case Kind::Max: return "max(" + operandStr(0) + ", " + operandStr(1) + ")";
    case Kind::Not: {
      std::string inner = operandStr(0);
      if (!operands.empty() && precedence(negated().kind) < precedence(kind)) inner = "(" + inner + ")";
      return "not " + inner;
    }
    default: break;
  }
  int prec = precedence(kind);
  bool comparison = prec == 4;
  std::string left = operandStr(0), right = operandStr(1);
  if (operands.size() > 0) {
    int p = precedence(lhs().kind);
    if (p < prec || (comparison && p == prec)) left = "(" + left + ")";
  }
  if (operands.size() > 1) {
    int p = precedence(rhs().kind);
    if (p <= prec && p != 7) right = "(" + right + ")";
  }
  return left + infixSpelling(kind) + right;
}

const Requirement* Function::failedRequirement(const std::vector<int64_t>& sizes) const {
  for (const Requirement& r : requirements) {
    int64_t holds = 0;
    if (!r.condition.evaluate(sizes, holds) || !holds) return &r;
  }
  return nullptr;
}

bool LaunchExpr::evaluate(const std::vector<int64_t>& sizes, int64_t& out, std::string* error) const {
  auto fail = [&](const std::string& message) {
    if (error) *error = message;
    return false;
  };
  if (kind == Kind::Const) { out = value; return true; }
  if (kind == Kind::Size) {
    if (value < 0 || static_cast<size_t>(value) >= sizes.size())
      return fail("size index " + std::to_string(value) + " is out of range");
    out = sizes[static_cast<size_t>(value)];
    return true;
  }
  size_t arity = kind == Kind::Not ? 1 : 2;
  if (operands.size() != arity) return fail("malformed launch expression");
  int64_t a = 0, b = 0;
  if (!operands.front().evaluate(sizes, a, error)) return false;  // lhs, or Not's operand
  if (arity == 2 && !rhs().evaluate(sizes, b, error)) return false;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  switch (kind) {
    case Kind::Add: out = wrapAdd(a, b); return true;
    case Kind::Sub: out = wrapSub(a, b); return true;
    case Kind::Mul: out = wrapMul(a, b); return true;
    case Kind::FloorDiv:
    case Kind::CeilDiv:
    case Kind::Mod: {
      if (b == 0) return fail("division by zero");
      int64_t n = kind == Kind::CeilDiv ? wrapSub(wrapAdd(a, b), 1) : a;
      if (n == kMin && b == -1) { out = kind == Kind::Mod ? 0 : kMin; return true; }
      out = kind == Kind::Mod ? n % b : n / b;
      return true;
    }
    case Kind::Min: out = a < b ? a : b; return true;
    case Kind::Max: out = a > b ? a : b; return true;
    case Kind::Lt: out = a < b; return true;
    case Kind::Le: out = a <= b; return true;
    case Kind::Gt: out = a > b; return true;
    case Kind::Ge: out = a >= b; return true;
    case Kind::Eq: out = a == b; return true;
    case Kind::Ne: out = a != b; return true;
    case Kind::And: out = (a != 0) && (b != 0); return true;
    case Kind::Or: out = (a != 0) || (b != 0); return true;
    case Kind::Not: out = a == 0; return true;
    default: return fail("malformed launch expression");
  }
}

namespace {

// Recursion as deep as the source's nesting of loops and ifs, which the front
// end bounds (frontend/limits.h).
void cloneBlock(const Block& from, Block& to, Function& fn) {
  to.args = from.args;
  to.ops.reserve(from.ops.size());
  for (const auto& op : from.ops) {
    auto copy = std::make_unique<Op>();
    copy->kind = op->kind;
    copy->range = op->range;
    copy->operands = op->operands;
    copy->results = op->results;
    copy->attrs = op->attrs;
    copy->regions.resize(op->regions.size());
    for (size_t r = 0; r < op->regions.size(); ++r) cloneBlock(op->regions[r], copy->regions[r], fn);
    for (ValueId v : copy->results)
      if (v < fn.values.size()) fn.values[v].def = copy.get();
    to.ops.push_back(std::move(copy));
  }
}

}  // namespace

std::unique_ptr<Function> cloneFunction(const Function& fn) {
  auto out = std::make_unique<Function>();
  out->name = fn.name;
  out->range = fn.range;
  out->params = fn.params;
  out->sizeNames = fn.sizeNames;
  for (int axis = 0; axis < 3; ++axis) out->grid[axis] = fn.grid[axis];
  out->numWarps = fn.numWarps;
  out->producerWarps = fn.producerWarps;
  out->clusterSize = fn.clusterSize;
  out->requirements = fn.requirements;
  out->constants = fn.constants;
  out->values = fn.values;
  cloneBlock(fn.body, out->body, *out);
  return out;
}

}  // namespace argus::ir
