// NumPy's .npy files (format versions 1.0, 2.0 and 3.0) for `argusc run --cpu`:
// reading a kernel's inputs, writing its outputs.
//
// Reading converts a file into a tensor of the kernel parameter's dtype. The
// file's dtype must be the tensor's (f32 <- float32, i64 <- int64, bool <- bool,
// ...), with two conventions for the types numpy lacks:
//   bf16            <- float32 (rounded to nearest even) or uint16 (the raw bf16 bits,
//                      e.g. torch's t.view(torch.uint16).numpy())
//   f8e4m3, f8e5m2  <- float32 (rounded to nearest even, saturating) or uint8 (raw bits)
// Big-endian files and Fortran order are accepted (converted to the tensor's
// little-endian, row-major layout).
// Writing: every dtype as itself, except bf16 and the f8 types, written as
// float32 (every value of theirs is exactly a float32).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/types.h"
#include "runtime/interp/host_tensor.h"

namespace argus::interp {

struct NpyArray {
  char kind = 'f';    // numpy's kind: 'f' float, 'i' signed, 'u' unsigned, 'b' bool
  int itemBytes = 4;  // bytes per element
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // little-endian, row-major (C order), whatever the file's order

  std::string typeName() const;  // numpy's name: "float32", "uint16", "bool"
};

// Parses the bytes of a .npy file; false with `error` set ("not a .npy file ...",
// "holds complex128 ...", "is truncated ...").
bool parseNpy(const std::string& bytes, NpyArray& out, std::string& error);

// Converts `array` to a tensor of `dtype` by the conventions above; false with
// `error` set when the file's type does not match (the message says how to save
// it so that it does). The shape is not checked here.
bool npyToTensor(const NpyArray& array, ir::DType dtype, HostTensor& out, std::string& error);

// The .npy file (version 1.0) holding `t`.
std::string tensorToNpy(const HostTensor& t);

// numpy's name of the type a tensor of `dtype` is written as ("float32" for bf16).
std::string npyTypeNameFor(ir::DType dtype);

}  // namespace argus::interp
