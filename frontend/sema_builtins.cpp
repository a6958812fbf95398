// Builtins: sema's view of the table (frontend/builtins.def), argument binding, and the memory and grid builtins
// (program_id, num_programs, cdiv, load, store, copy, shared, barrier) and the
// asynchronous copies (copy_async, commit_group, wait_group).
#include <algorithm>

#include "frontend/builtins.h"
#include "frontend/sema_internal.h"

namespace argus::sema::detail {

const std::vector<BuiltinInfo>& builtinTable() {
  static const std::vector<BuiltinInfo> table = [] {
    std::vector<BuiltinInfo> rows;
    for (const BuiltinSpec& spec : builtinSpecs()) {
      if (spec.kind == BuiltinKind::Layout) continue;  // only inside `layout=` (sema_mma.cpp)
      rows.push_back(BuiltinInfo{static_cast<Builtin>(rows.size()), spec.name.data(), spec.paramNames(),
                                 spec.requiredCount(), spec.signature()});
    }
    return rows;
  }();
  return table;
}

const BuiltinInfo* findBuiltin(std::string_view name) {
  static const std::unordered_map<std::string_view, const BuiltinInfo*> index = [] {
    std::unordered_map<std::string_view, const BuiltinInfo*> m;
    for (const BuiltinInfo& b : builtinTable()) m[b.name] = &b;
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

namespace {
std::string countText(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}
std::string takesText(size_t required, size_t total) {
  if (total == 0) return "no arguments";
  if (required == total) return countText(total, "argument", "arguments");
  return std::to_string(required) + " to " + std::to_string(total) + " arguments";
}
}  // namespace

bool Analyzer::bindArguments(const ast::CallExpr& call, const std::string& fname, const std::vector<std::string>& params,
                             size_t required, std::vector<const ast::Argument*>& slots) {
  slots.assign(params.size(), nullptr);
  size_t positional = 0;
  bool ok = true;
  for (const ast::Argument& a : call.args)
    if (!a.value) return false;  // the parser reported it
  for (const ast::Argument& a : call.args) {
    if (!a.keyword) {
      if (positional >= params.size()) {
        size_t given = 0;
        for (const ast::Argument& x : call.args) given += x.keyword ? 0 : 1;
        report(DiagId::ArgumentCount, a.range, {fname, takesText(required, params.size()),
                                                std::to_string(given) + (given == 1 ? " was" : " were")});
        ok = false;
        break;
      }
      slots[positional++] = &a;
      continue;
    }
    size_t i = 0;
    while (i < params.size() && params[i] != *a.keyword) ++i;
    if (i == params.size()) {
      if (tritonMaskArgument(fname, call, a)) continue;  // reported; the call is analysed without it
      std::string hint = suggestion(*a.keyword, params);
      Diagnostic* d = report(DiagId::UnknownKeyword, a.keywordRange,
                             {fname, *a.keyword, hint.empty() ? "" : "; did you mean '" + hint + "'?"});
      if (!hint.empty()) addFixIt(d, a.keywordRange, hint, "replace with '" + hint + "'");
      ok = false;
      continue;
    }
    if (slots[i]) {
      report(DiagId::DuplicateArgument, a.range, {fname, params[i]});
      ok = false;
      continue;
    }
    slots[i] = &a;
  }
  if (!ok) return false;
  for (size_t i = 0; i < required && i < params.size(); ++i)
    if (!slots[i]) {
      report(DiagId::MissingArgument, call.parenRange.empty() ? call.range : call.parenRange, {fname, params[i]});
      ok = false;
    }
  return ok;
}

Val Analyzer::callBuiltin(const BuiltinInfo& info, const ast::CallExpr& call) {
  auto evalArgs = [&] {
    for (const ast::Argument& a : call.args)
      if (a.value) eval(*a.value);
  };
  if (info.id == Builtin::Range) {
    report(DiagId::NotAValue, call.range, {"range(...)", "; it is only used in 'for v in range(...)'"});
    return Val::error();
  }
  if (info.id == Builtin::Pipelined) {
    report(DiagId::NotAValue, call.range, {"pipelined(...)", "; it is only used in 'for v in pipelined(n, stages=S)'"});
    return Val::error();
  }
  if ((info.id == Builtin::Max || info.id == Builtin::Min) && call.args.size() == 2 && !call.args[0].keyword &&
      !call.args[1].keyword) {
    std::string elementwise = info.id == Builtin::Max ? "maximum" : "minimum";
    std::string args = text(call.args[0].range) + ", " + text(call.args[1].range);
    Diagnostic* d = report(DiagId::TwoOperandReduction, call.callee->range, {info.name, elementwise, args});
    addFixIt(d, call.callee->range, elementwise, "use " + elementwise + "(a, b)");
    evalArgs();
    return Val::error();
  }
  if (info.id == Builtin::Zeros)
    if (std::optional<Val> v = tritonZerosOrder(call)) return *v;
  std::vector<std::string> params(info.params.begin(), info.params.end());
  std::vector<const ast::Argument*> a;
  if (!bindArguments(call, info.name, params, info.required, a)) {
    evalArgs();
    return Val::error();
  }
  switch (info.id) {
    case Builtin::ProgramId:
    case Builtin::NumPrograms: {
      std::optional<int64_t> axis = constIntArg(*a[0]->value, info.name, "axis");
      if (!axis) return Val::error();
      if (*axis < 0 || *axis > 2) {
        report(DiagId::ProgramIdAxis, a[0]->value->range, {info.name, std::to_string(*axis)});
        return Val::error();
      }
      if (*axis >= gridRank_)
        report(DiagId::AxisBeyondGrid, call.range,
               {info.name, std::to_string(*axis), info.id == Builtin::ProgramId ? "0" : "1",
                countText(static_cast<size_t>(gridRank_), "axis", "axes")});
      ir::Attrs attrs;
      if (info.id == Builtin::ProgramId) ir::ProgramIdAttrs(attrs).axis(*axis);
      else ir::NumProgramsAttrs(attrs).axis(*axis);
      return Val::value(b().make(info.id == Builtin::ProgramId ? ir::OpKind::ProgramId : ir::OpKind::NumPrograms, {},
                                 ir::Type::scalar(ir::DType::I32), call.range, attrs));
    }
    case Builtin::Cdiv: return builtinCdiv(call, a);
    case Builtin::Load:
    case Builtin::Store:
    case Builtin::Copy:
    case Builtin::Shared:
    case Builtin::Barrier: return builtinMemory(info.id, call, a);
    case Builtin::Zeros:
    case Builtin::Full:
    case Builtin::Arange:
    case Builtin::Iota: return builtinCreation(info.id, call, a);
    case Builtin::Sum:
    case Builtin::Max:
    case Builtin::Min:
    case Builtin::Prod: return builtinReduce(info.id, call, a);
    case Builtin::Where: return builtinWhere(call, a);
    case Builtin::Cast: return builtinCast(call, a);
    case Builtin::Dot: return builtinDot(call, a);
    case Builtin::Require: return builtinRequire(call, a);
    case Builtin::CopyAsync:
    case Builtin::CopyBulk:
    case Builtin::CommitGroup:
    case Builtin::WaitGroup: return builtinAsync(info.id, call, a);
    case Builtin::ExpandDims:
    case Builtin::Reshape: return builtinReshape(info.id, call, a);
    case Builtin::Rand:
    case Builtin::Randint:
    case Builtin::Randint4x: return builtinRandom(info.id, call, a);
    case Builtin::Tag:
      report(DiagId::ReservedForChecker, call.callee->range, {"tag"});
      return Val::error();
    default: return builtinMath(info.id, call, a);
  }
}

Val Analyzer::builtinCdiv(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  Operand x{eval(*a[0]->value), a[0]->value->range};
  Operand y{eval(*a[1]->value), a[1]->value->range};
  if (x.val.isError() || y.val.isError()) return Val::error();
  const char* names[] = {"a", "b"};
  int k = 0;
  for (Operand* o : {&x, &y}) {
    std::optional<ir::DType> dt = dtypeOf(o->val);
    bool scalar = o->val.kind == Val::Kind::Const || (typeOf(o->val) && typeOf(o->val)->isScalar());
    if (!dt || !scalar || !ir::isInteger(*dt)) {
      report(DiagId::BadArgument, o->range, {names[k], "cdiv", "an integer scalar", describe(o->val)});
      return Val::error();
    }
    ++k;
  }
  if (x.val.kind == Val::Kind::Const && y.val.kind == Val::Kind::Const) {
    std::vector<Operand*> ops{&x, &y};
    std::optional<ir::DType> dt = unifyDTypes(ops, "cdiv");
    if (!dt) return Val::error();
    bool weak = x.val.c.weak && y.val.c.weak;
    std::optional<Constant> sum = foldBinary(ast::BinaryOp::Add, x.val.c, y.val.c, *dt, weak, call.range);
    if (!sum) return Val::error();
    std::optional<Constant> minus = foldBinary(ast::BinaryOp::Sub, *sum, Constant::ofInt(1), *dt, weak, call.range);
    if (!minus) return Val::error();
    if (y.val.c.i == 0) {
      report(DiagId::ConstDivByZero, y.range);
      return Val::error();
    }
    std::optional<Constant> q = foldBinary(ast::BinaryOp::FloorDiv, *minus, y.val.c, *dt, weak, call.range);
    return q ? Val::constant(*q) : Val::error();
  }
  ir::DType dt;
  auto ids = elementwiseOperands({&x, &y}, "cdiv", call.range, dt);
  if (!ids) return Val::error();
  Val sum = emitBinary(ir::BinaryKind::Add, (*ids)[0], (*ids)[1], call.range);
  Val minus = emitBinary(ir::BinaryKind::Sub, sum.id, b().constInt(1, dt, call.range), call.range);
  return emitBinary(ir::BinaryKind::Div, minus.id, (*ids)[1], call.range);
}

Val Analyzer::storeValue(const Val& view, Operand value, SourceRange range, const char* verb) {
  if (view.isError() || value.val.isError()) return Val::error();
  const ir::Type vt = fn_->values[view.id].type;
  if (!isValueLike(value.val)) {
    report(DiagId::BadArgument, value.range, {"value", verb, "a tile or a scalar", describe(value.val)});
    return Val::error();
  }
  std::string dt = ir::dtypeName(vt.dtype);
  if (value.val.kind == Val::Kind::Const) {
    if (!canAdapt(value.val.c, vt.dtype)) {
      if (value.val.c.weak && value.val.c.kind == Constant::Kind::Int && ir::isInteger(vt.dtype)) {
        report(DiagId::ConstantRange, value.range, {value.val.c.str(), dt});
      } else {
        Diagnostic* d = report(DiagId::ValueDTypeMismatch, value.range, {verb, describe(value.val), describe(view), dt});
        addFixIt(d, value.range, "cast(" + text(value.range) + ", " + dt + ")", "convert it to " + dt);
      }
      return Val::error();
    }
  } else if (typeOf(value.val)->dtype != vt.dtype) {
    Diagnostic* d = report(DiagId::ValueDTypeMismatch, value.range, {verb, describe(value.val), describe(view), dt});
    addFixIt(d, value.range, "cast(" + text(value.range) + ", " + dt + ")", "convert it to " + dt);
    return Val::error();
  }
  for (int64_t e : vt.shape)
    if (!isPowerOfTwo(e)) {
      checkTileExtent(e, range, true, "tile");
      return Val::error();
    }
  ir::ValueId v = materialize(value.val, vt.dtype, value.range);
  const ir::Type& t = fn_->values[v].type;
  if (t.isTile()) {
    bool fits = t.shape.size() == vt.shape.size();
    for (size_t d = 0; fits && d < t.shape.size(); ++d) fits = t.shape[d] == vt.shape[d] || t.shape[d] == 1;
    if (!fits) {
      report(DiagId::StoreShapeMismatch, value.range, {verb, describe(value.val), shapeText(vt.shape)});
      return Val::error();
    }
  }
  if (!t.isTile() || t.shape != vt.shape) v = toLayout(v, ir::Layout::canonical(vt.shape), range);
  b().create(ir::OpKind::Store, {view.id, v}, {}, range);
  return Val::none();
}

Val Analyzer::builtinMemory(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  switch (id) {
    case Builtin::Load: {
      Val view = asView(eval(*a[0]->value), a[0]->value->range, "load", "view");
      if (view.isError()) return Val::error();
      const ir::Type vt = fn_->values[view.id].type;
      for (int64_t e : vt.shape)
        if (!checkTileExtent(e, a[0]->value->range, true, "tile")) return Val::error();
      std::vector<ir::ValueId> operands{view.id};
      if (a[1] && a[1]->value->kind != ast::ExprKind::None) {
        Val other = eval(*a[1]->value);
        if (other.isError()) return Val::error();
        if (vt.space == ir::MemSpace::Shared) {
          report(DiagId::OtherOnShared, a[1]->range);
          return Val::error();
        }
        std::string want = "an " + std::string(ir::dtypeName(vt.dtype)) + " scalar";
        if (ir::dtypeName(vt.dtype)[0] != 'f' && ir::dtypeName(vt.dtype)[0] != 'i') want = "a" + want.substr(2);
        bool ok = other.kind == Val::Kind::Const ? canAdapt(other.c, vt.dtype)
                                                 : (typeOf(other) && *typeOf(other) == ir::Type::scalar(vt.dtype));
        if (!ok) {
          report(DiagId::BadArgument, a[1]->value->range, {"other", "load", want, describe(other)});
          return Val::error();
        }
        operands.push_back(materialize(other, vt.dtype, a[1]->value->range));
      }
      return Val::value(b().make(ir::OpKind::Load, operands, ir::Type::tile(vt.dtype, ir::Layout::canonical(vt.shape)),
                                 call.range));
    }
    case Builtin::Store: {
      Val view = asView(eval(*a[0]->value), a[0]->value->range, "store", "view");
      Operand value{eval(*a[1]->value), a[1]->value->range};
      return storeValue(view, std::move(value), call.range, "store");
    }
    case Builtin::Copy: {
      Val dst = asView(eval(*a[0]->value), a[0]->value->range, "copy", "dst");
      Val src = asView(eval(*a[1]->value), a[1]->value->range, "copy", "src");
      if (dst.isError() || src.isError()) return Val::error();
      const ir::Type dt = fn_->values[dst.id].type, st = fn_->values[src.id].type;
      if (dt.shape != st.shape) {
        report(DiagId::StoreShapeMismatch, a[1]->value->range, {"copy", describe(src), shapeText(dt.shape)});
        return Val::error();
      }
      if (dt.dtype != st.dtype) {
        report(DiagId::BadArgument, a[1]->value->range,
               {"src", "copy", "a view of " + std::string(ir::dtypeName(dt.dtype)) + " like the destination", describe(src)});
        return Val::error();
      }
      for (int64_t e : st.shape)
        if (!checkTileExtent(e, a[1]->value->range, true, "tile")) return Val::error();
      ir::ValueId tile = b().make(ir::OpKind::Load, {src.id}, ir::Type::tile(st.dtype, ir::Layout::canonical(st.shape)),
                                  call.range);
      b().create(ir::OpKind::Store, {dst.id, tile}, {}, call.range);
      return Val::none();
    }
    case Builtin::Shared: {
      Val dtype = eval(*a[0]->value);
      if (dtype.isError()) return Val::error();
      if (dtype.kind != Val::Kind::DType) {
        report(DiagId::BadArgument, a[0]->value->range, {"dtype", "shared", "a dtype such as f32", describe(dtype)});
        return Val::error();
      }
      std::optional<std::vector<int64_t>> shape = evalShape(*a[1]->value, false, "shared buffer");
      if (!shape) return Val::error();
      if (controlDepth_ > 0) {
        report(DiagId::NotAtTopLevel, call.range, {"shared()", "a loop or a branch"});
        return Val::error();
      }
      ir::Type type = ir::Type::shared(dtype.dtype, *shape);
      if (a[2]) {
        std::optional<ir::Swizzle> swizzle = swizzleArgument(*a[2], *shape);
        if (!swizzle) return Val::error();
        type.swizzle = *swizzle;
      }
      return Val::value(b().make(ir::OpKind::AllocShared, {}, std::move(type), call.range));
    }
    case Builtin::Barrier:
      b().create(ir::OpKind::Barrier, {}, {}, call.range);
      return Val::none();
    default: return Val::error();
  }
}

// swizzle=(B, M, S): CuTe's Swizzle<B, M, S> on the buffer's element offsets.
// Small constants keep the XOR inside 32-bit offsets; S >= B keeps the bits it
// reads apart from the bits it changes (so it is a bijection); a buffer whose
// element count is a multiple of 2^(M+B) is mapped onto itself.
std::optional<ir::Swizzle> Analyzer::swizzleArgument(const ast::Argument& arg, const std::vector<int64_t>& shape) {
  constexpr int64_t kMaxField = 12;
  Val v = eval(*arg.value);
  if (v.isError()) return std::nullopt;
  SourceRange range = arg.value->range;
  std::string written = text(range);
  std::vector<int64_t> fields;
  if (v.kind == Val::Kind::Tuple)
    for (const Val& e : v.elems)
      if (e.kind == Val::Kind::Const && e.c.kind == Constant::Kind::Int) fields.push_back(e.c.i);
  if (v.kind != Val::Kind::Tuple || v.elems.size() != 3 || fields.size() != 3) {
    report(DiagId::SwizzleArgument, range,
           {written, "write three integer constants (B, M, S): XOR B bits of the element offset, starting at bit M, "
                     "with the B bits S places higher, e.g. swizzle=(3, 2, 3)"});
    return std::nullopt;
  }
  for (int64_t f : fields)
    if (f < 0 || f > kMaxField) {
      report(DiagId::SwizzleArgument, range,
             {written, "B, M and S must be from 0 to " + std::to_string(kMaxField) + ", but one is " + std::to_string(f)});
      return std::nullopt;
    }
  ir::Swizzle s{static_cast<int>(fields[0]), static_cast<int>(fields[1]), static_cast<int>(fields[2])};
  if (s.bits > 0 && s.shift < s.bits) {
    report(DiagId::SwizzleArgument, range,
           {written, "S (" + std::to_string(s.shift) + ") must be at least B (" + std::to_string(s.bits) +
                         ") so that the bits read and the bits changed do not overlap"});
    return std::nullopt;
  }
  int64_t elements = 1;
  for (int64_t e : shape) elements *= e;
  int64_t period = int64_t{1} << (s.base + s.bits);
  if (elements % period != 0) {
    report(DiagId::SwizzleBufferSize, range,
           {shapeText(shape), std::to_string(elements), std::to_string(s.bits), std::to_string(s.base),
            std::to_string(s.shift), std::to_string(period)});
    return std::nullopt;
  }
  return s;
}

// The (dst, src) views of copy_async or copy_bulk: a shared view and a global view
// of one shape and dtype; nullopt once the problem is reported.
std::optional<std::pair<Val, Val>> Analyzer::globalToSharedViews(const char* name,
                                                                 const std::vector<const ast::Argument*>& a) {
  Val dst = asView(eval(*a[0]->value), a[0]->value->range, name, "dst");
  Val src = asView(eval(*a[1]->value), a[1]->value->range, name, "src");
  if (dst.isError() || src.isError()) return std::nullopt;
  const ir::Type dt = fn_->values[dst.id].type, st = fn_->values[src.id].type;
  if (dt.space != ir::MemSpace::Shared) {
    report(DiagId::CopyAsyncSpaces, a[0]->value->range, {"dst is " + describe(dst) + "; use copy() to write global memory"});
    return std::nullopt;
  }
  if (st.space != ir::MemSpace::Global) {
    report(DiagId::CopyAsyncSpaces, a[1]->value->range, {"src is " + describe(src) + "; use copy() between shared buffers"});
    return std::nullopt;
  }
  if (dt.shape != st.shape) {
    report(DiagId::StoreShapeMismatch, a[1]->value->range, {name, describe(src), shapeText(dt.shape)});
    return std::nullopt;
  }
  if (dt.dtype != st.dtype) {
    report(DiagId::BadArgument, a[1]->value->range,
           {"src", name, "a view of " + std::string(ir::dtypeName(dt.dtype)) + " like the destination", describe(src)});
    return std::nullopt;
  }
  return std::pair<Val, Val>{dst, src};
}

// copy_async(dst, src), commit_group(), wait_group(n): the IR ops CopyAsync,
// CommitGroup and WaitGroup (ir/ir.h); the thread mapping is ir/async.h.
Val Analyzer::builtinAsync(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  switch (id) {
    case Builtin::CommitGroup:
      b().create(ir::OpKind::CommitGroup, {}, {}, call.range);
      return Val::none();
    case Builtin::WaitGroup: {
      std::optional<int64_t> n = constIntArg(*a[0]->value, "wait_group", "n");
      if (!n) return Val::error();
      if (*n < 0) {
        report(DiagId::WaitGroupCount, a[0]->value->range, {std::to_string(*n)});
        return Val::error();
      }
      ir::Attrs attrs;
      ir::WaitGroupAttrs(attrs).pending(*n);
      b().create(ir::OpKind::WaitGroup, {}, {}, call.range, attrs);
      return Val::none();
    }
    case Builtin::CopyBulk: return builtinCopyBulk(call, a);
    case Builtin::CopyAsync: {
      std::optional<std::pair<Val, Val>> views = globalToSharedViews("copy_async", a);
      if (!views) return Val::error();
      const auto& [dst, src] = *views;
      const ir::Type st = fn_->values[src.id].type;
      for (int64_t e : st.shape)
        if (!checkTileExtent(e, a[1]->value->range, true, "tile")) return Val::error();
      int64_t bytes = std::max(1, ir::dtypeBits(st.dtype) / 8);
      int64_t row = st.shape.empty() ? 1 : st.shape.back();
      if (std::min<int64_t>(16, row * bytes) < 4) {
        report(DiagId::CopyAsyncChunk, a[1]->value->range,
               {std::to_string(row), ir::dtypeName(st.dtype), row == 1 ? "" : "s", std::to_string(row * bytes)});
        return Val::error();
      }
      b().create(ir::OpKind::CopyAsync, {dst.id, src.id}, {}, call.range);
      return Val::none();
    }
    default: return Val::error();
  }
}

}  // namespace argus::sema::detail
