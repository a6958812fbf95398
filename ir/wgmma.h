// wgmma shared-memory matrix descriptors (PTX ISA 8.x, "Matrix Descriptor
// Format" and "Shared Memory Matrix Layout" of wgmma): one description for
// codegen, which encodes them, and the checker, which proves that they read the
// elements the buffers' swizzled layouts store.
//
// Operands are K-major 16-bit tiles whose rows are exactly one swizzle span (32,
// 64 or 128 bytes; the buffer swizzle (b, 3, 3) that TMA writes), or, for B of a
// dot whose A is in registers (attention's p @ v), MN-major ones: stored (K, N),
// rows of N one span, read with imm-trans-b = 1 (wgmmaMnMajorDescriptorForSpan). One
// descriptor names 64 rows of A (one warpgroup's) or all N rows of B; a
// wgmma m64nNk16 reads 16 elements of K, and the next K step advances the start
// address by 32 bytes (inside the swizzle span: the hardware applies the
// swizzle to address bits, so it needs no other change).
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
  int64_t kStepBytes = 32;         // start-address advance per K step of 16 elements
  int64_t warpgroupBytes = 0;      // A only: start-address advance per warpgroup (64 rows)
  bool operator==(const WgmmaDescriptor&) const = default;
};

inline constexpr int64_t kWgmmaRowsPerWarpgroup = 64;
inline constexpr int64_t kWgmmaKStep = 16;                 // elements of K per wgmma (16-bit types)
inline constexpr uint32_t kWgmmaStartAddressMask = 0x3FFFF;  // the 18 address bits bits 0-13 hold (>> 4)

// The descriptor of a K-major operand whose rows are one `swizzleBytes` span (32, 64 or 128).
WgmmaDescriptor wgmmaDescriptorForSpan(int swizzleBytes);
// The descriptor of an MN-major B (stored (K, N), read with imm-trans-b = 1: attention's
// V in p @ v) whose rows, N elements, are one `swizzleBytes` span: the same fields (SBO
// steps 8 rows of K), and a K step of 16 elements is 16 rows of the buffer.
WgmmaDescriptor wgmmaMnMajorDescriptorForSpan(int swizzleBytes);

// Why operand `name` ("a" or "b") of a wgmma dot cannot be read through a
// descriptor, in the user's words, or "" with *out set. `operand` is the dot's
// operand type; `buffer` the type of the shared buffer it views (nullptr when
// the operand is not a view op's result).
std::string wgmmaOperandProblem(const Type& operand, const Type* buffer, const std::string& name,
                                WgmmaDescriptor* out);

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
