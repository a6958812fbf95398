#include "runtime/interp/host_tensor.h"

#include "runtime/interp/numeric.h"

namespace argus::interp {

size_t HostTensor::elementBytes() const { return static_cast<size_t>(num::storageBytes(dtype)); }

size_t HostTensor::size() const {
  size_t n = 1;
  for (int64_t e : shape) n *= e > 0 ? static_cast<size_t>(e) : 0;
  return n;
}

uint64_t HostTensor::getBits(size_t i) const {
  size_t width = elementBytes();
  if ((i + 1) * width > bytes.size()) return 0;
  uint64_t bits = 0;
  for (size_t b = 0; b < width; ++b) bits |= static_cast<uint64_t>(bytes[i * width + b]) << (8 * b);
  return bits;
}

void HostTensor::setBits(size_t i, uint64_t bits) {
  size_t width = elementBytes();
  if ((i + 1) * width > bytes.size()) return;
  for (size_t b = 0; b < width; ++b) bytes[i * width + b] = static_cast<uint8_t>(bits >> (8 * b));
}

double HostTensor::get(size_t i) const { return num::toDouble(dtype, num::decode(dtype, getBits(i))); }

void HostTensor::set(size_t i, double v) { setBits(i, num::encode(dtype, num::fromDouble(dtype, v))); }

int64_t HostTensor::getInt(size_t i) const {
  Elem e = num::decode(dtype, getBits(i));
  return ir::isFloat(dtype) ? num::cast(dtype, ir::DType::I64, e).i : e.i;
}

void HostTensor::setInt(size_t i, int64_t v) {
  Elem e;
  e.i = v;
  setBits(i, num::encode(dtype, num::cast(ir::DType::I64, dtype, e)));
}

HostTensor HostTensor::zeros(ir::DType dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(t.size() * t.elementBytes(), 0);
  return t;
}

}  // namespace argus::interp
