// New axes and reshapes of register tiles: expand_dims(x, axis), x[None, :],
// x[:, None] and reshape(x, shape). All are the IR's Reshape (row-major order kept).
#include "frontend/sema_internal.h"

namespace argus::sema::detail {

Val Analyzer::reshapeTile(const Val& x, const std::vector<int64_t>& shape, SourceRange range) {
  const ir::Type& t = fn_->values[x.id].type;
  if (t.shape == shape) return x;
  return Val::value(b().make(ir::OpKind::Reshape, {x.id}, ir::Type::tile(t.dtype, ir::Layout::canonical(shape)), range));
}

Val Analyzer::builtinReshape(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  const char* name = id == Builtin::ExpandDims ? "expand_dims" : "reshape";
  Val x = eval(*a[0]->value);
  if (x.isError()) return Val::error();
  const ir::Type* t = typeOf(x);
  if (!t || !t->isTile()) {
    report(DiagId::BadArgument, a[0]->value->range, {"x", name, "a register tile", describe(x)});
    return Val::error();
  }
  const ir::Type tile = *t;
  if (id == Builtin::ExpandDims) {
    std::optional<int64_t> axis = constIntArg(*a[1]->value, name, "axis");
    if (!axis) return Val::error();
    int64_t rank = static_cast<int64_t>(tile.shape.size());
    if (*axis < -(rank + 1) || *axis > rank) {
      report(DiagId::AxisOutOfRange, a[1]->value->range,
             {std::to_string(*axis), describe(x) + " (a new axis goes at 0 to " + std::to_string(rank) + ")"});
      return Val::error();
    }
    int64_t at = *axis < 0 ? *axis + rank + 1 : *axis;
    std::vector<int64_t> shape = tile.shape;
    shape.insert(shape.begin() + at, 1);
    return reshapeTile(x, shape, call.range);
  }
  std::optional<std::vector<int64_t>> shape = evalShape(*a[1]->value, true, "tile");
  if (!shape) return Val::error();
  int64_t count = 1;
  for (int64_t e : *shape) count *= e;
  if (count != tile.numElements()) {
    report(DiagId::BadArgument, a[1]->value->range,
           {"shape", name, "a shape of " + std::to_string(tile.numElements()) + " elements, as " + shapeText(tile.shape) + " has",
            shapeText(*shape) + " (" + std::to_string(count) + " elements)"});
    return Val::error();
  }
  return reshapeTile(x, *shape, call.range);
}

// `x[:, None]`: one ':' per axis of x, and None where a new axis of extent 1 goes.
Val Analyzer::subscriptTile(const ast::SubscriptExpr& e, const Val& base) {
  const ir::Type tile = *typeOf(base);
  size_t colons = 0;
  for (const ast::ExprPtr& i : e.indices) {
    if (!i) return Val::error();
    bool colon = i->kind == ast::ExprKind::Slice && !static_cast<const ast::SliceExpr&>(*i).lower &&
                 !static_cast<const ast::SliceExpr&>(*i).upper && !static_cast<const ast::SliceExpr&>(*i).step;
    if (colon) {
      ++colons;
    } else if (i->kind == ast::ExprKind::Slice) {
      report(DiagId::NewAxisIndex, i->range, {text(i->range)});
      return Val::error();
    } else if (i->kind != ast::ExprKind::None) {
      report(DiagId::TileSubscript, e.range, {describe(base)});
      return Val::error();
    }
  }
  if (colons != tile.shape.size()) {
    std::string subscript = text(SourceRange{e.base->range.end, e.range.end});
    if (colons < tile.shape.size() && tile.layout.reducedMask != 0) {
      Diagnostic* d = report(DiagId::NewAxisOnKeptAxis, e.range,
                             {text(e.base->range), shapeText(tile.shape), "a reduction along an axis", subscript});
      addFixIt(d, e.range, text(e.base->range), "drop " + subscript);
      return base;  // what the author meant
    }
    report(DiagId::NewAxisCount, e.range,
           {text(e.base->range), std::to_string(tile.shape.size()), subscript, std::to_string(colons)});
    return Val::error();
  }
  std::vector<int64_t> shape;
  size_t axis = 0;
  for (const ast::ExprPtr& i : e.indices) shape.push_back(i->kind == ast::ExprKind::None ? 1 : tile.shape[axis++]);
  return reshapeTile(base, shape, e.range);
}

}  // namespace argus::sema::detail
