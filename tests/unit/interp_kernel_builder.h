// A small helper over ir::Builder to write test kernels compactly.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ir/ir.h"
#include "ir/ops.h"

namespace argus::interp::testing {

using ir::BinaryKind;
using ir::DType;
using ir::Layout;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

using Dim = std::variant<std::string, int64_t>;

class KernelBuilder {
 public:
  explicit KernelBuilder(std::string name, int64_t warps = 4) : fn(std::make_unique<ir::Function>()), b(*fn, &fn->body) {
    fn->name = std::move(name);
    fn->numWarps = warps;
    for (auto& g : fn->grid) g = constant(1);
  }

  std::unique_ptr<ir::Function> fn;
  ir::Builder b;

  // --- parameters (declare all tensors and scalars, then call sizes())
  ValueId tensor(const std::string& name, DType dt, std::vector<Dim> dims) {
    ir::Param p{ir::ParamKind::Tensor, name, dt, {}, ir::kNoValue, {}, {}};
    std::vector<int64_t> shape;
    for (const Dim& d : dims) {
      if (const int64_t* c = std::get_if<int64_t>(&d)) {
        p.dims.push_back({*c, -1});
        shape.push_back(*c);
      } else {
        p.dims.push_back({-1, sizeIndex(std::get<std::string>(d))});
        shape.push_back(-1);
      }
    }
    p.value = b.addBlockArg(fn->body, Type::tensor(dt, shape), name);
    fn->params.push_back(p);
    return p.value;
  }
  ValueId scalar(const std::string& name, DType dt) {
    ir::Param p{ir::ParamKind::Scalar, name, dt, {}, ir::kNoValue, {}, {}};
    p.value = b.addBlockArg(fn->body, Type::scalar(dt), name);
    fn->params.push_back(p);
    return p.value;
  }
  // Appends the Size parameters (ABI order); returns their values by name order.
  std::vector<ValueId> sizes() {
    std::vector<ValueId> out;
    for (const std::string& n : fn->sizeNames) {
      ir::Param p{ir::ParamKind::Size, n, DType::I32, {}, ir::kNoValue, {}, {}};
      p.value = b.addBlockArg(fn->body, Type::scalar(DType::I32), n);
      fn->params.push_back(p);
      out.push_back(p.value);
    }
    return out;
  }

  // --- launch expressions
  static ir::LaunchExpr constant(int64_t v) { return {ir::LaunchExpr::Kind::Const, v, {}}; }
  ir::LaunchExpr size(const std::string& name) { return {ir::LaunchExpr::Kind::Size, sizeIndex(name), {}}; }
  static ir::LaunchExpr cdiv(ir::LaunchExpr a, ir::LaunchExpr b) {
    return {ir::LaunchExpr::Kind::CeilDiv, 0, {std::move(a), std::move(b)}};
  }
  static ir::LaunchExpr expr(ir::LaunchExpr::Kind k, ir::LaunchExpr a, ir::LaunchExpr b) {
    return {k, 0, {std::move(a), std::move(b)}};
  }

  // --- ops
  ValueId i32(int64_t v) { return b.constInt(v, DType::I32); }
  ValueId f32(double v) { return b.constFloat(v, DType::F32); }
  ValueId constant(double v, DType dt) { return ir::isFloat(dt) ? b.constFloat(v, dt) : b.constInt(static_cast<int64_t>(v), dt); }
  ValueId pid(int axis) {
    ir::Attrs a;
    argus::ir::ProgramIdAttrs(a).axis(axis);
    return b.make(OpKind::ProgramId, {}, Type::scalar(DType::I32), {}, a);
  }
  const Type& type(ValueId v) const { return fn->values[v].type; }
  ValueId bin(BinaryKind k, ValueId x, ValueId y) {
    ir::Attrs a;
    argus::ir::BinaryAttrs(a).binaryKind(k);
    return b.make(OpKind::Binary, {x, y}, type(x), {}, a);
  }
  ValueId add(ValueId x, ValueId y) { return bin(BinaryKind::Add, x, y); }
  ValueId mul(ValueId x, ValueId y) { return bin(BinaryKind::Mul, x, y); }
  ValueId cmp(ir::CmpKind k, ValueId x, ValueId y) {
    ir::Attrs a;
    argus::ir::CompareAttrs(a).cmpKind(k);
    Type t = type(x);
    t.dtype = DType::Bool;
    return b.make(OpKind::Compare, {x, y}, t, {}, a);
  }
  ValueId unary(ir::UnaryKind k, ValueId x) {
    ir::Attrs a;
    argus::ir::UnaryAttrs(a).unaryKind(k);
    return b.make(OpKind::Unary, {x}, type(x), {}, a);
  }
  ValueId fma(ValueId x, ValueId y, ValueId z) { return b.make(OpKind::Fma, {x, y, z}, type(x), {}); }
  ValueId select(ValueId c, ValueId x, ValueId y) { return b.make(OpKind::Select, {c, x, y}, type(x), {}); }
  ValueId cast(ValueId x, DType dt) {
    ir::Attrs a;
    argus::ir::CastAttrs(a).to(dt);
    Type t = type(x);
    t.dtype = dt;
    return b.make(OpKind::Cast, {x}, t, {}, a);
  }
  ValueId splat(ValueId s, Layout layout) { return b.make(OpKind::Splat, {s}, Type::tile(type(s).dtype, std::move(layout)), {}); }
  ValueId iota(std::vector<int64_t> shape, int axis) {
    ir::Attrs a;
    argus::ir::IotaAttrs(a).axis(axis);
    return b.make(OpKind::Iota, {}, Type::tile(DType::I32, Layout::canonical(std::move(shape))), {}, a);
  }
  ValueId view(ValueId base, std::vector<ValueId> offsets, std::vector<int64_t> shape, SourceRange range = {}) {
    const Type& bt = type(base);
    ir::MemSpace space = bt.kind == ir::TypeKind::Shared ? ir::MemSpace::Shared : ir::MemSpace::Global;
    offsets.insert(offsets.begin(), base);
    return b.make(OpKind::View, offsets, Type::view(space, bt.dtype, std::move(shape)), range);
  }
  ValueId load(ValueId v, std::optional<ValueId> other = std::nullopt, SourceRange range = {}) {
    std::vector<ValueId> ops = {v};
    if (other) ops.push_back(*other);
    return b.make(OpKind::Load, ops, Type::tile(type(v).dtype, Layout::canonical(type(v).shape)), range);
  }
  void store(ValueId v, ValueId t, SourceRange range = {}) { b.create(OpKind::Store, {v, t}, {}, range); }
  ValueId reduce(ir::ReduceKind k, ValueId x, int axis) {
    ir::Attrs a;
    argus::ir::ReduceAttrs(a).reduceKind(k);
    argus::ir::ReduceAttrs(a).axis(axis);
    Layout l = type(x).layout;
    l.reducedMask |= 1u << axis;
    return b.make(OpKind::Reduce, {x}, Type::tile(type(x).dtype, l), {}, a);
  }
  ValueId reduceAll(ir::ReduceKind k, ValueId x) {
    ir::Attrs a;
    argus::ir::ReduceAllAttrs(a).reduceKind(k);
    return b.make(OpKind::ReduceAll, {x}, Type::scalar(type(x).dtype), {}, a);
  }
  ValueId broadcast(ValueId x, uint32_t keepReduced = 0) {
    Layout l = type(x).layout;
    l.reducedMask &= keepReduced;
    return b.make(OpKind::Broadcast, {x}, Type::tile(type(x).dtype, l), {});
  }
  ValueId convert(ValueId x, Layout l) { return b.make(OpKind::ConvertLayout, {x}, Type::tile(type(x).dtype, l), {}); }
  ValueId alloc(const std::string& name, DType dt, std::vector<int64_t> shape, SourceRange range = {}) {
    ValueId v = b.make(OpKind::AllocShared, {}, Type::shared(dt, std::move(shape)), range);
    fn->values[v].name = name;
    return v;
  }
  void barrier() { b.create(OpKind::Barrier, {}, {}, {}); }
  ValueId dot(ValueId x, ValueId y, ValueId acc) { return b.make(OpKind::Dot, {x, y, acc}, type(acc), {}); }

  // for iv in range(lb, ub, step) carrying `inits`; body returns the yielded values.
  std::vector<ValueId> forLoop(ValueId lb, ValueId ub, ValueId step, std::vector<ValueId> inits,
                               const std::function<std::vector<ValueId>(ValueId, std::vector<ValueId>)>& body,
                               SourceRange range = {}) {
    std::vector<ValueId> operands = {lb, ub, step};
    std::vector<Type> types;
    for (ValueId v : inits) {
      operands.push_back(v);
      types.push_back(type(v));
    }
    ir::Op& op = b.create(OpKind::For, operands, types, range);
    ir::Block& region = op.regions[0];
    ValueId iv = b.addBlockArg(region, type(lb), "iv");
    std::vector<ValueId> iters;
    for (ValueId v : inits) iters.push_back(b.addBlockArg(region, type(v)));
    ir::Block* saved = b.block();
    b.setBlock(&region);
    std::vector<ValueId> yields = body(iv, iters);
    b.create(OpKind::Yield, yields, {}, {});
    b.setBlock(saved);
    return op.results;
  }

  std::vector<ValueId> ifThenElse(ValueId cond, std::vector<Type> types, const std::function<std::vector<ValueId>()>& thenBody,
                                  const std::function<std::vector<ValueId>()>& elseBody) {
    ir::Op& op = b.create(OpKind::If, {cond}, types, {});
    ir::Block* saved = b.block();
    b.setBlock(&op.regions[0]);
    b.create(OpKind::Yield, thenBody(), {}, {});
    b.setBlock(&op.regions[1]);
    b.create(OpKind::Yield, elseBody(), {}, {});
    b.setBlock(saved);
    return op.results;
  }

 private:
  int sizeIndex(const std::string& name) {
    for (size_t i = 0; i < fn->sizeNames.size(); ++i)
      if (fn->sizeNames[i] == name) return static_cast<int>(i);
    fn->sizeNames.push_back(name);
    return static_cast<int>(fn->sizeNames.size() - 1);
  }
};

}  // namespace argus::interp::testing
