// Habits from Triton (docs/triton.md): `tl.` prefixes, float("inf"), `.to(dtype)`,
// `mask=` on loads and stores, zeros(shape, dtype=...). Each is reported once with
// what Argus writes instead (a fix-it where the rewrite is mechanical), and the
// analysis then goes on as if the Argus spelling had been written, so nothing
// after it reports a follow-on error.
#include <array>
#include <limits>

#include "frontend/sema_internal.h"

namespace argus::sema::detail {

namespace {

// Triton's dtype names and the builtins Argus spells differently.
constexpr std::array<std::pair<std::string_view, std::string_view>, 23> kTritonRenames{{
    {"float32", "f32"},     {"float16", "f16"},      {"bfloat16", "bf16"},     {"float64", "f64"},
    {"int8", "i8"},         {"int16", "i16"},        {"int32", "i32"},         {"int64", "i64"},
    {"uint8", "u8"},        {"uint16", "u16"},       {"uint32", "u32"},        {"uint64", "u64"},
    {"int1", "bool"},       {"float8e4nv", "f8e4m3"}, {"float8e5", "f8e5m2"},  {"debug_barrier", "barrier"},
    {"static_range", "range"}, {"constexpr", "const"}, {"tensor", "Tensor"},  {"reduce", "sum"},
    {"math", ""},           {"extra", ""},           {"language", ""},
}};

bool isTritonModule(const ast::Expr* e) {
  if (!e || e->kind != ast::ExprKind::Name) return false;
  const std::string& n = static_cast<const ast::NameExpr&>(*e).name;
  return n == "tl" || n == "triton";
}

std::string conversionDType(std::string_view fn) { return fn == "float" ? "f32" : fn == "int" ? "i32" : "bool"; }

}  // namespace

// The Argus name for `tl.<name>`: a builtin, dtype or constant of the same name,
// a renamed one, or "" when Argus has none.
std::string Analyzer::argusNameForTriton(const std::string& name) const {
  for (const auto& [triton, argus] : kTritonRenames)
    if (triton == name) return std::string(argus);
  if (findBuiltin(name) || ir::dtypeFromName(name) || name == "inf" || name == "nan") return name;
  return "";
}

std::optional<Val> Analyzer::tritonQualifiedName(const ast::AttributeExpr& e) {
  if (!isTritonModule(e.base.get()) || findBinding(static_cast<const ast::NameExpr&>(*e.base).name)) return std::nullopt;
  const std::string& module = static_cast<const ast::NameExpr&>(*e.base).name;
  std::string argus = argusNameForTriton(e.name);
  std::string advice = argus.empty() ? "; Argus has no counterpart of '" + text(e.range) + "' (docs/triton.md lists the builtins)"
                                     : "; write '" + argus + "'";
  Diagnostic* d = report(DiagId::TritonModule, e.range, {module, advice});
  if (argus.empty()) return Val::error();
  addFixIt(d, e.range, argus, "replace with '" + argus + "'");
  if (const BuiltinInfo* info = findBuiltin(argus)) {
    Val v;
    v.kind = Val::Kind::Builtin;
    v.builtin = static_cast<int>(info->id);
    v.text = argus;
    return v;
  }
  if (std::optional<ir::DType> dt = ir::dtypeFromName(argus)) {
    Val v;
    v.kind = Val::Kind::DType;
    v.dtype = *dt;
    return v;
  }
  if (argus == "inf") return Val::constant(Constant::ofFloat(std::numeric_limits<double>::infinity()));
  if (argus == "nan") return Val::constant(Constant::ofFloat(std::numeric_limits<double>::quiet_NaN()));
  return Val::error();  // const, Tensor, range: not values
}

std::optional<Val> Analyzer::tritonQualifiedCall(const ast::CallExpr& call, const ast::AttributeExpr& callee) {
  std::optional<Val> fn = tritonQualifiedName(callee);
  if (!fn) return std::nullopt;
  if (fn->kind == Val::Kind::Builtin) return callBuiltin(builtinTable()[static_cast<size_t>(fn->builtin)], call);
  for (const ast::Argument& a : call.args)
    if (a.value) eval(*a.value);
  return Val::error();
}

std::optional<Val> Analyzer::pythonConversion(const ast::CallExpr& call, const std::string& fn) {
  if ((fn != "float" && fn != "int" && fn != "bool") || findBinding(fn) || devices_.count(fn)) return std::nullopt;
  // float("inf"), float("-inf"), float("nan"): Python's spellings of the special floats.
  if (fn == "float" && call.args.size() == 1 && call.args[0].value && !call.args[0].keyword &&
      call.args[0].value->kind == ast::ExprKind::String) {
    std::string s = static_cast<const ast::StringExpr&>(*call.args[0].value).value;
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!s.empty() && s[0] == '+') s.erase(0, 1);
    std::string constant = s == "inf" || s == "infinity" ? "inf" : s == "-inf" || s == "-infinity" ? "-inf"
                           : s == "nan" || s == "-nan"    ? "nan" : "";
    if (!constant.empty()) {
      Diagnostic* d = report(DiagId::PythonConversion, call.range,
                             {fn, "Argus writes this float as the constant '" + constant + "'"});
      addFixIt(d, call.range, constant, "replace with '" + constant + "'");
      double v = constant == "nan" ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
      return Val::constant(Constant::ofFloat(constant == "-inf" ? -v : v));
    }
  }
  std::string dtype = conversionDType(fn);
  if (call.args.size() != 1 || !call.args[0].value || call.args[0].keyword) {
    report(DiagId::PythonConversion, call.callee->range, {fn, "convert a value with cast(x, " + dtype + ")"});
    for (const ast::Argument& a : call.args)
      if (a.value) eval(*a.value);
    return Val::error();
  }
  const ast::Expr& arg = *call.args[0].value;
  std::string rewrite = "cast(" + text(arg.range) + ", " + dtype + ")";
  Diagnostic* d = report(DiagId::PythonConversion, call.range, {fn, "convert with " + rewrite});
  addFixIt(d, call.range, rewrite, "replace with " + rewrite);
  Val x = eval(arg);
  if (x.kind != Val::Kind::Value) return Val::error();
  ir::DType to = *ir::dtypeFromName(dtype);
  ir::Type result = fn_->values[x.id].type;
  if (result.dtype == to) return x;
  result.dtype = to;
  ir::Attrs attrs;
  ir::CastAttrs(attrs).to(to);
  return Val::value(b().make(ir::OpKind::Cast, {x.id}, result, call.range, attrs));
}

std::optional<Val> Analyzer::tritonTileMethod(const ast::CallExpr& call, const ast::AttributeExpr& callee,
                                              const Val& base) {
  if (!isValueLike(base)) return std::nullopt;
  std::string self = text(callee.base->range);
  if (callee.name == "to") {
    std::string dtype = call.args.empty() || !call.args[0].value ? "f32" : text(call.args[0].value->range);
    std::string rewrite = "cast(" + self + ", " + dtype + ")";
    Diagnostic* d = report(DiagId::UnknownAttribute, callee.nameRange,
                           {describe(base), callee.name, "; convert it with " + rewrite});
    addFixIt(d, call.range, rewrite, "replace with " + rewrite);
    Val dt = call.args.size() == 1 && call.args[0].value ? eval(*call.args[0].value) : Val::error();
    if (base.kind != Val::Kind::Value || dt.kind != Val::Kind::DType) return Val::error();
    ir::Type result = fn_->values[base.id].type;
    if (result.dtype == dt.dtype) return base;
    result.dtype = dt.dtype;
    ir::Attrs attrs;
    ir::CastAttrs(attrs).to(dt.dtype);
    return Val::value(b().make(ir::OpKind::Cast, {base.id}, result, call.range, attrs));
  }
  // x.sum(axis=1), x.reshape(...): Triton's methods are Argus's builtins.
  const BuiltinInfo* info = findBuiltin(callee.name);
  if (!info || info->params.empty() || std::string_view(info->params[0]) != "x") return std::nullopt;
  std::string rest;
  for (const ast::Argument& a : call.args) rest += ", " + text(a.range);
  std::string rewrite = callee.name + "(" + self + rest + ")";
  Diagnostic* d = report(DiagId::UnknownAttribute, callee.nameRange,
                         {describe(base), callee.name, "; call the builtin: " + rewrite});
  addFixIt(d, call.range, rewrite, "replace with " + rewrite);
  for (const ast::Argument& a : call.args)
    if (a.value) eval(*a.value);
  return Val::error();
}

bool Analyzer::tritonMaskArgument(const std::string& fname, const ast::CallExpr& call, const ast::Argument& a) {
  if (!a.keyword || *a.keyword != "mask" || (fname != "load" && fname != "store")) return false;
  std::string why = fname == "load"
                        ? "; a view that reaches past the tensor's edge reads 'other' there, so bounds need no mask "
                          "(for another condition, use where(cond, x, other) on the loaded tile)"
                        : "; elements of a view past the tensor's edge are skipped, so bounds need no mask "
                          "(for another condition, load the old values and store where(cond, new, old))";
  Diagnostic* d = report(DiagId::UnknownKeyword, a.keywordRange, {fname, "mask", why});
  // Remove ", mask=..." with the comma before it (or after it, when it comes first).
  SourceRange cut = a.range;
  for (size_t k = 0; k < call.args.size(); ++k)
    if (&call.args[k] == &a) {
      if (k > 0) cut.begin = call.args[k - 1].range.end;
      else if (k + 1 < call.args.size()) cut.end = call.args[k + 1].range.begin;
    }
  addFixIt(d, cut, "", "remove the mask");
  return true;
}

std::optional<Val> Analyzer::tritonZerosOrder(const ast::CallExpr& call) {
  // Triton's zeros(shape, dtype=f32) (or zeros(shape, f32)): the shape comes first.
  const ast::Argument* shape = nullptr;
  const ast::Argument* dtype = nullptr;
  const ast::Argument* layout = nullptr;
  std::vector<const ast::Argument*> positional;
  bool dtypeKeyword = false;
  for (const ast::Argument& a : call.args) {
    if (!a.value) return std::nullopt;
    if (!a.keyword) positional.push_back(&a);
    else if (*a.keyword == "layout") layout = &a;
    else if (*a.keyword == "dtype") dtype = &a, dtypeKeyword = true;
    else return std::nullopt;
  }
  if (positional.empty() || positional.size() > 2 || (dtypeKeyword && positional.size() != 1)) return std::nullopt;
  shape = positional[0];
  if (!dtypeKeyword) {
    // zeros((BN,), f32): only a literal shape tells the two orders apart.
    bool literalShape = shape->value->kind == ast::ExprKind::Tuple || shape->value->kind == ast::ExprKind::List;
    if (positional.size() != 2 || !literalShape) return std::nullopt;
    dtype = positional[1];
  }
  std::string rewrite = "zeros(" + text(dtype->value->range) + ", " + text(shape->value->range) +
                        (layout ? ", " + text(layout->range) : "") + ")";
  Diagnostic* d = report(DiagId::ZerosArgumentOrder, call.range, {rewrite});
  addFixIt(d, call.range, rewrite, "replace with " + rewrite);
  std::vector<const ast::Argument*> slots{dtype, shape, layout};
  return builtinCreation(Builtin::Zeros, call, slots);
}

}  // namespace argus::sema::detail
