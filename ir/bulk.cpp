// Tensor maps of a kernel (see bulk.h).
#include "ir/bulk.h"

#include <functional>

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

TensorMapUse tensorMapUseOf(const Function& fn, const Op& copy) {
  TensorMapUse use;
  use.param = fn.params.size();
  if (copy.operands.size() < 2) return use;
  const Op* view = fn.values[copy.operands[1]].def;
  if (!view || view->kind != OpKind::View || view->operands.empty()) return use;
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].kind == ParamKind::Tensor && fn.params[i].value == view->operands[0]) use.param = i;
  if (use.param == fn.params.size()) return use;
  const Type& viewType = fn.typeOf(copy.operands[1]);
  const size_t rank = fn.params[use.param].dims.size();
  use.box.assign(rank, 1);
  for (size_t d = 0; d < viewType.shape.size() && d < rank; ++d)
    use.box[rank - viewType.shape.size() + d] = viewType.shape[d];
  const Type& dst = fn.typeOf(copy.operands[0]);
  use.swizzleBytes = tmaSwizzleBytes(dst.swizzle, dst.dtype);
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
  TensorMapUse use = tensorMapUseOf(fn, copy);
  for (size_t i = 0; i < maps.size(); ++i)
    if (maps[i] == use) return static_cast<int>(i);
  return -1;
}

}  // namespace argus::ir
