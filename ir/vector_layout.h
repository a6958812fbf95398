// Vectorized layouts for 16-bit global loads and stores (docs/language.md, "How tiles
// live in registers").
//
// The canonical blocked layout gives consecutive elements of a row to consecutive
// lanes: a bf16 row kernel then moves 2 bytes per thread per instruction. This pass
// gives the tiles that a bf16 / f16 global load produces or a global store consumes,
// and their whole family, the canonical layout with V = 8 consecutive elements of the
// last axis per thread (Layout::vec, ir/types.h), so that codegen can move each
// thread's 8 elements with one 16-byte access. The family is what must share a layout
// for the code between to stay free of layout conversions: elementwise math, casts,
// reductions along an axis and the broadcasts back, loop-carried values and branch
// results, iota and splats (rebuilt in any layout). Layout conversions and reshapes
// are its borders (they take and give any layout).
//
// A family keeps the canonical layout when it reaches a dot, a shared-memory load or
// store, an mma tile or another op this pass does not retype, when a tile's last
// extent is not a multiple of 8, or when the vectorized layout would replicate
// elements over more threads than the canonical one. For the last two reasons (and an
// op it does not follow) the pass reports note AG5022 at the 16-bit access (`hints`);
// dots, mma tiles and shared memory get none, since codegen moves those in wide
// accesses by other means (fused shared copies, ldmatrix, staged mma stores).
//
// It runs on the IR sema built, after chooseDotLayouts and before the policies; the
// interpreter's results do not depend on layouts.
#pragma once

#include <string>

#include "ir/ir.h"
#include "support/diagnostic.h"

namespace argus::ir {

// Elements per thread along the last axis the pass gives 16-bit families: 16 bytes.
inline constexpr int64_t kVectorElements16 = 8;

// Gives every qualifying family of every function the vectorized layout. `hints`,
// when not null, receives AG5022 for the 16-bit global accesses left unvectorized.
void chooseVectorLayouts(Module& module, const std::string& arch, DiagnosticSink* hints = nullptr);

}  // namespace argus::ir
