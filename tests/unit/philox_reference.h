// A plain C++ Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC'11) and Triton's mapping of its words to floats, as the reference for
// rand/randint/randint4x. Checked against Random123's known answers in
// interp_random_test.cpp before anything is compared with it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

namespace argus::testing {

inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t{0xD2511F53} * c[0], p2 = uint64_t{0xCD9E8D57} * c[2];
    c = {static_cast<uint32_t>(p2 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p2),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    k = {k[0] + 0x9E3779B9u, k[1] + 0xBB67AE85u};
  }
  return c;
}

// Triton's tl.randint4x(seed, offset): counter (offset, 0, 0, 0), key (seed low, seed high).
inline std::array<uint32_t, 4> tritonRandint4x(int64_t seed, uint32_t offset) {
  uint64_t s = static_cast<uint64_t>(seed);
  return philox4x32_10({offset, 0, 0, 0}, {static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32)});
}

// Triton's uint_to_uniform_float for 32-bit words: in [0, 1).
inline float tritonUniform(uint32_t word) {
  int32_t x;
  std::memcpy(&x, &word, sizeof x);
  if (x < 0) x = ~x;  // -x - 1
  return static_cast<float>(x) * 4.6566127342e-10f;
}

}  // namespace argus::testing
