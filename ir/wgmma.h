// wgmma shared-memory matrix descriptors (PTX ISA 8.x, "Matrix Descriptor
// Format" and "Shared Memory Matrix Layout" of wgmma): one description for
// codegen, which encodes them, and the checker, which proves that they read the
// elements the buffers' swizzled layouts store.
//
// Operands are K-major 16-bit tiles whose rows are one swizzle span (32, 64 or
// 128 bytes; the buffer swizzle (b, 3, 3) that TMA writes), or MN-major ones: B
// stored (K, N) (C = A @ B as torch.matmul stores B, and attention's p @ v), rows
// of N, read with imm-trans-b = 1 (wgmmaMnMajorDescriptorForSpan). Rows wider than
// one span lie in column panels one span wide (ir::Swizzle's panels, which copy_bulk
// gives its destinations): a K-major operand's K steps then move from panel to panel,
// and an MN-major operand's N crosses panels, the descriptor's leading byte offset
// stepping from one to the next. One descriptor names 64 rows of A (one
// warpgroup's) or all N rows of B; a wgmma m64nNk16 reads 16 elements of K, and the
// next K step of a K-major operand advances the start address by 32 bytes (inside
// the swizzle span: the hardware applies the swizzle to address bits, so it needs no
// other change), of an MN-major one by 16 rows.
//
// Two independent halves: the descriptor codegen builds (wgmmaOperandProblem,
// wgmmaDescriptorForSpan, encodeWgmmaDescriptor) and a model of the hardware
// that decodes a 64-bit descriptor into the byte addresses it reads
// (wgmmaReadAddress), written from the ISA's text, not from ir::Swizzle.
#pragma once

#include <cstdint>
#include <string>

#include "ir/types.h"

namespace argus::ir {

// Descriptor bits 62-63.
enum class WgmmaSwizzleMode : uint8_t { None = 0, Bytes128 = 1, Bytes64 = 2, Bytes32 = 3 };

// The part of a descriptor that is the same for every K step and warpgroup,
// plus the start-address steps codegen takes between descriptors.
struct WgmmaDescriptor {
  WgmmaSwizzleMode mode = WgmmaSwizzleMode::None;
  int swizzleBytes = 0;            // the span: 32, 64 or 128 (0 without swizzle)
  int64_t leadingByteOffset = 16;  // LBO; swizzled K-major layouts do not use it (encoded 1)
  int64_t strideByteOffset = 0;    // SBO: from one group of 8 rows to the next (8 spans)
  int64_t kStepBytes = 32;         // start-address advance per K step of 16 elements (within a panel)
  int64_t warpgroupBytes = 0;      // A only: start-address advance per warpgroup (64 rows)
  int64_t panelBytes = 0;          // from one column panel of the buffer to the next (0: one panel)
  bool mnMajor = false;            // read with imm-trans = 1
  bool operator==(const WgmmaDescriptor&) const = default;
};

inline constexpr int64_t kWgmmaRowsPerWarpgroup = 64;
inline constexpr int64_t kWgmmaKStep = 16;                 // elements of K per wgmma (16-bit types)
inline constexpr uint32_t kWgmmaStartAddressMask = 0x3FFFF;  // the 18 address bits bits 0-13 hold (>> 4)

// The descriptor of a K-major operand whose rows are one `swizzleBytes` span (32, 64 or
// 128), or several in panels `panelBytes` apart.
WgmmaDescriptor wgmmaDescriptorForSpan(int swizzleBytes, int64_t panelBytes = 0);
// The descriptor of an MN-major B (stored (K, N), read with imm-trans-b = 1) whose rows,
// N elements, are one `swizzleBytes` span, or several in panels `panelBytes` apart: the
// same fields (SBO steps 8 rows of K; LBO, with panels, from one panel of N to the next),
// and a K step of 16 elements is 16 rows of the buffer.
WgmmaDescriptor wgmmaMnMajorDescriptorForSpan(int swizzleBytes, int64_t panelBytes = 0);
// The start-address advance from the operand's first element to K step `step`: for a
// K-major operand element 16 * step of its first row (in the next panel every span's
// worth of K), for an MN-major one row 16 * step.
int64_t wgmmaStepOffsetBytes(const WgmmaDescriptor& descriptor, int64_t step);

// Why operand `name` ("a" or "b") of a wgmma dot cannot be read through a
// descriptor, in the user's words, or "" with *out set. `operand` is the dot's
// operand type; `buffer` the type of the shared buffer it views (nullptr when
// the operand is not a view op's result).
std::string wgmmaOperandProblem(const Type& operand, const Type* buffer, const std::string& name,
                                WgmmaDescriptor* out);
// The same for B stored (K, N) (MN-major, imm-trans-b = 1): a 16-bit shared view of whole
// rows of N (`n` elements, the accumulator's width) of a buffer whose rows are one swizzle
// span or several in panels, its K a multiple of 16.
std::string wgmmaMnMajorOperandProblem(const Type& operand, const Type* buffer, int64_t n, WgmmaDescriptor* out);

// Every field but the start address (bits 0-13).
uint64_t wgmmaDescriptorFixedBits(const WgmmaDescriptor& descriptor);
// The 64-bit descriptor for an operand starting at shared address `start`.
uint64_t encodeWgmmaDescriptor(const WgmmaDescriptor& descriptor, uint32_t start);

// The hardware model: the shared-memory byte address the wgmma that receives
// `descriptor` reads for element (row, k) of its K-major operand, k in [0, 16),
// 16-bit elements. Rows go in core matrices of 8: row % 8 steps one swizzle
// span (16 bytes without swizzle), row / 8 steps SBO; without swizzle each 16
// bytes of K step LBO. The swizzle XORs address bits [4, 4+b) with bits
// [7, 7+b), b = 3, 2, 1 for 128, 64, 32 bytes. Matrix base offset (bits 49-51)
// is taken as 0: buffers are 1024-byte aligned.
int64_t wgmmaReadAddress(uint64_t descriptor, int64_t row, int64_t k);

// The same for an MN-major operand (imm-trans = 1): element (mn, k), k in [0, 16). A
// swizzled atom is 8 rows of K, each one swizzle span of MN (span / 2 elements), in
// consecutive spans; the next atom along K is SBO further, the next along MN LBO
// further; the swizzle XORs the address bits as for K-major operands. Without swizzle,
// core matrices are 8 MN elements (16 bytes) by 8 rows of K: rows 16 bytes apart, the
// next along MN LBO further, the next along K SBO further.
int64_t wgmmaReadAddressMnMajor(uint64_t descriptor, int64_t mn, int64_t k);

}  // namespace argus::ir
