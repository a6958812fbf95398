// Kernel arguments packed for cuLaunchKernel: each argument's bytes stored at
// its alignment in one buffer, plus the array of pointers to them that the
// driver reads (kernelParams). The buffer itself is 64-byte aligned, so an
// argument's offset alignment is also its address alignment (a CUtensorMap
// must sit at a 64-byte aligned address).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace argus::gpu {

namespace cu {
struct TensorMap;
}

// operator new with an explicit alignment, for std::vector.
template <typename T, size_t Alignment>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U, Alignment>&) {}
  template <typename U>
  struct rebind {
    using other = AlignedAllocator<U, Alignment>;
  };
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(Alignment))); }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(Alignment)); }
  template <typename U>
  bool operator==(const AlignedAllocator<U, Alignment>&) const { return true; }
};

class KernelArgs {
 public:
  static constexpr size_t kMaxAlignment = 64;

  void addPointer(uint64_t deviceAddress) { addBytes(&deviceAddress, sizeof deviceAddress, 8); }
  void addI32(int32_t v) { addBytes(&v, sizeof v, 4); }
  void addI64(int64_t v) { addBytes(&v, sizeof v, 8); }
  void addF32(float v) { addBytes(&v, sizeof v, 4); }
  void addF64(double v) { addBytes(&v, sizeof v, 8); }
  // A TMA descriptor: 128 bytes at a 64-byte aligned address.
  void addTensorMap(const cu::TensorMap& map);
  // Raw little-endian bytes of one argument at `alignment` (a power of two up
  // to kMaxAlignment; scalars use their size).
  void addBytes(const void* data, size_t size, size_t alignment);

  size_t count() const { return offsets_.size(); }
  size_t offset(size_t i) const { return offsets_[i]; }
  using Storage = std::vector<uint8_t, AlignedAllocator<uint8_t, kMaxAlignment>>;
  const Storage& storage() const { return storage_; }
  // The kernelParams array; valid until the next add.
  void** pointers();

 private:
  Storage storage_;
  std::vector<size_t> offsets_;
  std::vector<void*> pointers_;
};

}  // namespace argus::gpu
