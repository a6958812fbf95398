// Where each lane of a warp points ldmatrix when mma.sync's operands are loaded from
// shared memory, and stmatrix when an accumulator is staged for a store: the row and
// column, inside the block one instruction covers, of the 8-element row whose address the
// lane gives (both take matrix j's rows from lanes 8j..8j+7).
// Each is a sum of bit fields of the lane id, so one definition gives both codegen's
// instructions and the numbers its compile-time address proofs and tests use; the tests
// (codegen_fragment_lanes_test.cpp) put these addresses through ldmatrix's fragment
// (layout/tv_layout.h) and get mma.sync's A and B fragments from the PTX ISA's tables, and
// put the accumulator fragment through stmatrix and get each element at its place.
#pragma once

#include <cstdint>
#include <vector>

namespace argus::codegen {

// ((lane >> shift) & mask) * scale, with scale a power of two.
struct LaneField {
  int shift = 0;
  int64_t mask = 0;
  int64_t scale = 1;
  bool operator==(const LaneField&) const = default;
};

struct LaneFormula {
  std::vector<LaneField> fields;
  bool operator==(const LaneFormula&) const = default;
  // The same sum in units of `unit` (a power of two dividing every scale).
  LaneFormula inUnitsOf(int64_t unit) const {
    LaneFormula out = *this;
    for (LaneField& f : out.fields) f.scale /= unit;
    return out;
  }
  int64_t of(int64_t lane) const {
    int64_t sum = 0;
    for (const LaneField& f : fields) sum += ((lane >> f.shift) & f.mask) * f.scale;
    return sum;
  }
};

// The loads of one 16-wide K step of mma.sync.m16n8k16:
//   A: a 16 x 16 block (rows m, cols k) of A, ldmatrix.x4 -> a0..a3;
//   B stored (K, N): a 16 x 16 block (rows k, cols n), ldmatrix.x4.trans -> b0, b1 of the
//     n-atom at column 0 and b0, b1 of the one at column 8; x2: a 16 x 8 block, one atom;
//   B stored (N, K) (trans_b): a 16 x 16 block (rows n, cols k), ldmatrix.x4 -> the same
//     registers; x2: an 8 x 16 block, one atom.
enum class MmaOperandLoad { A, BByRowsX4, BByRowsX2, BTransposedX4, BTransposedX2 };

struct MatrixRowLanes {
  LaneFormula row, col;
  int matrices = 4;
  bool transpose = false;
};

MatrixRowLanes mmaOperandLanes(MmaOperandLoad load);

// stmatrix.x4 of two adjacent 16 x 8 accumulator atoms (a 16 x 16 block, rows m, cols n):
// registers (atom 0, rows 0-7), (atom 0, rows 8-15), (atom 1, rows 0-7), (atom 1, rows 8-15),
// each a thread's pair of mma's C fragment (codegen/store_staging.cpp).
MatrixRowLanes accumulatorStoreLanes();

// A tile in an mma accumulator layout (ir/types.h; value ((m * blocks + n) * 2 + h) * 2 + e
// for atom row m, 8-column block n, row half h, column e) read as the A operand of mma.sync
// or of wgmma from registers: the C fragment of one 16 x 8 atom is half an A fragment, so
// register r (a_{2r}, a_{2r+1}) of atom row m and K block pair (kb8, kb8 + 1) is this value
// index and the next.
inline int64_t accumulatorValueOfAFragment(int64_t m, int64_t kb8, int64_t blocks, int64_t reg) {
  return ((m * blocks + kb8 + reg / 2) * 2 + reg % 2) * 2;
}

}  // namespace argus::codegen
