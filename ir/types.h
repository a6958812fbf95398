// Types of the Tile IR: dtypes, register-tile layouts, and value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace argus::ir {

enum class DType : uint8_t {
  Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, F8E4M3, F8E5M2
};

const char* dtypeName(DType t);  // "f32", "bf16", "i32", ...
std::optional<DType> dtypeFromName(std::string_view name);
int dtypeBits(DType t);
bool isFloat(DType t);
bool isInteger(DType t);  // signed or unsigned, not bool
bool isSigned(DType t);   // signed integers only

// How a register tile is spread over the threads of a block (see docs/language.md,
// "How tiles live in registers"). A layout is the canonical blocked distribution
// of `parent` (every extent a power of two) over the block's warps, with the axes
// in `reducedMask` collapsed to extent 1: their value is replicated over the
// threads that shared that axis in the parent.
//
// Canonical distribution of parent P (rank r) over W warps of 32 lanes:
//   lanes:  for d = r-1 .. 0:  L[d] = min(P[d], lanesLeft);  lanesLeft /= L[d]
//   warps:  for d = 0 .. r-1:  W[d] = min(P[d] / L[d], warpsLeft); warpsLeft /= W[d]
//   values: V[d] = P[d] / (L[d] * W[d])
//   lane id splits into l[d] (innermost dim fastest); warp id into w[d] (same order);
//   leftover lane / warp bits are replicas.
//   value index v splits row-major into k[d] (k[r-1] fastest), k[d] < V[d]
//   (reduced axes contribute no factor: their k is 0).
//   coordinate[d] = l[d] + L[d] * (w[d] + W[d] * k[d]);  0 on reduced axes.
// The primary owner of an element is the replica with all replica bits and all
// l[d], w[d] of reduced axes equal to zero; only it stores the element.
//
// A vectorized blocked layout (vec = V > 1, blocked only; ir/vector_layout.h picks it
// for tiles of 16-bit global loads and stores) gives each thread V consecutive
// elements of the last axis: the rule above runs on the parent with its last extent
// divided by V (P' = P, P'[r-1] = P[r-1] / V), and then
//   coordinate[r-1] = j + V * (l'[r-1] + L'[r-1] * (w'[r-1] + W'[r-1] * k'[r-1])),
// where j < V is the lowest digit of the value index (v = k' * V + j, row-major as
// above). So values v..v+V-1 (v a multiple of V) are V adjacent elements: one 16-byte
// access for V = 8 16-bit elements.
//
// An mma layout (kind Mma, rank 2) is the accumulator layout of the tensor-core
// instruction mma.sync m16n8k16, tiled over a (warpsM x warpsN) grid of warps.
// Each warp owns the contiguous block of rows [wm*BM/warpsM, ...) and columns
// [wn*BN/warpsN, ...), covered by RM x RN atoms of 16 x 8; with lane = 4*g + q:
//   row = wm*(BM/warpsM) + rm*16 + h*8 + g,   col = wn*(BN/warpsN) + rn*8 + 2*q + e
//   value index v = ((rm*RN + rn)*2 + h)*2 + e   (the register order of mma's C/D)
//   warp id = wm*warpsN + wn; leftover warps are replicas.
// Reduced axes work as for blocked layouts (their digits give coordinate 0).
enum class LayoutKind : uint8_t { Blocked, Mma };

struct Layout {
  std::vector<int64_t> parent;
  uint32_t reducedMask = 0;
  LayoutKind kind = LayoutKind::Blocked;
  int64_t warpsM = 1, warpsN = 1;  // Mma only
  // Mma only: the accumulator of wgmma.mma_async m64nNk16 (sm_90a) instead of mma.sync. Its
  // distribution is exactly the mma layout's with warps (4 * warpgroups, 1) and BM = 64 * warpgroups
  // (warpgroup g, warps 4g..4g+3, owns rows 64g..64g+63); only codegen's instruction differs.
  bool wgmma = false;
  // Blocked only: consecutive elements of the last axis per thread (1: the canonical rule).
  int64_t vec = 1;
  bool operator==(const Layout&) const = default;
  bool isReduced(size_t axis) const { return (reducedMask >> axis) & 1u; }
  bool isMma() const { return kind == LayoutKind::Mma; }
  // The tile shape this layout describes: parent with reduced axes set to 1.
  std::vector<int64_t> shape() const;
  static Layout canonical(std::vector<int64_t> shape) { return Layout{std::move(shape), 0}; }
  // The canonical layout with `vec` consecutive elements of the last axis per thread.
  static Layout vectorized(std::vector<int64_t> shape, int64_t vec) {
    Layout l{std::move(shape), 0};
    l.vec = vec;
    return l;
  }
  // Requires rank 2, BM % (16*warpsM) == 0 and BN % (8*warpsN) == 0 (sema checks).
  static Layout mma(int64_t rows, int64_t cols, int64_t warpsM, int64_t warpsN) {
    return Layout{{rows, cols}, 0, LayoutKind::Mma, warpsM, warpsN};
  }
  // Requires rank 2, BM == 64 * warpgroups, BN % 8 == 0 and BN <= 256 (sema checks).
  static Layout wgmmaAccumulator(int64_t rows, int64_t cols, int64_t warpgroups) {
    return Layout{{rows, cols}, 0, LayoutKind::Mma, 4 * warpgroups, 1, true};
  }
};

// "#blocked<[64, 64]>", "#blocked<[4, 1024], reduced=[1]>", "#blocked<[4096], vec=8>",
// "#mma<[64, 64], warps=[2, 2]>".
std::string layoutStr(const Layout& layout);

// Concrete numbers of a layout's distribution for a given number of warps.
// Every layout is a mixed radix: the lane id, the warp id and the value index
// are each split into digits (lowest first), and each digit moves one
// coordinate by a stride. `lanes/warps/values[d]` are the products of the
// digits of dimension d.
struct Distribution {
  struct Digit {
    int dim = 0;
    int64_t extent = 1;
    int64_t stride = 1;
  };
  std::vector<Digit> laneDigits, warpDigits, valueDigits;  // lowest digit first
  std::vector<int64_t> lanes, warps, values;
  uint32_t reducedMask = 0;
  int64_t numWarps = 1;
  int64_t valuesPerThread = 1;  // product of the value digits of non-reduced axes

  static Distribution of(const Layout& layout, int64_t numWarps);
  // Tile coordinate (in the layout's shape) of value `v` of `thread`.
  std::vector<int64_t> coordinate(int64_t thread, int64_t v) const;
  bool isPrimaryOwner(int64_t thread) const;
  // The value index under which `thread` holds the element at tile coordinate
  // `coord` (in the layout's shape), or -1 when it does not hold it.
  int64_t valueIndexOf(int64_t thread, const std::vector<int64_t>& coord) const;
};

// CuTe's Swizzle<B, M, S> on element offsets into a shared buffer: bits
// [M, M+B) of the offset are XORed with bits [M+S, M+S+B). Identity when B = 0.
// It is a physical placement only: every access to the buffer goes through it,
// so programs (and the interpreter) see logical offsets.
//
// Column panels: a buffer whose rows (its last axis, `cols` elements) are several
// swizzle spans wide (a TMA destination: TMA and wgmma read 128-byte-swizzled rows of
// at most one span) is stored in panels of `panelCols` columns. Panel p holds columns
// [p * panelCols, (p + 1) * panelCols) of all `rows` rows of the last two axes, rows one
// span apart; the panels of one (rows, cols) matrix follow each other, and the leading
// axes (stages) step whole matrices. The XOR then applies to the panelled offset.
struct Swizzle {
  int bits = 0, base = 0, shift = 0;
  int64_t panelCols = 0, rows = 0, cols = 0;  // column panels; panelCols == 0: none
  bool isIdentity() const { return bits == 0 && panelCols == 0; }
  bool hasPanels() const { return panelCols > 0; }
  // The panel placement alone (no XOR): a logical row-major offset to a physical one.
  int64_t place(int64_t offset) const {
    if (!hasPanels()) return offset;
    const int64_t matrix = rows * cols, inMatrix = offset % matrix;
    const int64_t row = inMatrix / cols, col = inMatrix % cols;
    return offset - inMatrix + (col / panelCols) * rows * panelCols + row * panelCols + col % panelCols;
  }
  int64_t apply(int64_t offset) const {
    const int64_t placed = place(offset);
    return bits == 0 ? placed : placed ^ (((placed >> (base + shift)) & ((int64_t{1} << bits) - 1)) << base);
  }
  bool operator==(const Swizzle&) const = default;
};

enum class TypeKind : uint8_t { Void, Scalar, Tile, Tensor, Shared, View };
enum class MemSpace : uint8_t { Global, Shared };

struct Type {
  TypeKind kind = TypeKind::Void;
  DType dtype = DType::F32;
  // Tile: the tile shape. Shared: the buffer shape. View: the tile shape.
  // Tensor: one entry per dimension, -1 where the extent is a runtime size.
  std::vector<int64_t> shape;
  Layout layout;                     // Tile only
  MemSpace space = MemSpace::Global;  // View only
  Swizzle swizzle;                   // Shared, and View of shared memory (its buffer's swizzle)

  static Type voidType() { return {}; }
  static Type scalar(DType t) { Type ty; ty.kind = TypeKind::Scalar; ty.dtype = t; return ty; }
  static Type tile(DType t, Layout layout);
  static Type tensor(DType t, std::vector<int64_t> shape);
  static Type shared(DType t, std::vector<int64_t> shape);
  static Type view(MemSpace space, DType t, std::vector<int64_t> shape);

  bool isScalar() const { return kind == TypeKind::Scalar; }
  bool isTile() const { return kind == TypeKind::Tile; }
  int64_t numElements() const;
  bool operator==(const Type&) const = default;
  std::string str() const;  // e.g. "tile<f32, [64, 64], #blocked<[64, 64]>>"
};

}  // namespace argus::ir
