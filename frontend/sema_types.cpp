// Types, dtypes and constants: descriptions for messages, literal adaptation,
// constant folding and compile-time shapes.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "frontend/sema_internal.h"

namespace argus::sema::detail {

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

Constant Constant::ofInt(int64_t v) {
  Constant c;
  c.kind = Kind::Int;
  c.i = v;
  c.dtype = v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max() ? ir::DType::I32
                                                                                                    : ir::DType::I64;
  return c;
}

Constant Constant::ofFloat(double v) {
  Constant c;
  c.kind = Kind::Float;
  c.f = v;
  c.dtype = ir::DType::F32;
  return c;
}

Constant Constant::ofBool(bool v) {
  Constant c;
  c.kind = Kind::Bool;
  c.i = v ? 1 : 0;
  c.dtype = ir::DType::Bool;
  return c;
}

std::string Constant::str() const {
  switch (kind) {
    case Kind::Int: return std::to_string(i);
    case Kind::Bool: return i ? "True" : "False";
    case Kind::Float: {
      if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
      if (std::isnan(f)) return "nan";
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.9g", f);
      std::string s = buf;
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return s;
    }
  }
  return "?";
}

namespace {
std::string withArticle(const std::string& s) {
  if (s.empty()) return s;
  char c = s[0];
  bool vowel = c == 'a' || c == 'e' || c == 'o' || c == 'i' || c == 'f';  // "an f32", "an i32"
  return (vowel ? "an " : "a ") + s;
}
}  // namespace

std::string Analyzer::describeType(const ir::Type& t, ir::ValueId id) const {
  std::string dt = ir::dtypeName(t.dtype);
  switch (t.kind) {
    case ir::TypeKind::Void: return "nothing";
    case ir::TypeKind::Scalar: return withArticle(dt + " scalar");
    case ir::TypeKind::Tile: return withArticle(dt + " tile " + shapeText(t.shape));
    case ir::TypeKind::Shared: return withArticle(dt + " shared buffer " + shapeText(t.shape));
    case ir::TypeKind::View:
      return withArticle(dt + " view " + shapeText(t.shape) +
                         (t.space == ir::MemSpace::Shared ? " of shared memory" : " of global memory"));
    case ir::TypeKind::Tensor: {
      std::string shape;
      auto it = tensorDims_.find(id);
      if (it != tensorDims_.end()) {
        shape = "(";
        for (size_t i = 0; i < it->second.size(); ++i) shape += (i ? ", " : "") + it->second[i];
        shape += it->second.size() == 1 ? ",)" : ")";
      } else {
        shape = shapeText(t.shape);
      }
      return withArticle(dt + " tensor " + shape);
    }
  }
  return "a value";
}

std::string Analyzer::describe(const Val& v) const {
  switch (v.kind) {
    case Val::Kind::Error: return "an invalid value";
    case Val::Kind::Value: return describeType(fn_->values[v.id].type, v.id);
    case Val::Kind::Const: {
      if (!v.c.weak) return "the " + std::string(ir::dtypeName(v.c.dtype)) + " constant " + v.c.str();
      const char* kind = v.c.kind == Constant::Kind::Int ? "integer" : v.c.kind == Constant::Kind::Float ? "float" : "bool";
      return "the " + std::string(kind) + " constant " + v.c.str();
    }
    case Val::Kind::DType: return "the dtype " + std::string(ir::dtypeName(v.dtype));
    case Val::Kind::Tuple: return "a tuple of " + std::to_string(v.elems.size()) + (v.elems.size() == 1 ? " value" : " values");
    case Val::Kind::String: return "a string";
    case Val::Kind::None: return "None";
    case Val::Kind::Tiling: return "a tiling " + shapeText(v.shape) + " (index it to pick a tile)";
    case Val::Kind::Device: return "the @device function '" + v.text + "'";
    case Val::Kind::Kernel: return "the kernel '" + v.text + "'";
    case Val::Kind::Builtin: return "the builtin '" + v.text + "'";
  }
  return "a value";
}

std::string Analyzer::symbolDescription(const Val& v) const {
  std::string s = describe(v);
  if (s.rfind("an ", 0) == 0) return s.substr(3);
  if (s.rfind("a ", 0) == 0) return s.substr(2);
  return s;
}

const ir::Type* Analyzer::typeOf(const Val& v) const {
  return v.kind == Val::Kind::Value ? &fn_->values[v.id].type : nullptr;
}

bool Analyzer::isValueLike(const Val& v) const {
  if (v.kind == Val::Kind::Const) return true;
  const ir::Type* t = typeOf(v);
  return t && (t->isScalar() || t->isTile());
}

std::optional<ir::DType> Analyzer::dtypeOf(const Val& v) const {
  if (v.kind == Val::Kind::Const) return v.c.dtype;
  if (const ir::Type* t = typeOf(v)) return t->dtype;
  return std::nullopt;
}

bool Analyzer::canAdapt(const Constant& c, ir::DType to) const {
  if (!c.weak) return c.dtype == to;
  switch (c.kind) {
    case Constant::Kind::Bool: return to == ir::DType::Bool;
    case Constant::Kind::Float: return ir::isFloat(to);
    case Constant::Kind::Int: {
      if (ir::isFloat(to)) return true;
      if (!ir::isInteger(to)) return false;
      int bits = ir::dtypeBits(to);
      if (ir::isSigned(to)) {
        if (bits >= 64) return true;
        int64_t lim = int64_t{1} << (bits - 1);
        return c.i >= -lim && c.i < lim;
      }
      if (c.i < 0) return false;
      return bits >= 64 || c.i < (int64_t{1} << bits);
    }
  }
  return false;
}

std::optional<Constant> Analyzer::convertConstant(const Constant& c, ir::DType to) const {
  if (!canAdapt(c, to)) return std::nullopt;
  Constant out = c;
  out.dtype = to;
  out.weak = false;
  if (ir::isFloat(to) && c.kind == Constant::Kind::Int) {
    out.kind = Constant::Kind::Float;
    out.f = static_cast<double>(c.i);
  }
  return out;
}

std::optional<ir::DType> Analyzer::annotationDType(const ast::Expr& e, bool reportErrors) {
  if (e.kind == ast::ExprKind::Name) {
    const std::string& name = static_cast<const ast::NameExpr&>(e).name;
    if (std::optional<ir::DType> dt = ir::dtypeFromName(name)) return dt;
    if (!reportErrors) return std::nullopt;
    std::vector<std::string> names;
    for (int t = 0; t <= static_cast<int>(ir::DType::F8E5M2); ++t) names.push_back(ir::dtypeName(static_cast<ir::DType>(t)));
    std::string hint = suggestion(name, names);
    Diagnostic* d = report(DiagId::UnknownDType, e.range, {name, hint.empty() ? "" : "; did you mean '" + hint + "'?"});
    if (!hint.empty()) addFixIt(d, e.range, hint, "replace with '" + hint + "'");
    return std::nullopt;
  }
  if (reportErrors) report(DiagId::UnknownDType, e.range, {text(e.range), ""});
  return std::nullopt;
}

bool Analyzer::checkTileExtent(int64_t extent, SourceRange range, bool registerTile, const char* what) {
  if (extent <= 0) {
    report(DiagId::NonPositiveExtent, range, {what, std::to_string(extent)});
    return false;
  }
  if (registerTile && !isPowerOfTwo(extent)) {
    // lower <= extent / 2, not lower * 2 <= extent: that overflows above 2^62.
    int64_t lower = 1;
    while (lower <= extent / 2) lower *= 2;
    // Above 2^62 the next power of two is 2^63, past int64: compute it unsigned
    // and never suggest it as a value.
    uint64_t upper = static_cast<uint64_t>(lower) * 2;
    bool upperFits = upper <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    // A const used as an extent in many places is one mistake: say it once, at
    // its first use, and point at every later use being the same problem.
    std::string written = text(range);
    bool isName = !written.empty() && (std::isalpha(static_cast<unsigned char>(written[0])) || written[0] == '_') &&
                  written.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
    if (isName && !reportedExtentNames_.insert(written).second) return false;
    Diagnostic* d = report(DiagId::NotPowerOfTwo, range, {what, std::to_string(extent), std::to_string(lower), std::to_string(upper)});
    if (d && isName)
      d->notes.push_back("'" + written + "' is " + std::to_string(extent) + "; change its value (or pass -D " + written + "=" +
                         (!upperFits || extent - lower < static_cast<int64_t>(upper) - extent ? std::to_string(lower)
                                                                                              : std::to_string(upper)) +
                         "); other uses of '" + written + "' as an extent are not reported again");
    return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> Analyzer::evalShape(const ast::Expr& e, bool registerTile, const char* what) {
  std::vector<std::pair<Val, SourceRange>> elems;
  if (e.kind == ast::ExprKind::Tuple || e.kind == ast::ExprKind::List) {
    const auto& xs = e.kind == ast::ExprKind::Tuple ? static_cast<const ast::TupleExpr&>(e).elements
                                                    : static_cast<const ast::ListExpr&>(e).elements;
    for (const ast::ExprPtr& x : xs)
      if (x) elems.push_back({eval(*x), x->range});
  } else {
    Val v = eval(e);
    if (v.isError()) return std::nullopt;
    if (v.kind == Val::Kind::Tuple) {
      for (const Val& x : v.elems) elems.push_back({x, e.range});
    } else if (v.kind == Val::Kind::Const && v.c.kind == Constant::Kind::Int) {
      elems.push_back({v, e.range});
    } else if (v.kind == Val::Kind::Value && typeOf(v)->isScalar() && ir::isInteger(typeOf(v)->dtype)) {
      report(DiagId::NotConstant, e.range, {std::string("a ") + what + " extent", quote(text(e.range))});
      return std::nullopt;
    } else {
      report(DiagId::BadShape, e.range, {std::string("a ") + what + " shape", describe(v)});
      return std::nullopt;
    }
  }
  if (elems.empty()) {
    report(DiagId::BadShape, e.range, {std::string("a ") + what + " shape", "empty"});
    return std::nullopt;
  }
  std::vector<int64_t> shape;
  bool ok = true;
  for (const auto& [v, range] : elems) {
    if (v.isError()) { ok = false; continue; }
    if (v.kind == Val::Kind::Const && v.c.kind == Constant::Kind::Int) {
      ok = checkTileExtent(v.c.i, range, registerTile, what) && ok;
      shape.push_back(v.c.i);
    } else if (v.kind == Val::Kind::Value && typeOf(v)->isScalar() && ir::isInteger(typeOf(v)->dtype)) {
      report(DiagId::NotConstant, range, {std::string("a ") + what + " extent", quote(text(range))});
      ok = false;
    } else {
      report(DiagId::BadShape, range, {std::string("a ") + what + " shape", quote(text(range)) + ", " + describe(v)});
      ok = false;
    }
  }
  if (ok && shape.size() > 8) {
    report(DiagId::BadShape, e.range, {std::string("a ") + what + " shape of at most 8 axes", "of rank " + std::to_string(shape.size())});
    ok = false;
  }
  // A tile or buffer lives in one block's registers or shared memory: far below
  // this bound. Checking here keeps every later product of extents from overflowing.
  constexpr int64_t kMaxElements = int64_t{1} << 20;
  if (ok) {
    int64_t elements = 1;
    bool tooLarge = false;
    for (int64_t extent : shape) {
      if (extent > kMaxElements || elements > kMaxElements / extent) { tooLarge = true; break; }
      elements *= extent;
    }
    if (tooLarge) {
      std::string dims;
      for (int64_t extent : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(extent);
      std::string count = "more than " + std::to_string(kMaxElements);
      report(DiagId::ShapeTooLarge, e.range, {std::string("the ") + what, "(" + dims + (shape.size() == 1 ? ",)" : ")"),
                                              count, std::to_string(kMaxElements)});
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return shape;
}

std::optional<int64_t> Analyzer::constIntArg(const ast::Expr& e, const char* fnName, const char* param) {
  Val v = eval(e);
  if (v.isError()) return std::nullopt;
  if (v.kind == Val::Kind::Const && v.c.kind == Constant::Kind::Int) return v.c.i;
  if (v.kind == Val::Kind::Value && typeOf(v)->isScalar() && ir::isInteger(typeOf(v)->dtype)) {
    report(DiagId::NotConstant, e.range,
           {"argument '" + std::string(param) + "' of " + fnName + "()", quote(text(e.range))});
    return std::nullopt;
  }
  report(DiagId::BadArgument, e.range, {param, fnName, "an integer constant", describe(v)});
  return std::nullopt;
}

Constant Analyzer::wrapConstant(Constant c) const {
  if (c.kind != Constant::Kind::Int) return c;
  if (c.weak) return Constant::ofInt(c.i);
  int bits = ir::dtypeBits(c.dtype);
  if (bits >= 64 || bits <= 0) return c;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(c.i) & mask;
  if (ir::isSigned(c.dtype) && (u >> (bits - 1)) & 1) u |= ~mask;
  c.i = static_cast<int64_t>(u);
  return c;
}

std::optional<Constant> Analyzer::foldBinary(ast::BinaryOp op, const Constant& a, const Constant& b,
                                             ir::DType dtype, bool weak, SourceRange range) {
  using Op = ast::BinaryOp;
  auto boolResult = [](bool v) { return Constant::ofBool(v); };
  bool isCompare = op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge;
  Constant out;
  out.dtype = dtype;
  out.weak = weak;
  if (a.kind == Constant::Kind::Float || b.kind == Constant::Kind::Float || ir::isFloat(dtype)) {
    double x = a.asDouble(), y = b.asDouble(), r = 0;
    switch (op) {
      case Op::Add: r = x + y; break;
      case Op::Sub: r = x - y; break;
      case Op::Mul: r = x * y; break;
      case Op::Div: r = x / y; break;
      case Op::FloorDiv: r = std::floor(x / y); break;
      case Op::Mod: r = std::fmod(x, y); break;
      case Op::Pow: r = std::pow(x, y); break;
      case Op::Eq: return boolResult(x == y);
      case Op::Ne: return boolResult(x != y);
      case Op::Lt: return boolResult(x < y);
      case Op::Le: return boolResult(x <= y);
      case Op::Gt: return boolResult(x > y);
      case Op::Ge: return boolResult(x >= y);
      default: return std::nullopt;
    }
    if (dtype == ir::DType::F32) r = static_cast<double>(static_cast<float>(r));
    out.kind = Constant::Kind::Float;
    out.f = r;
    if (weak) out.dtype = ir::DType::F32;
    return out;
  }
  int64_t x = a.i, y = b.i;
  auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
  if (isCompare) {
    bool uns = !weak && !ir::isSigned(dtype) && dtype != ir::DType::Bool;
    uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
    switch (op) {
      case Op::Eq: return boolResult(x == y);
      case Op::Ne: return boolResult(x != y);
      case Op::Lt: return boolResult(uns ? ux < uy : x < y);
      case Op::Le: return boolResult(uns ? ux <= uy : x <= y);
      case Op::Gt: return boolResult(uns ? ux > uy : x > y);
      case Op::Ge: return boolResult(uns ? ux >= uy : x >= y);
      default: break;
    }
  }
  if (a.kind == Constant::Kind::Bool) {
    switch (op) {
      case Op::And: case Op::BitAnd: return boolResult(x && y);
      case Op::Or: case Op::BitOr: return boolResult(x || y);
      case Op::BitXor: return boolResult((x != 0) != (y != 0));
      default: return std::nullopt;
    }
  }
  int64_t r = 0;
  switch (op) {
    case Op::Add: r = wrap(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); break;
    case Op::Sub: r = wrap(static_cast<uint64_t>(x) - static_cast<uint64_t>(y)); break;
    case Op::Mul: r = wrap(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)); break;
    case Op::FloorDiv:
    case Op::Mod:
      if (y == 0) {
        report(DiagId::ConstDivByZero, range);
        return std::nullopt;
      }
      if (x == std::numeric_limits<int64_t>::min() && y == -1) r = op == Op::Mod ? 0 : x;
      else r = op == Op::Mod ? x % y : x / y;
      break;
    case Op::Pow: {
      if (y < 0) return std::nullopt;
      uint64_t acc = 1, base = static_cast<uint64_t>(x);
      for (int64_t k = 0; k < y && k < 128; ++k) acc *= base;
      r = wrap(acc);
      break;
    }
    case Op::BitAnd: r = x & y; break;
    case Op::BitOr: r = x | y; break;
    case Op::BitXor: r = x ^ y; break;
    case Op::Shl: r = (y < 0 || y >= 64) ? 0 : wrap(static_cast<uint64_t>(x) << y); break;
    case Op::Shr: r = (y < 0 || y >= 64) ? (x < 0 ? -1 : 0) : x >> y; break;
    default: return std::nullopt;
  }
  out.kind = Constant::Kind::Int;
  out.i = r;
  return wrapConstant(out);
}

}  // namespace argus::sema::detail
