// One block of each ggml block-quantised type, decoded to or encoded from f32.
// Layouts, all little-endian, with d and dmin f16 scales:
//   Q8_0 (32 values, 34 B):   d, int8 q[32]                                      x = d·q
//   Q4_0 (32 values, 18 B):   d, qs[16]: value j in the low nibble of qs[j],
//                             j+16 in the high nibble                             x = d·(q − 8)
//   Q5_0 (32 values, 22 B):   d, u32 qh, qs[16] as Q4_0; bit j of qh is value
//                             j's fifth bit                                       x = d·(q − 16)
//   Q4_K (256 values, 144 B): d, dmin, scales[12], qs[128]: eight sub-blocks of
//                             32, each with a 6-bit scale s and min m packed in
//                             `scales` (k_quant_scale_min); 64 values per 32
//                             bytes of qs, low nibbles first                      x = d·s·q − dmin·m
//   Q5_K (256 values, 176 B): as Q4_K with qh[32] before qs: bit 2i (low
//                             nibbles) or 2i+1 (high) of qh[l] is the fifth bit
//                             of byte l's values in the i-th 64
//   Q6_K (256 values, 210 B): ql[128], qh[64], int8 scales[16], d: sixteen
//                             sub-blocks of 16 with one int8 scale each; 6-bit
//                             q from a nibble of ql and two bits of qh            x = d·s·(q − 32)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dtype.h"

namespace snapstream::kernels {

// The f16 scale stored at `p`, which need not be aligned.
inline float block_scale_at(const std::byte* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return f16_to_f32(bits);
}

// Writes block_layout(dtype).elements floats. dtype must be block-quantised.
void dequantize_block(DType dtype, const std::byte* block, float* out);

// Writes block_layout(dtype).bytes bytes: a simple round-to-nearest encoder
// (scales from each sub-block's range), not llama.cpp's error-minimising
// search.
void quantize_block(DType dtype, const float* values, std::byte* out);

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block:
// sub-blocks 0-3 keep theirs in the low six bits of bytes j and j+4; 4-7 in the
// nibbles of byte j+4, with the top two bits in the spare high bits of bytes
// j-4 (scale) and j (min).
struct ScaleMin {
  uint8_t scale;
  uint8_t min;
};
// Inline: the K-quant dot products read it for every sub-block.
inline ScaleMin k_quant_scale_min(const uint8_t* scales, int j) {
  if (j < 4) return {static_cast<uint8_t>(scales[j] & 63), static_cast<uint8_t>(scales[j + 4] & 63)};
  return {static_cast<uint8_t>((scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4)),
          static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4))};
}
void k_quant_pack_scale_min(uint8_t* scales, int j, ScaleMin value);

}  // namespace snapstream::kernels
