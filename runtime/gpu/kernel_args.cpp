#include "kernel_args.h"

#include <cstring>

#include "cuda_api.h"

namespace argus::gpu {

void KernelArgs::addBytes(const void* data, size_t size, size_t alignment) {
  if (alignment == 0) alignment = 1;
  if (alignment > kMaxAlignment) alignment = kMaxAlignment;
  size_t offset = (storage_.size() + alignment - 1) / alignment * alignment;
  storage_.resize(offset + size);
  std::memcpy(storage_.data() + offset, data, size);
  offsets_.push_back(offset);
}

void KernelArgs::addTensorMap(const cu::TensorMap& map) { addBytes(&map, sizeof map, alignof(cu::TensorMap)); }

void** KernelArgs::pointers() {
  // Built on demand: storage_ may have moved while arguments were added.
  pointers_.clear();
  for (size_t offset : offsets_) pointers_.push_back(storage_.data() + offset);
  return pointers_.empty() ? nullptr : pointers_.data();
}

}  // namespace argus::gpu
