// Tensor-core layouts in the language: `zeros(f32, (BM, BN), layout=mma(warps=(WM, WN)))`
// gives an accumulator in the register layout of mma.sync m16n8k16 (ir/types.h,
// LayoutKind::Mma), so that dot() on 16-bit shared operands runs on tensor cores.
#include "frontend/sema_internal.h"

namespace argus::sema::detail {

std::optional<ir::Layout> Analyzer::mmaLayoutArg(const ast::Expr& e, const std::vector<int64_t>& shape) {
  const auto* call = e.kind == ast::ExprKind::Call ? static_cast<const ast::CallExpr*>(&e) : nullptr;
  const auto* callee = call && call->callee && call->callee->kind == ast::ExprKind::Name
                           ? static_cast<const ast::NameExpr*>(call->callee.get())
                           : nullptr;
  if (callee && callee->name == "wgmma") return wgmmaLayoutArg(*call, shape);
  if (!callee || callee->name != "mma") {
    report(DiagId::BadLayoutArgument, e.range, {"a layout written mma(warps=(WM, WN)) or wgmma(warpgroups=W)"});
    return std::nullopt;
  }
  const ast::Expr* warpsExpr = nullptr;
  for (const ast::Argument& a : call->args) {
    if (!a.value) return std::nullopt;
    if (a.keyword && *a.keyword == "warps" && !warpsExpr) {
      warpsExpr = a.value.get();
    } else {
      report(DiagId::BadLayoutArgument, a.range, {"only the keyword argument warps=(WM, WN)"});
      return std::nullopt;
    }
  }
  if (!warpsExpr || warpsExpr->kind != ast::ExprKind::Tuple ||
      static_cast<const ast::TupleExpr*>(warpsExpr)->elements.size() != 2) {
    report(DiagId::BadLayoutArgument, warpsExpr ? warpsExpr->range : call->range,
           {"warps=(WM, WN): two compile-time integers whose product is the kernel's warps"});
    return std::nullopt;
  }
  const auto& elements = static_cast<const ast::TupleExpr*>(warpsExpr)->elements;
  std::optional<int64_t> wm = constIntArg(*elements[0], "mma", "warps");
  std::optional<int64_t> wn = constIntArg(*elements[1], "mma", "warps");
  if (!wm || !wn) return std::nullopt;
  if (*wm < 1 || *wn < 1 || *wm * *wn != fn_->numWarps) {
    report(DiagId::MmaWarpGrid, warpsExpr->range,
           {std::to_string(*wm), std::to_string(*wn), std::to_string(fn_->numWarps)});
    return std::nullopt;
  }
  if (shape.size() != 2 || shape[0] % (16 * *wm) != 0 || shape[1] % (8 * *wn) != 0) {
    report(DiagId::MmaTileShape, e.range,
           {shapeText(shape), std::to_string(16 * *wm), std::to_string(8 * *wn), std::to_string(*wm),
            std::to_string(*wn)});
    return std::nullopt;
  }
  return ir::Layout::mma(shape[0], shape[1], *wm, *wn);
}

}  // namespace argus::sema::detail
