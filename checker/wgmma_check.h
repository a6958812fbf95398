// The wgmma descriptor check (internal to the checker; AG2060): for every dot
// whose accumulator has the wgmma layout, the shared-memory byte that the
// hardware reads through codegen's matrix descriptors (ir::wgmmaReadAddress)
// is, for every element (row, k) of A's rows (each warpgroup's 64) and of B's
// N rows (or, for B stored (K, N), read MN-major, every element (k, n) of it),
// every K step and every stage of a staged buffer, the byte where the
// buffer's swizzled layout stores that element (ir::Swizzle::apply on its
// row-major offset). See docs/checker.md, "wgmma descriptors".
#pragma once

#include <functional>
#include <optional>

#include "checker/checker.h"
#include "ir/wgmma.h"

namespace argus::checker {

// The descriptors one wgmma dot reads its operands through.
struct WgmmaDotDescriptors {
  ir::WgmmaDescriptor a, b;
  // False where codegen refuses the operand's layout (wgmmaOperandProblem): the
  // descriptor is then the one its rows (or its swizzle) would need, so that a
  // buffer it cannot express is reported with an element it would misread.
  bool aDerived = true, bDerived = true;
  // A in registers (attention's p @ v): only B is read through a descriptor.
  bool aInRegisters = false;
  // B stored (K, N), read MN-major (imm-trans-b = 1; ir::wgmmaReadAddressMnMajor).
  bool bMnMajor = false;
};

// Codegen's descriptors for `dot`, or nullopt when the dot does not read shared
// operands through descriptors (no wgmma accumulator; A in registers with B read
// transposed) or an operand is refused for something other than its layout (its
// space or dtype): code generation reports those.
std::optional<WgmmaDotDescriptors> derivedWgmmaDescriptors(const ir::Function& fn, const ir::Op& dot);

// Where the check takes each dot's descriptors from: codegen's derivation, or a
// perturbed one (the unit tests plant wrong descriptors through it).
using WgmmaDescriptorSource =
    std::function<std::optional<WgmmaDotDescriptors>(const ir::Function& fn, const ir::Op& dot)>;

// Reports AG2060 (one per operand) with the first element, in (stage, warpgroup,
// row, k) order, whose byte differs.
void checkWgmmaDescriptors(const ir::Function& fn, DiagnosticSink& diags,
                           const WgmmaDescriptorSource& descriptors = derivedWgmmaDescriptors);

}  // namespace argus::checker
