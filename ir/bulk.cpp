// Tensor maps of a kernel (see bulk.h).
#include "ir/bulk.h"

#include <functional>

#include "ir/ops.h"

namespace argus::ir {

int tmaSwizzleBase(DType dtype) {
  int bytes = dtypeBits(dtype) / 8;
  return bytes == 1 ? 4 : bytes == 2 ? 3 : bytes == 4 ? 2 : bytes == 8 ? 1 : -1;
}

int tmaSwizzleBytes(const Swizzle& swizzle, DType dtype) {
  if (swizzle.isIdentity()) return 0;
  int base = tmaSwizzleBase(dtype);
  if (base < 0 || swizzle.base != base || swizzle.shift != 3 || swizzle.bits < 1 || swizzle.bits > 3) return -1;
  return 16 << swizzle.bits;
}

namespace {
// The tensor parameter `viewValue` is a view of, or params.size().
size_t viewedTensorParam(const Function& fn, ValueId viewValue) {
  const Op* view = fn.values[viewValue].def;
  if (!view || view->kind != OpKind::View || view->operands.empty()) return fn.params.size();
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].kind == ParamKind::Tensor && fn.params[i].value == ViewOp(*view).base()) return i;
  return fn.params.size();
}
}  // namespace

bool storesThroughSlices(const Function& fn, const Op& store) {
  if (store.kind != OpKind::Store || store.operands.size() < 2) return false;
  const StoreOp storeOp(store);
  const Type& tile = fn.typeOf(storeOp.value());
  const Type& view = fn.typeOf(storeOp.view());
  const Op* viewOp = fn.value(storeOp.view()).def;
  if (!tile.isTile() || !tile.layout.isMma() || tile.layout.reducedMask != 0 || tile.shape.size() != 2) return false;
  if (tile.dtype != DType::BF16 && tile.dtype != DType::F16) return false;
  if (view.kind != TypeKind::View || view.space != MemSpace::Global) return false;
  // The tile spans the tensor's last two axes; leading axes (an attention output's batch
  // and head) are one element each. TMA addresses at most five axes.
  if (!viewOp || viewOp->kind != OpKind::View || viewOp->operands.empty()) return false;
  const size_t rank = fn.typeOf(ViewOp(*viewOp).base()).shape.size();
  if (rank < 2 || rank > 5) return false;
  const Layout& layout = tile.layout;
  // Every warp holds a part of its own (no replicated values), in whole slices.
  if (layout.warpsM * layout.warpsN != fn.numWarps) return false;
  const int64_t rowsPerWarp = layout.parent[0] / layout.warpsM, colsPerWarp = layout.parent[1] / layout.warpsN;
  return rowsPerWarp % kStoreSliceRows == 0 && colsPerWarp % kStoreSliceCols == 0;
}

bool tensorOnlyStoredTo(const Function& fn, size_t param) {
  if (param >= fn.params.size() || fn.params[param].kind != ParamKind::Tensor) return false;
  const ValueId tensor = fn.params[param].value;
  bool onlyStored = true;
  std::function<void(const Block&)> walk = [&](const Block& block) {
    for (const auto& op : block.ops) {
      for (size_t i = 0; i < op->operands.size(); ++i) {
        const ValueId operand = op->operands[i];
        if (operand == tensor && op->kind != OpKind::View) onlyStored = false;
        const Op* def = operand < fn.values.size() ? fn.values[operand].def : nullptr;
        const bool viewOfTensor =
            def && def->kind == OpKind::View && !def->operands.empty() && ViewOp(*def).base() == tensor;
        if (viewOfTensor && !(op->kind == OpKind::Store && i == 0)) onlyStored = false;
      }
      for (const Block& region : op->regions) walk(region);
    }
  };
  walk(fn.body);
  return onlyStored;
}

TensorMapUse storeTensorMapUse(const Function& fn, const Op& store) {
  TensorMapUse use;
  use.param = store.operands.empty() ? fn.params.size() : viewedTensorParam(fn, StoreOp(store).view());
  const size_t rank = use.param < fn.params.size() ? fn.params[use.param].dims.size() : 2;
  use.box.assign(rank < 2 ? 2 : rank, 1);
  use.box[use.box.size() - 2] = kStoreSliceRows;
  use.box[use.box.size() - 1] = kStoreSliceCols;
  use.swizzleBytes = 128;
  use.store = true;
  return use;
}

TensorMapUse tensorMapUseOf(const Function& fn, const Op& copy) {
  TensorMapUse use;
  use.param = fn.params.size();
  if (copy.operands.size() < 2) return use;
  const CopyBulkOp bulk(copy);
  use.param = viewedTensorParam(fn, bulk.src());
  if (use.param == fn.params.size()) return use;
  const Type& viewType = fn.typeOf(bulk.src());
  const size_t rank = fn.params[use.param].dims.size();
  use.box.assign(rank, 1);
  for (size_t d = 0; d < viewType.shape.size() && d < rank; ++d)
    use.box[rank - viewType.shape.size() + d] = viewType.shape[d];
  // A multicast copy: each block of the cluster copies its slice of the leading axis.
  if (bulk.multicast() && fn.clusterSize > 1 && !viewType.shape.empty() && viewType.shape.size() <= rank)
    use.box[rank - viewType.shape.size()] /= fn.clusterSize;
  const Type& dst = fn.typeOf(bulk.dst());
  use.swizzleBytes = tmaSwizzleBytes(dst.swizzle, dst.dtype);
  // A destination in column panels takes one box per panel, a span of columns wide.
  if (dst.swizzle.hasPanels() && rank > 0) use.box[rank - 1] = dst.swizzle.panelCols;
  return use;
}

std::vector<TensorMapUse> tensorMapsOf(const Function& fn) {
  std::vector<TensorMapUse> maps;
  std::function<void(const Block&)> walk = [&](const Block& block) {
    for (const auto& op : block.ops) {
      if (op->kind == OpKind::CopyBulk) {
        TensorMapUse use = tensorMapUseOf(fn, *op);
        if (use.param < fn.params.size() && tensorMapIndex(fn, maps, *op) < 0) maps.push_back(std::move(use));
      }
      for (const Block& region : op->regions) walk(region);
    }
  };
  walk(fn.body);
  return maps;
}

int tensorMapIndex(const Function& fn, const std::vector<TensorMapUse>& maps, const Op& copy) {
  TensorMapUse use = copy.kind == OpKind::Store ? storeTensorMapUse(fn, copy) : tensorMapUseOf(fn, copy);
  for (size_t i = 0; i < maps.size(); ++i)
    if (maps[i] == use) return static_cast<int>(i);
  return -1;
}

}  // namespace argus::ir
