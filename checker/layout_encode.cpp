#include "checker/layout_encode.h"

namespace argus::checker {

EncodedDistribution encodeDistribution(z3::context& ctx, const ir::Layout& layout, const ir::Distribution& dist,
                                       const z3::expr& thread, const z3::expr& value, bool withPrimaryOwner) {
  auto bv = [&](int64_t v) { return ctx.bv_val(v, 32); };
  EncodedDistribution out;
  for (size_t d = 0; d < dist.lanes.size(); ++d) out.coordinate.push_back(bv(0));
  auto apply = [&](const std::vector<ir::Distribution::Digit>& digits, z3::expr id, bool isValue) {
    for (const ir::Distribution::Digit& digit : digits) {
      const bool reduced = layout.isReduced(static_cast<size_t>(digit.dim));
      if (reduced && isValue) continue;  // reduced value digits take no part in the value index
      z3::expr x = z3::urem(id, bv(digit.extent));
      id = z3::udiv(id, bv(digit.extent));
      if (!reduced)
        out.coordinate[static_cast<size_t>(digit.dim)] = out.coordinate[static_cast<size_t>(digit.dim)] + x * bv(digit.stride);
      else if (withPrimaryOwner)
        out.primaryOwner.push_back(x == 0);
    }
    if (!isValue && withPrimaryOwner) out.primaryOwner.push_back(id == 0);  // leftover bits are replicas
  };
  apply(dist.laneDigits, z3::urem(thread, bv(32)), false);
  apply(dist.warpDigits, z3::udiv(thread, bv(32)), false);
  apply(dist.valueDigits, value, true);
  return out;
}

}  // namespace argus::checker
