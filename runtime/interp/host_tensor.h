// A tensor in host memory holding the exact bit patterns of its dtype
// (row-major, contiguous, little-endian; bool is one byte 0/1).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/types.h"

namespace argus::interp {

struct HostTensor {
  ir::DType dtype = ir::DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  // Element i (row-major) as a double (u64/i64 beyond 2^53 lose precision: use getInt).
  double get(size_t i) const;
  // Stores v rounded to the dtype (floats to nearest even; integers truncate
  // toward zero and saturate; bool: v != 0).
  void set(size_t i, double v);
  int64_t getInt(size_t i) const;  // integers exactly (u64 as its bit pattern)
  void setInt(size_t i, int64_t v);  // wraps to the dtype
  uint64_t getBits(size_t i) const;
  void setBits(size_t i, uint64_t bits);

  size_t size() const;  // number of elements
  size_t elementBytes() const;
  static HostTensor zeros(ir::DType dtype, std::vector<int64_t> shape);
};

}  // namespace argus::interp
