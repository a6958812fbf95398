#include "ir/types.h"

#include <algorithm>

#include "ir/thread_value.h"

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

namespace {

void addDigit(std::vector<Distribution::Digit>& digits, int dim, int64_t extent, int64_t stride) {
  if (extent > 1) digits.push_back({dim, extent, stride});
}

// The canonical blocked distribution (see types.h).
void blockedDigits(const Layout& layout, Distribution& dist) {
  std::vector<int64_t> p = layout.parent;
  size_t rank = p.size();
  // vec > 1: the canonical rule on the parent whose last extent counts groups of vec
  // elements; the group's own digit (extent vec, stride 1) is the lowest value digit
  // and every other digit of the last axis strides whole groups (types.h).
  const int64_t vec = layout.vec > 1 && rank > 0 && p[rank - 1] % layout.vec == 0 ? layout.vec : 1;
  if (vec > 1) p[rank - 1] /= vec;
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
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = std::max<int64_t>(p[d], 1);
    dist.values[d] = std::max<int64_t>(1, extent / (dist.lanes[d] * dist.warps[d]));
  }
  for (size_t i = rank; i-- > 0;) {
    int dim = static_cast<int>(i);
    const int64_t unit = i + 1 == rank ? vec : 1;
    if (unit > 1) addDigit(dist.valueDigits, dim, unit, 1);
    addDigit(dist.laneDigits, dim, dist.lanes[i], unit);
    addDigit(dist.warpDigits, dim, dist.warps[i], unit * dist.lanes[i]);
    addDigit(dist.valueDigits, dim, dist.values[i], unit * dist.lanes[i] * dist.warps[i]);
  }
  if (vec > 1) dist.values[rank - 1] *= vec;
}

// mma.sync m16n8k16 accumulator fragments tiled over warpsM x warpsN warps (types.h). The
// atom's own digits (which lane and which of its four values holds which element of the
// 16 x 8 atom) are the ISA's fragment as layout/tv_layout.cpp defines it.
struct MmaAtomDigits {
  std::vector<Distribution::Digit> lanes, values;
};

const MmaAtomDigits& mmaAtomDigits() {
  static const MmaAtomDigits atom = [] {
    layout::Result<layout::TVLayout> fragment = layout::mmaM16N8K16('C', "f32");
    MmaAtomDigits digits;
    digits.lanes = fragmentDigits(fragment->layout.mode(0), fragment->rows);
    digits.values = fragmentDigits(fragment->layout.mode(1), fragment->rows);
    return digits;
  }();
  return atom;
}

void mmaDigits(const Layout& layout, Distribution& dist) {
  const int64_t rowsPerWarp = layout.parent[0] / layout.warpsM;
  const int64_t colsPerWarp = layout.parent[1] / layout.warpsN;
  const int64_t atomsM = rowsPerWarp / 16, atomsN = colsPerWarp / 8;
  const MmaAtomDigits& atom = mmaAtomDigits();
  dist.laneDigits = atom.lanes;
  addDigit(dist.warpDigits, 1, layout.warpsN, colsPerWarp);
  addDigit(dist.warpDigits, 0, layout.warpsM, rowsPerWarp);
  dist.valueDigits = atom.values;
  addDigit(dist.valueDigits, 1, atomsN, 8);
  addDigit(dist.valueDigits, 0, atomsM, 16);
  auto extentsPerDim = [](const std::vector<Distribution::Digit>& digits) {
    std::vector<int64_t> perDim(2, 1);
    for (const Distribution::Digit& digit : digits) perDim[static_cast<size_t>(digit.dim)] *= digit.extent;
    return perDim;
  };
  dist.lanes = extentsPerDim(dist.laneDigits);
  dist.warps = extentsPerDim(dist.warpDigits);
  dist.values = extentsPerDim(dist.valueDigits);
}

}  // namespace

Distribution Distribution::of(const Layout& layout, int64_t numWarps) {
  Distribution dist;
  size_t rank = layout.parent.size();
  dist.lanes.assign(rank, 1);
  dist.warps.assign(rank, 1);
  dist.values.assign(rank, 1);
  dist.reducedMask = layout.reducedMask;
  dist.numWarps = numWarps < 1 ? 1 : numWarps;
  if (layout.isMma() && rank == 2)
    mmaDigits(layout, dist);
  else
    blockedDigits(layout, dist);
  dist.valuesPerThread = 1;
  for (const Digit& digit : dist.valueDigits)
    if (!layout.isReduced(static_cast<size_t>(digit.dim))) dist.valuesPerThread *= digit.extent;
  return dist;
}

std::vector<int64_t> Distribution::coordinate(int64_t thread, int64_t v) const {
  std::vector<int64_t> c(lanes.size(), 0);
  auto apply = [&](const std::vector<Digit>& digits, int64_t id, bool skipReducedDigits) {
    for (const Digit& digit : digits) {
      bool reduced = (reducedMask >> digit.dim) & 1u;
      if (reduced && skipReducedDigits) continue;  // reduced value digits take no part in v
      int64_t x = id % digit.extent;
      id /= digit.extent;
      if (!reduced) c[static_cast<size_t>(digit.dim)] += x * digit.stride;
    }
  };
  apply(laneDigits, thread % 32, false);
  apply(warpDigits, thread / 32, false);
  apply(valueDigits, v, true);
  return c;
}

int64_t Distribution::valueIndexOf(int64_t thread, const std::vector<int64_t>& coord) const {
  if (coord.size() != lanes.size()) return -1;
  std::vector<int64_t> rest = coord;
  for (size_t d = 0; d < rest.size(); ++d)
    if (((reducedMask >> d) & 1u) && rest[d] != 0) return -1;
  std::vector<int64_t> base = coordinate(thread, 0);  // value 0 has every value digit 0
  for (size_t d = 0; d < rest.size(); ++d) rest[d] -= base[d];
  int64_t v = 0, scale = 1;
  for (const Digit& digit : valueDigits) {
    if ((reducedMask >> digit.dim) & 1u) continue;
    int64_t& r = rest[static_cast<size_t>(digit.dim)];
    if (r < 0) return -1;
    int64_t x = (r / digit.stride) % digit.extent;
    r -= x * digit.stride;
    v += x * scale;
    scale *= digit.extent;
  }
  for (int64_t r : rest)
    if (r != 0) return -1;
  return v;
}

bool Distribution::isPrimaryOwner(int64_t thread) const {
  auto check = [&](const std::vector<Digit>& digits, int64_t id) {
    for (const Digit& digit : digits) {
      if (((reducedMask >> digit.dim) & 1u) && id % digit.extent != 0) return false;
      id /= digit.extent;
    }
    return id == 0;  // leftover bits are replicas
  };
  return check(laneDigits, thread % 32) && check(warpDigits, thread / 32);
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
  std::string out = (layout.wgmma ? "#wgmma<" : layout.isMma() ? "#mma<" : "#blocked<") + joinInts(layout.parent);
  if (layout.wgmma) out += ", warpgroups=" + std::to_string(layout.warpsM / 4);
  else if (layout.isMma()) out += ", warps=" + joinInts({layout.warpsM, layout.warpsN});
  if (layout.reducedMask) {
    std::vector<int64_t> axes;
    for (size_t d = 0; d < 32; ++d)
      if (layout.isReduced(d)) axes.push_back(static_cast<int64_t>(d));
    out += ", reduced=" + joinInts(axes);
  }
  if (layout.vec > 1) out += ", vec=" + std::to_string(layout.vec);
  return out + ">";
}

// Panels name the rows and columns of the matrix they tile only where those are not the last two
// axes of the type's own shape (a view of a paneled buffer): the text is then lossless.
static std::string swizzleSuffix(const Swizzle& s, const std::vector<int64_t>& shape) {
  if (s.isIdentity()) return "";
  std::string out = ", swizzle<" + std::to_string(s.bits) + ", " + std::to_string(s.base) + ", " + std::to_string(s.shift) + ">";
  if (s.hasPanels()) {
    out += ", panels<" + std::to_string(s.panelCols);
    const size_t rank = shape.size();
    if (rank < 2 || s.rows != shape[rank - 2] || s.cols != shape[rank - 1])
      out += ", " + std::to_string(s.rows) + ", " + std::to_string(s.cols);
    out += ">";
  }
  return out;
}

std::string Type::str() const {
  std::string dt = dtypeName(dtype);
  switch (kind) {
    case TypeKind::Void: return "void";
    case TypeKind::Scalar: return dt;
    case TypeKind::Tile: return "tile<" + dt + ", " + joinInts(shape) + ", " + layoutStr(layout) + ">";
    case TypeKind::Tensor: return "tensor<" + dt + ", " + joinInts(shape, true) + ">";
    case TypeKind::Shared: return "shared<" + dt + ", " + joinInts(shape) + swizzleSuffix(swizzle, shape) + ">";
    case TypeKind::View:
      return std::string("view<") + (space == MemSpace::Shared ? "shared" : "global") + ", " + dt +
             ", " + joinInts(shape) + swizzleSuffix(swizzle, shape) + ">";
  }
  return "?";
}

}  // namespace argus::ir
