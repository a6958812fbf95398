#include "ir/wgmma.h"

#include "ir/bulk.h"

namespace argus::ir {

WgmmaDescriptor wgmmaDescriptorForSpan(int swizzleBytes, int64_t panelBytes) {
  WgmmaDescriptor d;
  d.mode = swizzleBytes == 128  ? WgmmaSwizzleMode::Bytes128
           : swizzleBytes == 64 ? WgmmaSwizzleMode::Bytes64
                                : WgmmaSwizzleMode::Bytes32;
  d.swizzleBytes = swizzleBytes;
  d.strideByteOffset = 8 * static_cast<int64_t>(swizzleBytes);
  d.kStepBytes = kWgmmaKStep * 2;
  d.warpgroupBytes = kWgmmaRowsPerWarpgroup * swizzleBytes;
  d.panelBytes = panelBytes;
  return d;
}

WgmmaDescriptor wgmmaMnMajorDescriptorForSpan(int swizzleBytes, int64_t panelBytes) {
  WgmmaDescriptor d = wgmmaDescriptorForSpan(swizzleBytes, panelBytes);
  d.kStepBytes = kWgmmaKStep * static_cast<int64_t>(swizzleBytes);
  d.warpgroupBytes = 0;  // B: every warpgroup reads all of it
  if (panelBytes > 0) d.leadingByteOffset = panelBytes;  // N crosses panels; one panel leaves LBO unused
  d.mnMajor = true;
  return d;
}

int64_t wgmmaStepOffsetBytes(const WgmmaDescriptor& d, int64_t step) {
  if (d.mnMajor || d.panelBytes == 0 || d.swizzleBytes == 0) return step * d.kStepBytes;
  const int64_t kBytes = step * d.kStepBytes;  // K-major: 16 elements of a row per step
  return (kBytes / d.swizzleBytes) * d.panelBytes + kBytes % d.swizzleBytes;
}

namespace {

// Bytes per element of the 16-bit types wgmma reads through descriptors here.
constexpr int64_t kOperandBytes = 2;

// The stride between a panelled buffer's column panels, 0 without panels; -1 when the
// buffer's rows are neither one `span` nor panels of one span.
int64_t panelBytesOf(const Type& buffer, int span) {
  if (buffer.shape.back() * kOperandBytes == span) return 0;
  if (buffer.swizzle.hasPanels() && buffer.swizzle.panelCols * kOperandBytes == span)
    return buffer.swizzle.rows * span;
  return -1;
}

}  // namespace

std::string wgmmaOperandProblem(const Type& operand, const Type* buffer, const std::string& name,
                                WgmmaDescriptor* out) {
  if (operand.kind != TypeKind::View || operand.space != MemSpace::Shared || !buffer)
    return "operand '" + name + "' must be a shared-memory view";
  if (operand.dtype != DType::BF16 && operand.dtype != DType::F16)
    return "operand '" + name + "' must be bf16 or f16";
  int bytes = tmaSwizzleBytes(operand.swizzle, operand.dtype);
  const int64_t panelBytes = bytes > 0 && !buffer->shape.empty() ? panelBytesOf(*buffer, bytes) : -1;
  if (bytes <= 0 || buffer->shape.empty() || operand.shape.empty() || panelBytes < 0 ||
      operand.shape.back() != buffer->shape.back())
    return "operand '" + name +
           "' must be K-major rows of exactly 32, 64 or 128 bytes in a buffer with swizzle (1, 3, 3), (2, 3, 3) or "
           "(3, 3, 3) (for 128-byte rows: 64 bf16 elements and swizzle=(3, 3, 3)), or wider rows that copy_bulk "
           "stores in panels of one span";
  *out = wgmmaDescriptorForSpan(bytes, panelBytes);
  return {};
}

std::string wgmmaMnMajorOperandProblem(const Type& operand, const Type* buffer, int64_t n, WgmmaDescriptor* out) {
  if (operand.kind != TypeKind::View || operand.space != MemSpace::Shared || !buffer)
    return "operand 'b' must be a shared-memory view";
  if (operand.dtype != DType::BF16 && operand.dtype != DType::F16) return "operand 'b' must be bf16 or f16";
  const int bytes = tmaSwizzleBytes(operand.swizzle, operand.dtype);
  const int64_t panelBytes = bytes > 0 && !buffer->shape.empty() ? panelBytesOf(*buffer, bytes) : -1;
  if (bytes <= 0 || operand.shape.size() != 2 || panelBytes < 0 || operand.shape.back() != buffer->shape.back() ||
      operand.shape.back() != n)
    return "operand 'b', stored (K, N), must be whole rows of N (the accumulator's width) of exactly 32, 64 or 128 "
           "bytes in a buffer with swizzle (1, 3, 3), (2, 3, 3) or (3, 3, 3), or wider rows that copy_bulk stores in "
           "panels of one span";
  if (operand.shape[0] % kWgmmaKStep != 0) return "operand 'b' must have a K (its rows) that is a multiple of 16";
  *out = wgmmaMnMajorDescriptorForSpan(bytes, panelBytes);
  return {};
}

uint64_t wgmmaDescriptorFixedBits(const WgmmaDescriptor& d) {
  const uint64_t field = 0x3FFF;  // each byte offset is 14 bits of (bytes >> 4)
  return (((static_cast<uint64_t>(d.leadingByteOffset) >> 4) & field) << 16) |
         (((static_cast<uint64_t>(d.strideByteOffset) >> 4) & field) << 32) |
         (static_cast<uint64_t>(d.mode) << 62);
}

uint64_t encodeWgmmaDescriptor(const WgmmaDescriptor& d, uint32_t start) {
  return wgmmaDescriptorFixedBits(d) | ((start & kWgmmaStartAddressMask) >> 4);
}

// From the ISA's text alone: the fields, the core-matrix layout and the swizzle
// on address bits.
int64_t wgmmaReadAddress(uint64_t descriptor, int64_t row, int64_t k) {
  const auto field = [&](int lowBit) { return static_cast<int64_t>((descriptor >> lowBit) & 0x3FFF) << 4; };
  const int64_t start = field(0), leading = field(16), stride = field(32);
  const int mode = static_cast<int>(descriptor >> 62);
  const int64_t kByte = k * 2;
  int64_t address = start + (row / 8) * stride;
  if (mode == 0) return address + (row % 8) * 16 + (kByte / 16) * leading + kByte % 16;
  const int xorBits = mode == 1 ? 3 : mode == 2 ? 2 : 1;  // 128 B, 64 B, 32 B
  const int64_t span = int64_t{16} << xorBits;
  address += (row % 8) * span + kByte;
  return address ^ (((address >> 7) & ((int64_t{1} << xorBits) - 1)) << 4);
}

int64_t wgmmaReadAddressMnMajor(uint64_t descriptor, int64_t mn, int64_t k) {
  const auto field = [&](int lowBit) { return static_cast<int64_t>((descriptor >> lowBit) & 0x3FFF) << 4; };
  const int64_t start = field(0), leading = field(16), stride = field(32);
  const int mode = static_cast<int>(descriptor >> 62);
  const int64_t mnByte = mn * 2;
  if (mode == 0) return start + (mnByte / 16) * leading + (k / 8) * stride + (k % 8) * 16 + mnByte % 16;
  const int xorBits = mode == 1 ? 3 : mode == 2 ? 2 : 1;  // 128 B, 64 B, 32 B
  const int64_t span = int64_t{16} << xorBits;
  const int64_t address = start + (mnByte / span) * leading + (k / 8) * stride + (k % 8) * span + mnByte % span;
  return address ^ (((address >> 7) & ((int64_t{1} << xorBits) - 1)) << 4);
}

}  // namespace argus::ir
