// TMA tensor maps: planning and encoding (see tensor_map.h).
#include "tensor_map.h"

#include <cstring>

namespace argus::gpu {
namespace {

constexpr size_t kMaxRank = 5;
constexpr uint64_t kMaxGlobalDim = 1ull << 32;
constexpr uint64_t kMaxGlobalStride = 1ull << 40;
constexpr int64_t kMaxBoxDim = 256;
constexpr uint64_t kAlignment = 16;

// "K=100" for a named size, "100" for a constant extent.
std::string dimText(const TensorMapTarget& t, size_t d) {
  std::string value = std::to_string(t.shape[d]);
  return d < t.dimNames.size() && !t.dimNames[d].empty() ? t.dimNames[d] + "=" + value : value;
}

std::string hex(uint64_t v) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[v % 16]);
    v /= 16;
  } while (v);
  return "0x" + out;
}

}  // namespace

int tensorMapDataType(const HostDType& dtype) {
  struct Entry { const char* name; int type; };
  // TMA moves bytes and fills with zero bits, so the 8-bit floats travel as u8
  // and signed 8/16-bit integers as their unsigned counterparts.
  static const Entry kTable[] = {
      {"bool", cu::kTensorMapUint8},    {"i8", cu::kTensorMapUint8},       {"u8", cu::kTensorMapUint8},
      {"f8e4m3", cu::kTensorMapUint8},  {"f8e5m2", cu::kTensorMapUint8},   {"i16", cu::kTensorMapUint16},
      {"u16", cu::kTensorMapUint16},    {"i32", cu::kTensorMapInt32},      {"u32", cu::kTensorMapUint32},
      {"i64", cu::kTensorMapInt64},     {"u64", cu::kTensorMapUint64},     {"f16", cu::kTensorMapFloat16},
      {"bf16", cu::kTensorMapBfloat16}, {"f32", cu::kTensorMapFloat32},    {"f64", cu::kTensorMapFloat64},
  };
  for (const Entry& e : kTable)
    if (dtype.name == e.name) return e.type;
  return -1;
}

int tensorMapSwizzle(int swizzleBytes) {
  switch (swizzleBytes) {
    case 0: return cu::kTensorMapSwizzleNone;
    case 32: return cu::kTensorMapSwizzle32B;
    case 64: return cu::kTensorMapSwizzle64B;
    case 128: return cu::kTensorMapSwizzle128B;
    default: return -1;
  }
}

bool planTensorMap(const TensorMapTarget& target, const std::vector<int64_t>& box, int swizzleBytes,
                   TensorMapEncoding& out, std::string& error) {
  out = TensorMapEncoding{};
  const std::string tensor = "tensor '" + target.tensorName + "'";
  const size_t rank = target.shape.size();
  if (rank == 0 || rank > kMaxRank) {
    error = tensor + " has " + std::to_string(rank) + " dimensions; TMA copies tensors of 1 to 5 dimensions";
    return false;
  }
  if (box.size() != rank) {
    error = tensor + ": the kernel's tensor map has a box of " + std::to_string(box.size()) +
            " dimensions for a tensor of " + std::to_string(rank) + " (the metadata does not match the tensor)";
    return false;
  }
  out.dataType = tensorMapDataType(target.dtype);
  if (out.dataType < 0) {
    error = tensor + " has element type " + target.dtype.name + ", which TMA cannot copy";
    return false;
  }
  out.swizzle = tensorMapSwizzle(swizzleBytes);
  if (out.swizzle < 0) {
    error = tensor + ": the kernel's tensor map asks for a " + std::to_string(swizzleBytes) +
            "-byte swizzle; TMA swizzles 32, 64 or 128 bytes";
    return false;
  }
  const uint64_t elementBytes = static_cast<uint64_t>(target.dtype.bytes);
  for (size_t d = 0; d < rank; ++d) {
    if (target.shape[d] < 1) {
      error = tensor + " has an empty dimension (" + dimText(target, d) +
              "); a kernel that copies it with TMA needs every extent to be at least 1";
      return false;
    }
    if (static_cast<uint64_t>(target.shape[d]) > kMaxGlobalDim) {
      error = tensor + ": dimension " + std::to_string(d) + " (" + dimText(target, d) +
              ") is larger than TMA's limit of 2^32 elements";
      return false;
    }
  }
  if (target.address % kAlignment != 0) {
    error = tensor + " starts at address " + hex(target.address) +
            ", which is not 16-byte aligned; TMA needs 16-byte aligned tensors (pass a tensor that "
            "starts at an aligned address, e.g. a fresh .contiguous() copy instead of a slice)";
    return false;
  }
  out.globalAddress = target.address;
  // Innermost first, as cuTensorMapEncodeTiled takes them.
  for (size_t d = rank; d-- > 0;) {
    out.globalDims.push_back(static_cast<uint64_t>(target.shape[d]));
    out.boxDims.push_back(0);
    out.elementStrides.push_back(1);
  }
  uint64_t stride = elementBytes;
  for (size_t i = 1; i < rank; ++i) {
    const size_t inner = rank - i;  // the dimension (outermost first) whose extent the stride spans
    if (__builtin_mul_overflow(stride, out.globalDims[i - 1], &stride)) stride = kMaxGlobalStride;
    if (stride % kAlignment != 0) {
      const std::string& name = inner < target.dimNames.size() ? target.dimNames[inner] : std::string();
      const uint64_t multiple = kAlignment / elementBytes;
      if (i == 1)
        error = tensor + ": its row of " + dimText(target, inner) + " " + target.dtype.name + " elements is " +
                std::to_string(stride) + " bytes; TMA needs rows that are a multiple of 16 bytes (" +
                (name.empty() ? "a multiple of " + std::to_string(multiple) + " elements"
                              : name + " a multiple of " + std::to_string(multiple)) +
                ")";
      else
        error = tensor + ": the stride of its dimension " + std::to_string(inner - 1) + " is " +
                std::to_string(stride) + " bytes; TMA needs strides that are a multiple of 16 bytes";
      return false;
    }
    if (stride >= kMaxGlobalStride) {
      error = tensor + " is too large for TMA: the stride of its dimension " + std::to_string(inner - 1) + " is " +
              std::to_string(stride) + " bytes (TMA's limit is 2^40)";
      return false;
    }
    out.globalStrides.push_back(stride);
  }
  for (size_t d = 0; d < rank; ++d) {
    if (box[d] < 1 || box[d] > kMaxBoxDim) {
      error = tensor + ": the kernel copies tiles of " + std::to_string(box[d]) + " elements along dimension " +
              std::to_string(d) + "; TMA copies 1 to 256 elements per dimension";
      return false;
    }
    out.boxDims[rank - 1 - d] = static_cast<uint32_t>(box[d]);
  }
  const uint64_t innerBoxBytes = out.boxDims[0] * elementBytes;
  if (innerBoxBytes % kAlignment != 0) {
    error = tensor + ": the kernel copies tiles whose rows are " + std::to_string(out.boxDims[0]) + " " +
            target.dtype.name + " elements (" + std::to_string(innerBoxBytes) +
            " bytes); TMA needs tile rows that are a multiple of 16 bytes";
    return false;
  }
  if (swizzleBytes > 0 && innerBoxBytes > static_cast<uint64_t>(swizzleBytes)) {
    error = tensor + ": the kernel copies tiles whose rows are " + std::to_string(innerBoxBytes) +
            " bytes into a " + std::to_string(swizzleBytes) + "-byte swizzled buffer; TMA needs tile rows of at most " +
            std::to_string(swizzleBytes) + " bytes there";
    return false;
  }
  return true;
}

bool encodeTensorMap(const CudaApi& api, const TensorMapEncoding& e, cu::TensorMap& map, std::string& error) {
  if (!api.tensorMapEncodeTiled) {
    error = "the NVIDIA driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver or newer)";
    return false;
  }
  std::memset(&map, 0, sizeof map);
  cu::Result r = api.tensorMapEncodeTiled(&map, e.dataType, static_cast<uint32_t>(e.globalDims.size()),
                                          reinterpret_cast<void*>(static_cast<uintptr_t>(e.globalAddress)),
                                          e.globalDims.data(), e.globalStrides.data(), e.boxDims.data(),
                                          e.elementStrides.data(), e.interleave, e.swizzle, e.l2Promotion,
                                          e.oobFill);
  return api.check(r, "cuTensorMapEncodeTiled failed", error);
}

}  // namespace argus::gpu
