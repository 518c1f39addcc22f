// The scalar parts every variant of the integer dot products shares: where each block keeps its
// fields, and the float arithmetic that turns a block's integer sums into its share of the
// result (so every variant rounds alike). Only the integer_dots_*.cpp files include this. The
// functions are static: each variant compiles its own copy with its own instruction set, so the
// linker can never hand the portable variant an AVX-encoded copy.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dtype.h"

namespace snapstream::kernels::cpu::integer_blocks {

// Bytes per block and field offsets (layouts in kernels/quant_blocks.h).
inline constexpr int64_t kQ8_0Bytes = 34, kQ4_0Bytes = 18, kQ5_0Bytes = 22;
inline constexpr int64_t kQ4_KBytes = 144, kQ5_KBytes = 176, kQ6_KBytes = 210;
inline constexpr int64_t kKScales = 4, kQ4_KQs = 16, kQ5_KQh = 16, kQ5_KQs = 48;
inline constexpr int64_t kQ6_KQh = 128, kQ6_KScales = 192, kQ6_KScale = 208;

static inline float stored_f16(const std::byte* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return f16_to_f32(bits);
}

static inline const uint8_t* bytes(const std::byte* p) { return reinterpret_cast<const uint8_t*>(p); }

// The 6-bit scales and mins of the eight sub-blocks of a Q4_K/Q5_K block.
static inline void unpack_k_scales(const uint8_t* packed, uint8_t scale[8], uint8_t min[8]) {
  for (int j = 0; j < 4; ++j) {
    scale[j] = packed[j] & 63;
    min[j] = packed[j + 4] & 63;
    scale[j + 4] = static_cast<uint8_t>((packed[j + 8] & 0x0F) | ((packed[j] >> 6) << 4));
    min[j + 4] = static_cast<uint8_t>((packed[j + 8] >> 4) | ((packed[j + 4] >> 6) << 4));
  }
}

// A K-quant block's share: d·a·scaled − dmin·a·mins, a being the activations' block scale.
static inline float k_block_share(float d, float dmin, float a, int32_t scaled, int32_t mins) {
  return d * a * static_cast<float>(scaled) - dmin * a * static_cast<float>(mins);
}

// Eight float lanes summed in the order of the 256-bit horizontal sum: halves, pairs, then one.
static inline float sum_lanes(const float lanes[8]) {
  const float quad[4] = {lanes[0] + lanes[4], lanes[1] + lanes[5], lanes[2] + lanes[6], lanes[3] + lanes[7]};
  const float pair0 = quad[0] + quad[2], pair1 = quad[1] + quad[3];
  return pair0 + pair1;
}

}  // namespace snapstream::kernels::cpu::integer_blocks
