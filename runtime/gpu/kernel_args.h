// Kernel arguments packed for cuLaunchKernel: each argument's bytes stored at
// its natural alignment in one buffer, plus the array of pointers to them that
// the driver reads (kernelParams).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace argus::gpu {

class KernelArgs {
 public:
  void addPointer(uint64_t deviceAddress) { addBytes(&deviceAddress, sizeof deviceAddress, 8); }
  void addI32(int32_t v) { addBytes(&v, sizeof v, 4); }
  void addI64(int64_t v) { addBytes(&v, sizeof v, 8); }
  void addF32(float v) { addBytes(&v, sizeof v, 4); }
  void addF64(double v) { addBytes(&v, sizeof v, 8); }
  // Raw little-endian bytes of one argument (1, 2, 4 or 8 bytes: alignment = size).
  void addBytes(const void* data, size_t size, size_t alignment);

  size_t count() const { return offsets_.size(); }
  size_t offset(size_t i) const { return offsets_[i]; }
  const std::vector<uint8_t>& storage() const { return storage_; }
  // The kernelParams array; valid until the next add.
  void** pointers();

 private:
  std::vector<uint8_t> storage_;
  std::vector<size_t> offsets_;
  std::vector<void*> pointers_;
};

}  // namespace argus::gpu
