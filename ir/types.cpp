#include "ir/types.h"

#include <algorithm>

namespace argus::ir {

namespace {

struct DTypeInfo {
  DType type;
  const char* name;
  int bits;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::Bool, "bool", 1},      {DType::I8, "i8", 8},         {DType::I16, "i16", 16},
    {DType::I32, "i32", 32},       {DType::I64, "i64", 64},      {DType::U8, "u8", 8},
    {DType::U16, "u16", 16},       {DType::U32, "u32", 32},      {DType::U64, "u64", 64},
    {DType::F16, "f16", 16},       {DType::BF16, "bf16", 16},    {DType::F32, "f32", 32},
    {DType::F64, "f64", 64},       {DType::F8E4M3, "f8e4m3", 8}, {DType::F8E5M2, "f8e5m2", 8},
};

const DTypeInfo* infoOf(DType t) {
  for (const DTypeInfo& info : kDTypes)
    if (info.type == t) return &info;
  return nullptr;
}

std::string joinInts(const std::vector<int64_t>& xs, bool questionForNegative = false) {
  std::string out = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) out += ", ";
    out += (questionForNegative && xs[i] < 0) ? std::string("?") : std::to_string(xs[i]);
  }
  return out + "]";
}

}  // namespace

const char* dtypeName(DType t) {
  const DTypeInfo* info = infoOf(t);
  return info ? info->name : "?";
}

std::optional<DType> dtypeFromName(std::string_view name) {
  for (const DTypeInfo& info : kDTypes)
    if (name == info.name) return info.type;
  return std::nullopt;
}

int dtypeBits(DType t) {
  const DTypeInfo* info = infoOf(t);
  return info ? info->bits : 0;
}

bool isFloat(DType t) {
  switch (t) {
    case DType::F16: case DType::BF16: case DType::F32: case DType::F64:
    case DType::F8E4M3: case DType::F8E5M2:
      return true;
    default:
      return false;
  }
}

bool isInteger(DType t) { return t != DType::Bool && !isFloat(t); }

bool isSigned(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

// ---------------------------------------------------------------- layouts

std::vector<int64_t> Layout::shape() const {
  std::vector<int64_t> s = parent;
  for (size_t d = 0; d < s.size(); ++d)
    if (isReduced(d)) s[d] = 1;
  return s;
}

Distribution Distribution::of(const Layout& layout, int64_t numWarps) {
  Distribution dist;
  const std::vector<int64_t>& p = layout.parent;
  size_t rank = p.size();
  dist.lanes.assign(rank, 1);
  dist.warps.assign(rank, 1);
  dist.values.assign(rank, 1);
  dist.reducedMask = layout.reducedMask;
  dist.numWarps = numWarps < 1 ? 1 : numWarps;
  int64_t lanesLeft = 32;
  for (size_t i = rank; i-- > 0;) {
    int64_t extent = std::max<int64_t>(p[i], 1);
    dist.lanes[i] = std::min(extent, lanesLeft);
    lanesLeft /= dist.lanes[i];
  }
  int64_t warpsLeft = dist.numWarps;
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = std::max<int64_t>(p[d], 1);
    dist.warps[d] = std::max<int64_t>(1, std::min(extent / dist.lanes[d], warpsLeft));
    warpsLeft /= dist.warps[d];
  }
  dist.valuesPerThread = 1;
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = std::max<int64_t>(p[d], 1);
    dist.values[d] = std::max<int64_t>(1, extent / (dist.lanes[d] * dist.warps[d]));
    if (!layout.isReduced(d)) dist.valuesPerThread *= dist.values[d];
  }
  return dist;
}

void Distribution::threadCoords(int64_t thread, std::vector<int64_t>& laneCoord,
                                std::vector<int64_t>& warpCoord) const {
  size_t rank = lanes.size();
  laneCoord.assign(rank, 0);
  warpCoord.assign(rank, 0);
  int64_t lane = thread % 32, warp = thread / 32;
  for (size_t d = rank; d-- > 0;) {
    laneCoord[d] = lane % lanes[d];
    lane /= lanes[d];
    warpCoord[d] = warp % warps[d];
    warp /= warps[d];
  }
}

std::vector<int64_t> Distribution::valueCoords(int64_t v) const {
  size_t rank = values.size();
  std::vector<int64_t> k(rank, 0);
  for (size_t d = rank; d-- > 0;) {
    if ((reducedMask >> d) & 1u) continue;
    k[d] = v % values[d];
    v /= values[d];
  }
  return k;
}

std::vector<int64_t> Distribution::coordinate(int64_t thread, int64_t v) const {
  std::vector<int64_t> l, w;
  threadCoords(thread, l, w);
  std::vector<int64_t> k = valueCoords(v);
  std::vector<int64_t> c(lanes.size(), 0);
  for (size_t d = 0; d < c.size(); ++d)
    if (!((reducedMask >> d) & 1u)) c[d] = l[d] + lanes[d] * (w[d] + warps[d] * k[d]);
  return c;
}

int64_t Distribution::valueIndexOf(int64_t thread, const std::vector<int64_t>& coord) const {
  if (coord.size() != lanes.size()) return -1;
  std::vector<int64_t> l, w;
  threadCoords(thread, l, w);
  int64_t v = 0;
  for (size_t d = 0; d < coord.size(); ++d) {
    if ((reducedMask >> d) & 1u) {
      if (coord[d] != 0) return -1;
      continue;
    }
    int64_t rest = coord[d] - l[d] - lanes[d] * w[d];
    int64_t span = lanes[d] * warps[d];
    if (rest < 0 || rest % span != 0 || rest / span >= values[d]) return -1;
    v = v * values[d] + rest / span;
  }
  return v;
}

bool Distribution::isPrimaryOwner(int64_t thread) const {
  int64_t laneSpan = 1, warpSpan = 1;
  for (size_t d = 0; d < lanes.size(); ++d) {
    laneSpan *= lanes[d];
    warpSpan *= warps[d];
  }
  int64_t lane = thread % 32, warp = thread / 32;
  if (lane >= laneSpan || warp >= warpSpan) return false;  // a replica bit is set
  std::vector<int64_t> l, w;
  threadCoords(thread, l, w);
  for (size_t d = 0; d < l.size(); ++d)
    if (((reducedMask >> d) & 1u) && (l[d] != 0 || w[d] != 0)) return false;
  return true;
}

// ---------------------------------------------------------------- types

Type Type::tile(DType t, Layout layout) {
  Type ty;
  ty.kind = TypeKind::Tile;
  ty.dtype = t;
  ty.shape = layout.shape();
  ty.layout = std::move(layout);
  return ty;
}

Type Type::tensor(DType t, std::vector<int64_t> shape) {
  Type ty;
  ty.kind = TypeKind::Tensor;
  ty.dtype = t;
  ty.shape = std::move(shape);
  return ty;
}

Type Type::shared(DType t, std::vector<int64_t> shape) {
  Type ty;
  ty.kind = TypeKind::Shared;
  ty.dtype = t;
  ty.shape = std::move(shape);
  return ty;
}

Type Type::view(MemSpace space, DType t, std::vector<int64_t> shape) {
  Type ty;
  ty.kind = TypeKind::View;
  ty.dtype = t;
  ty.shape = std::move(shape);
  ty.space = space;
  return ty;
}

int64_t Type::numElements() const {
  switch (kind) {
    case TypeKind::Void: return 0;
    case TypeKind::Scalar: return 1;
    default: break;
  }
  int64_t n = 1;
  for (int64_t e : shape) {
    if (e < 0) return -1;
    n *= e;
  }
  return n;
}

std::string layoutStr(const Layout& layout) {
  std::string out = "#blocked<" + joinInts(layout.parent);
  if (layout.reducedMask) {
    std::vector<int64_t> axes;
    for (size_t d = 0; d < 32; ++d)
      if (layout.isReduced(d)) axes.push_back(static_cast<int64_t>(d));
    out += ", reduced=" + joinInts(axes);
  }
  return out + ">";
}

std::string Type::str() const {
  std::string dt = dtypeName(dtype);
  switch (kind) {
    case TypeKind::Void: return "void";
    case TypeKind::Scalar: return dt;
    case TypeKind::Tile: return "tile<" + dt + ", " + joinInts(shape) + ", " + layoutStr(layout) + ">";
    case TypeKind::Tensor: return "tensor<" + dt + ", " + joinInts(shape, true) + ">";
    case TypeKind::Shared: return "shared<" + dt + ", " + joinInts(shape) + ">";
    case TypeKind::View:
      return std::string("view<") + (space == MemSpace::Shared ? "shared" : "global") + ", " + dt +
             ", " + joinInts(shape) + ">";
  }
  return "?";
}

}  // namespace argus::ir
