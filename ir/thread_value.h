// The IR's register layouts and the layout algebra's thread-value layouts are one
// representation seen from two sides. Instruction fragments (mma.sync's accumulator,
// wgmma's) are defined once, in layout/tv_layout.cpp, against the PTX ISA's tables; the
// IR's distribution takes its in-atom digits from them (fragmentDigits), and any IR
// layout can be shown or checked as a thread-value layout (threadValueLayout).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/types.h"
#include "layout/tv_layout.h"

namespace argus::ir {

// One mode of an instruction fragment (its thread or its value mode, over a column-major
// tile of `rows` rows) as distribution digits, lowest first: a leaf with stride s < rows
// moves the row by s, one with a stride that is a multiple of rows moves the column by
// s / rows. Extent-1 leaves are dropped.
std::vector<Distribution::Digit> fragmentDigits(const layout::Layout& mode, int64_t rows);

// The (thread, value) -> element map of a register layout spread over `numWarps` warps, as
// a thread-value layout of its tile: the tile is column-major over the layout's shape
// (rows = first extent, cols = the product of the others), threads are the block's
// 32 * numWarps threads, values are Distribution::valuesPerThread, and threads that hold
// replicas (lanes or warps beyond the layout's digits, digits of reduced axes) have
// stride 0 there. The result's function is Distribution::coordinate.
layout::TVLayout threadValueLayout(const Layout& layout, int64_t numWarps);

// Why a register layout cannot be distributed over `numWarps` warps (sema's rules: an mma
// tile splits into 16 x 8 atoms per warp, a wgmma tile is 64 rows per warpgroup and at most
// 256 columns, a vector width divides the last extent), or "" when it can.
std::string layoutProblem(const Layout& layout, int64_t numWarps);

}  // namespace argus::ir
