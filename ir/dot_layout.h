// The instruction a dot runs on, chosen by the compiler (docs/language.md, "dot").
//
// A dot of two 16-bit shared-memory operands into an f32 accumulator that the
// program left in the default (blocked) layout gets the tensor cores' layout for
// the target: wgmma's accumulator on sm_90a when the operands are tiles wgmma
// reads through descriptors and the block is one warpgroup per 64 rows, else
// mma.sync's (m16n8k16 over a grid of the block's warps). The accumulator's
// whole family takes it: the zeros it starts from, the loop-carried values and
// results, the elementwise math on it (its cast, say), up to the stores and
// reductions that consume it; a tile loaded into it (an epilogue's residual) is
// read in its layout, and a row or column broadcast into it (an epilogue's bias)
// is built in its layout where the broadcast's operand passes through shared
// memory anyway. A family that reaches an op this pass does not retype (a
// reduction, another dot's operand) keeps its layout, and so does a
// dot whose shapes fit no tensor-core layout; codegen's warning (AG5021) then
// says why such a 16-bit dot runs on FMAs.
//
// It runs on the IR sema built, before the policies (pipelining), so the checker
// and codegen see the layouts it chose; the interpreter's results do not depend
// on layouts.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"

namespace argus::ir {

// The tensor-core accumulator layout for `dot` on `arch` (sm_80, sm_90, sm_90a), or
// nullopt when none fits (the dot stays as it is). Considers only dots whose
// accumulator is an f32 rank-2 tile in the blocked layout.
std::optional<Layout> tensorCoreLayoutFor(const Function& fn, const Op& dot, const std::string& arch);

// Why the accumulator of `dot` keeps its layout although a tensor-core layout fits
// the dot: the op where the accumulator's family meets something this pass does not
// retype (a reduction, a dot that reads it as an operand), or nullptr.
const Op* accumulatorLayoutObstacle(const Function& fn, const Op& dot, const std::string& arch);

// Gives every such dot of the module, and its accumulator's family, the layout.
void chooseDotLayouts(Module& module, const std::string& arch);

}  // namespace argus::ir
