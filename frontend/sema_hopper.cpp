// The Hopper (sm_90a) surface of the language:
//   copy_bulk(dst, src)              a TMA copy (cp.async.bulk.tensor) of a global view into a
//                                    whole shared buffer; only as a leading copy of a pipelined
//                                    loop, whose policy gives it mbarriers (ir/pipeline.h)
//   layout=wgmma(warpgroups=W)       the accumulator of wgmma.mma_async m64nNk16
#include <algorithm>

#include "frontend/sema_internal.h"
#include "ir/bulk.h"
#include "ir/ops.h"

namespace argus::sema::detail {

Val Analyzer::builtinCopyBulk(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  std::optional<std::pair<Val, Val>> views = globalToSharedViews("copy_bulk", a);
  if (!views) return Val::error();
  const auto& [dst, src] = *views;
  const ir::Type dt = fn_->values[dst.id].type, st = fn_->values[src.id].type;
  const int64_t bytes = std::max(1, ir::dtypeBits(st.dtype) / 8);
  const int64_t rowBytes = (st.shape.empty() ? 1 : st.shape.back()) * bytes;
  const ir::Swizzle& sw = dt.swizzle;
  const int swizzleBytes = ir::tmaSwizzleBytes(sw, dt.dtype);
  std::string problem;
  if (st.shape.empty() || st.shape.size() > 5)
    problem = "TMA copies views of rank 1 to 5, but this one has rank " + std::to_string(st.shape.size());
  else if (std::any_of(st.shape.begin(), st.shape.end(), [](int64_t e) { return e > 256; }))
    problem = "TMA boxes are at most 256 elements along each axis, but the view is " + shapeText(st.shape);
  else if (rowBytes % 16 != 0)
    problem = "a row of the view is " + std::to_string(rowBytes) + " bytes, and TMA moves rows of a multiple of 16 bytes";
  else if (swizzleBytes < 0)
    problem = "the destination's swizzle=(" + std::to_string(sw.bits) + ", " + std::to_string(sw.base) + ", " +
              std::to_string(sw.shift) + ") is not one of TMA's patterns; for " + ir::dtypeName(dt.dtype) +
              " they are (B, " + std::to_string(ir::tmaSwizzleBase(dt.dtype)) +
              ", 3) with B = 1, 2, 3 (32-, 64- and 128-byte rows)";
  else if (swizzleBytes > 0 && rowBytes != swizzleBytes && !panelsFit(dst, swizzleBytes, rowBytes))
    problem = "a row of the view is " + std::to_string(rowBytes) + " bytes, but the destination's swizzle is TMA's " +
              std::to_string(swizzleBytes) + "-byte pattern, which needs rows of exactly " + std::to_string(swizzleBytes) +
              " bytes, or of a multiple of it in a whole buffer (or stage) of a multiple of 8 rows (stored in panels "
              "one span wide)";
  if (!problem.empty()) {
    report(DiagId::CopyBulkShape, a[1]->value->range, {problem});
    return Val::error();
  }
  if (pipelinedDepth_ == 0) {
    report(DiagId::CopyBulkOutsidePipeline, call.range, {});
    return Val::error();
  }
  if (!requireTmaRows(src, *a[1]->value)) return Val::error();
  ir::Attrs attrs;
  bool multicasts = false;
  if (a.size() > 2 && a[2]) {
    std::optional<bool> multicast = multicastArg(*a[2]->value, st);
    if (!multicast) return Val::error();
    multicasts = *multicast;
    ir::CopyBulkAttrs(attrs).multicast(multicasts);
  }
  if (swizzleBytes > 0 && rowBytes != swizzleBytes) {
    if (multicasts) {
      report(DiagId::CopyBulkShape, a[1]->value->range,
             {"a multicast copy needs rows of exactly one swizzle span (" + std::to_string(swizzleBytes) +
              " bytes), but a row of the view is " + std::to_string(rowBytes) + " bytes"});
      return Val::error();
    }
    storeInPanels(dst, swizzleBytes / static_cast<int>(bytes));
  }
  b().create(ir::OpKind::CopyBulk, {dst.id, src.id}, {}, call.range, attrs);
  return Val::none();
}

// TMA addresses the whole tensor a copy reads through its row stride, which must be a
// multiple of 16 bytes. A constant row that is not is an error here; a row that is a
// runtime size becomes a launch-time requirement of the kernel, so that the GPU
// launcher and the CPU interpreter refuse the same launches with the same message (and
// the agent's validation shapes honour it) instead of the interpreter running a launch
// the GPU refuses.
bool Analyzer::requireTmaRows(const Val& src, const ast::Expr& where) {
  const ir::Op* view = fn_->values[src.id].def;
  const ir::ValueId root = view && view->kind == ir::OpKind::View ? ir::ViewOp(*view).base() : src.id;
  const ir::Param* tensor = nullptr;
  for (const ir::Param& p : fn_->params)
    if (p.kind == ir::ParamKind::Tensor && p.value == root) tensor = &p;
  if (!tensor || tensor->dims.size() < 2) return true;  // a row stride exists from rank 2 on
  const int64_t bytes = std::max(1, ir::dtypeBits(tensor->dtype) / 8);
  if (bytes >= 16) return true;
  const int64_t multiple = 16 / bytes;
  const ir::DimRef& row = tensor->dims.back();
  if (row.constant >= 0) {
    if (row.constant % multiple == 0) return true;
    report(DiagId::CopyBulkShape, where.range,
           {"a row of tensor '" + tensor->name + "' is " + std::to_string(row.constant * bytes) +
            " bytes, and TMA needs the rows of the tensors it copies to be a multiple of 16 bytes"});
    return false;
  }
  const std::string& size = fn_->sizeNames[static_cast<size_t>(row.sizeIndex)];
  std::string text = size + " % " + std::to_string(multiple) + " == 0 (copy_bulk reads " + tensor->name +
                     " with TMA, which needs rows of a multiple of 16 bytes)";
  for (const ir::Requirement& r : fn_->requirements)
    if (r.text == text) return true;
  using K = ir::LaunchExpr::Kind;
  ir::LaunchExpr sizeExpr{K::Size, row.sizeIndex, {}};
  ir::LaunchExpr mod{K::Mod, 0, {sizeExpr, ir::LaunchExpr{K::Const, multiple, {}}}};
  fn_->requirements.push_back({ir::LaunchExpr{K::Eq, 0, {mod, ir::LaunchExpr{K::Const, 0, {}}}}, text, where.range,
                               /*implied=*/true});
  return true;
}

// The shared buffer a copy_bulk destination views (its View op's base).
static ir::ValueId bufferOfView(const ir::Function& fn, ir::ValueId view) {
  const ir::Op* def = fn.values[view].def;
  return def && def->kind == ir::OpKind::View ? ir::ViewOp(*def).base() : view;
}

// A TMA destination whose rows are several swizzle spans: TMA writes boxes one span wide,
// so the buffer is stored in column panels (ir::Swizzle); the view must be a whole
// buffer or stage (its last two axes the buffer's) of whole 8-row swizzle atoms.
bool Analyzer::panelsFit(const Val& dst, int swizzleBytes, int64_t rowBytes) const {
  const ir::Type& view = fn_->values[dst.id].type;
  const ir::Type& buffer = fn_->values[bufferOfView(*fn_, dst.id)].type;
  const size_t rank = buffer.shape.size();
  if (rowBytes % swizzleBytes != 0 || view.shape.size() < 2 || rank < 2 ||
      buffer.kind != ir::TypeKind::Shared)
    return false;
  if (view.shape[view.shape.size() - 1] != buffer.shape[rank - 1] || view.shape[view.shape.size() - 2] != buffer.shape[rank - 2])
    return false;
  return buffer.shape[rank - 2] % 8 == 0 && (!buffer.swizzle.hasPanels() || buffer.swizzle.panelCols * ir::dtypeBits(buffer.dtype) / 8 == swizzleBytes);
}

// Gives the buffer under `dst` and every view of it panels `panelCols` wide.
void Analyzer::storeInPanels(const Val& dst, int64_t panelCols) {
  const ir::ValueId buffer = bufferOfView(*fn_, dst.id);
  ir::Swizzle swizzle = fn_->values[buffer].type.swizzle;
  const std::vector<int64_t>& shape = fn_->values[buffer].type.shape;
  swizzle.panelCols = panelCols;
  swizzle.rows = shape[shape.size() - 2];
  swizzle.cols = shape.back();
  fn_->values[buffer].type.swizzle = swizzle;
  for (ir::Value& v : fn_->values)
    if (v.def && v.def->kind == ir::OpKind::View && ir::ViewOp(*v.def).base() == buffer)
      v.type.swizzle = swizzle;
}

// multicast=True/False of copy_bulk. A multicast copy needs a kernel of clusters and a
// warp-specialized loop (whose free-stage barriers codegen extends to the cluster), and a
// tile that splits into one slice of whole 1024-byte swizzle atoms per block along its
// leading axis. Whether the blocks of a cluster copy the same tile: ir/cluster.h.
std::optional<bool> Analyzer::multicastArg(const ast::Expr& e, const ir::Type& view) {
  Val flag = eval(e);
  if (flag.isError()) return std::nullopt;
  if (flag.kind != Val::Kind::Const || flag.c.kind != Constant::Kind::Bool) {
    report(DiagId::BadArgument, e.range, {"multicast", "copy_bulk", "True or False", describe(flag)});
    return std::nullopt;
  }
  if (flag.c.i == 0) return false;
  const int64_t c = fn_->clusterSize;
  if (c < 2) {
    report(DiagId::BadMulticast, e.range,
           {"shares a tile among the blocks of a cluster, but this kernel has no clusters; add cluster=2 (or 4, 8) to "
            "@kernel(...)"});
    return std::nullopt;
  }
  if (!inSpecializedPipeline_) {
    report(DiagId::BadMulticast, e.range,
           {"needs the loop's producer warpgroup, which waits until every block of the cluster has freed a stage "
            "before refilling it; write pipelined(..., specialize=True)"});
    return std::nullopt;
  }
  int64_t sliceBytes = std::max(1, ir::dtypeBits(view.dtype) / 8);
  for (size_t d = 1; d < view.shape.size(); ++d) sliceBytes *= view.shape[d];
  const int64_t rows = view.shape.empty() ? 1 : view.shape[0];
  if (rows % c != 0 || (rows / c) * sliceBytes % 1024 != 0) {
    report(DiagId::BadMulticast, e.range,
           {"splits the tile along its first axis into one slice per block of the cluster (" + std::to_string(c) +
            "), each a whole number of 1024-byte swizzle atoms; the view " + shapeText(view.shape) +
            " does not split that way (its first extent must be a multiple of " + std::to_string(c) +
            ", and each slice a multiple of 1024 bytes)"});
    return std::nullopt;
  }
  return true;
}

// wgmma(warpgroups=W): the tile is (64 * W, N), N a multiple of 8 up to 256, and
// the kernel has exactly 4 * W warps.
std::optional<ir::Layout> Analyzer::wgmmaLayoutArg(const ast::CallExpr& call, const std::vector<int64_t>& shape) {
  const ast::Expr* groupsExpr = nullptr;
  for (const ast::Argument& a : call.args) {
    if (!a.value) return std::nullopt;
    if (a.keyword && *a.keyword == "warpgroups" && !groupsExpr) {
      groupsExpr = a.value.get();
    } else {
      report(DiagId::BadLayoutArgument, a.range, {"wgmma(warpgroups=W), with only that keyword argument"});
      return std::nullopt;
    }
  }
  if (!groupsExpr) {
    report(DiagId::BadLayoutArgument, call.range, {"wgmma(warpgroups=W): W compile-time warpgroups of 4 warps"});
    return std::nullopt;
  }
  std::optional<int64_t> groups = constIntArg(*groupsExpr, "wgmma", "warpgroups");
  if (!groups) return std::nullopt;
  if (*groups < 1 || 4 * *groups != fn_->numWarps) {
    report(DiagId::WgmmaWarps, groupsExpr->range,
           {std::to_string(*groups), std::to_string(4 * *groups), std::to_string(fn_->numWarps)});
    return std::nullopt;
  }
  if (shape.size() != 2 || shape[0] != 64 * *groups || shape[1] % 8 != 0 || shape[1] > 256) {
    report(DiagId::WgmmaLayout, call.range, {shapeText(shape), std::to_string(*groups), std::to_string(64 * *groups)});
    return std::nullopt;
  }
  return ir::Layout::wgmmaAccumulator(shape[0], shape[1], *groups);
}

}  // namespace argus::sema::detail
