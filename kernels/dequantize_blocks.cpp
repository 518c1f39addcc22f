// Scalar decoders of ggml's block-quantised types (layouts in quant_blocks.h).
#include <cstring>

#include "kernels/quant_blocks.h"

namespace snapstream::kernels {
namespace {

const uint8_t* bytes_at(const std::byte* p) { return reinterpret_cast<const uint8_t*>(p); }

void decode_q8_0(const std::byte* block, float* out) {
  const float d = block_scale_at(block);
  const auto* q = reinterpret_cast<const int8_t*>(block + 2);
  for (int i = 0; i < 32; ++i) out[i] = d * static_cast<float>(q[i]);
}

void decode_q4_0(const std::byte* block, float* out) {
  const float d = block_scale_at(block);
  const uint8_t* qs = bytes_at(block + 2);
  for (int j = 0; j < 16; ++j) {
    out[j] = d * static_cast<float>((qs[j] & 0x0F) - 8);
    out[j + 16] = d * static_cast<float>((qs[j] >> 4) - 8);
  }
}

void decode_q5_0(const std::byte* block, float* out) {
  const float d = block_scale_at(block);
  uint32_t qh;
  std::memcpy(&qh, block + 2, 4);
  const uint8_t* qs = bytes_at(block + 6);
  for (int j = 0; j < 16; ++j) {
    const int low = (qs[j] & 0x0F) | static_cast<int>(((qh >> j) & 1u) << 4);
    const int high = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
    out[j] = d * static_cast<float>(low - 16);
    out[j + 16] = d * static_cast<float>(high - 16);
  }
}

// Q4_K and Q5_K differ only in the fifth bit, which Q5_K keeps in qh (null for
// Q4_K).
void decode_k4_k5(const std::byte* block, const uint8_t* qh, const uint8_t* qs, float* out) {
  const float d = block_scale_at(block);
  const float dmin = block_scale_at(block + 2);
  const uint8_t* scales = bytes_at(block + 4);
  for (int chunk = 0; chunk < 4; ++chunk) {
    const uint8_t* q = qs + 32 * chunk;
    for (int half = 0; half < 2; ++half) {
      const ScaleMin sm = k_quant_scale_min(scales, 2 * chunk + half);
      const float scale = d * sm.scale, min = dmin * sm.min;
      const int shift = 4 * half, high_bit = 2 * chunk + half;
      float* y = out + 64 * chunk + 32 * half;
      for (int l = 0; l < 32; ++l) {
        int value = (q[l] >> shift) & 0x0F;
        if (qh != nullptr) value |= ((qh[l] >> high_bit) & 1) << 4;
        y[l] = scale * static_cast<float>(value) - min;
      }
    }
  }
}

void decode_q6_k(const std::byte* block, float* out) {
  const uint8_t* ql = bytes_at(block);
  const uint8_t* qh = bytes_at(block + 128);
  const auto* scales = reinterpret_cast<const int8_t*>(block + 192);
  const float d = block_scale_at(block + 208);
  // Each half of 128 values takes 64 bytes of ql, 32 of qh and 8 scales: byte l
  // of the half gives values l, l+32, l+64 and l+96 their low nibbles (ql[l],
  // ql[l+32], then their high nibbles) and their top two bits (qh[l] bits 0-1,
  // 2-3, 4-5, 6-7).
  for (int half = 0; half < 2; ++half) {
    const uint8_t* lo = ql + 64 * half;
    const uint8_t* hi = qh + 32 * half;
    const int8_t* sc = scales + 8 * half;
    float* y = out + 128 * half;
    for (int l = 0; l < 32; ++l) {
      const int sub_block = l / 16;  // of 16 values; parts step two sub-blocks on
      const int q[4] = {(lo[l] & 0x0F) | ((hi[l] & 0x03) << 4), (lo[l + 32] & 0x0F) | (((hi[l] >> 2) & 0x03) << 4),
                        (lo[l] >> 4) | (((hi[l] >> 4) & 0x03) << 4), (lo[l + 32] >> 4) | (((hi[l] >> 6) & 0x03) << 4)};
      for (int part = 0; part < 4; ++part)
        y[l + 32 * part] = d * static_cast<float>(sc[sub_block + 2 * part]) * static_cast<float>(q[part] - 32);
    }
  }
}

}  // namespace

void dequantize_block(DType dtype, const std::byte* block, float* out) {
  switch (dtype) {
    case DType::Q8_0: return decode_q8_0(block, out);
    case DType::Q4_0: return decode_q4_0(block, out);
    case DType::Q5_0: return decode_q5_0(block, out);
    case DType::Q4_K: return decode_k4_k5(block, nullptr, bytes_at(block + 16), out);
    case DType::Q5_K: return decode_k4_k5(block, bytes_at(block + 16), bytes_at(block + 48), out);
    case DType::Q6_K: return decode_q6_k(block, out);
    case DType::F32:
    case DType::F16:
    case DType::BF16: break;
  }
}

}  // namespace snapstream::kernels
