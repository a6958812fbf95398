#include "codegen/fragment_lanes.h"

namespace argus::codegen {

MatrixRowLanes mmaOperandLanes(MmaOperandLoad load) {
  switch (load) {
    case MmaOperandLoad::A:  // lane l: row l % 16, col 8 * (l / 16)
      return {{{{0, 15, 1}}}, {{{4, 1, 8}}}, 4, false};
    case MmaOperandLoad::BByRowsX4:  // row l % 8 + 8 * ((l / 8) % 2), col 8 * (l / 16)
      return {{{{0, 7, 1}, {3, 1, 8}}}, {{{4, 1, 8}}}, 4, true};
    case MmaOperandLoad::BByRowsX2:  // lanes 16..31 repeat 0..15's in-bounds addresses
      return {{{{0, 7, 1}, {3, 1, 8}}}, {}, 2, true};
    case MmaOperandLoad::BTransposedX4:  // row l % 8 + 8 * (l / 16), col 8 * ((l / 8) % 2)
      return {{{{0, 7, 1}, {4, 1, 8}}}, {{{3, 1, 8}}}, 4, false};
    case MmaOperandLoad::BTransposedX2:  // row l % 8, col 8 * ((l / 8) % 2)
      return {{{{0, 7, 1}}}, {{{3, 1, 8}}}, 2, false};
  }
  return {};
}

MatrixRowLanes accumulatorStoreLanes() {  // row l % 8 + 8 * ((l / 8) % 2), col 8 * (l / 16)
  return {{{{0, 7, 1}, {3, 1, 8}}}, {{{4, 1, 8}}}, 4, false};
}

}  // namespace argus::codegen
