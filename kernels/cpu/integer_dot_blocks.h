// The scalar parts every variant of the integer dot products shares: where each block keeps its
// fields, and the float arithmetic that turns a block's integer sums into its share of the
// result (so every variant rounds alike). Only the integer_dots_*.cpp files include this. The
// functions are static: each variant compiles its own copy with its own instruction set, so the
// linker can never hand the portable variant an AVX-encoded copy.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/integer_dots.h"
#include "kernels/dtype.h"

namespace snapstream::kernels::cpu::integer_blocks {

// Activation rows one per-row tile keeps accumulators for.
inline constexpr int kTileRows = 8;
// Quantised activation bytes a band takes through its weight rows at a time, so they stay in L1
// while the weights stream past (prefill's 512 rows would not fit).
inline constexpr int64_t kChunkBytes = 8 * 1024;

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

// A Q8_0/Q4_0/Q5_0 block's step: the running total plus the block's integer sum times the two
// block scales (ggml's reference order: the scales multiply first).
static inline float q8_block_step(float total, float d, float a, int32_t sum) {
  return total + static_cast<float>(sum) * (d * a);
}

// A band one weight row at a time: each row meets the activation rows in tiles of up to
// kTileRows, chunk by chunk. RowTile(w_row, blocks, x, m, out, out_stride) writes
// out[j * out_stride] for j < m.
template <typename RowTile>
static inline void band_by_rows(RowTile tile, const std::byte* w, int64_t row_stride, int64_t rows, int64_t blocks,
                                int64_t block_values, const QuantisedRowView* x, int64_t m, float* y, int64_t y_stride) {
  const int64_t chunk = std::max<int64_t>(kTileRows, kChunkBytes / (blocks * block_values) / kTileRows * kTileRows);
  for (int64_t first = 0; first < m; first += chunk) {
    const int64_t last = std::min(m, first + chunk);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = first; i < last; i += kTileRows)
        tile(w + r * row_stride, blocks, x + i, static_cast<int>(std::min<int64_t>(kTileRows, last - i)),
             y + i * y_stride + r, y_stride);
  }
}

}  // namespace snapstream::kernels::cpu::integer_blocks
