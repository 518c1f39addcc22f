// Round-to-nearest encoders of ggml's block-quantised types (layouts in
// quant_blocks.h). They write valid blocks for model files and tests; their
// error is bounded, not minimised.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/quant_blocks.h"

namespace snapstream::kernels {
namespace {

void put_f16(std::byte* p, float value) {
  const uint16_t bits = f32_to_f16(value);
  std::memcpy(p, &bits, 2);
}

uint8_t* bytes_at(std::byte* p) { return reinterpret_cast<uint8_t*>(p); }

int nearest(float value, int low, int high) { return std::clamp(static_cast<int>(std::lround(value)), low, high); }

// The value of largest magnitude, with its sign: symmetric formats map it to
// the most negative code (-8, -16, -32), which has no positive twin, so the
// grid spends every code.
float signed_extreme(const float* x, int n) {
  float extreme = 0.0f;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(extreme)) extreme = x[i];
  return extreme;
}

float inverse_or_zero(float scale) { return scale != 0.0f ? 1.0f / scale : 0.0f; }

void encode_q8_0(const float* x, std::byte* out) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f, inverse = inverse_or_zero(d);
  put_f16(out, d);
  for (int i = 0; i < 32; ++i) {
    const auto q = static_cast<int8_t>(nearest(x[i] * inverse, -127, 127));
    std::memcpy(out + 2 + i, &q, 1);
  }
}

// Q4_0 and Q5_0 share everything but the width: `levels` is 16 or 32.
void encode_symmetric_32(const float* x, int levels, std::byte* out) {
  const int offset = levels / 2;
  const float d = signed_extreme(x, 32) / static_cast<float>(-offset), inverse = inverse_or_zero(d);
  put_f16(out, d);
  uint32_t qh = 0;
  uint8_t* qs = bytes_at(out + (levels == 32 ? 6 : 2));
  for (int j = 0; j < 16; ++j) {
    const int low = nearest(x[j] * inverse + static_cast<float>(offset), 0, levels - 1);
    const int high = nearest(x[j + 16] * inverse + static_cast<float>(offset), 0, levels - 1);
    qs[j] = static_cast<uint8_t>((low & 0x0F) | ((high & 0x0F) << 4));
    qh |= static_cast<uint32_t>(low >> 4) << j;
    qh |= static_cast<uint32_t>(high >> 4) << (j + 16);
  }
  if (levels == 32) std::memcpy(out + 2, &qh, 4);
}

// Q4_K and Q5_K: each sub-block of 32 gets an affine grid from its own range
// (min clipped at zero, as the format subtracts a non-negative min); the eight
// scales and mins are then quantised to six bits against the super-block's d
// and dmin.
void encode_k4_k5(const float* x, int levels, std::byte* out) {
  float sub_scale[8], sub_min[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int s = 0; s < 8; ++s) {
    const float* v = x + 32 * s;
    const float low = std::min(0.0f, *std::min_element(v, v + 32));
    const float high = *std::max_element(v, v + 32);
    sub_scale[s] = (high - low) / static_cast<float>(levels - 1);
    sub_min[s] = -low;
    max_scale = std::max(max_scale, sub_scale[s]);
    max_min = std::max(max_min, sub_min[s]);
  }
  const float d = max_scale / 63.0f, dmin = max_min / 63.0f;
  put_f16(out, d);
  put_f16(out + 2, dmin);
  // The decoder multiplies by the f16-rounded scales, so the codes are chosen
  // against those.
  const float d_stored = f16_to_f32(f32_to_f16(d)), dmin_stored = f16_to_f32(f32_to_f16(dmin));
  uint8_t* scales = bytes_at(out + 4);
  std::memset(scales, 0, 12);
  uint8_t* qh = levels == 32 ? bytes_at(out + 16) : nullptr;
  uint8_t* qs = bytes_at(out + (levels == 32 ? 48 : 16));
  if (qh != nullptr) std::memset(qh, 0, 32);
  std::memset(qs, 0, 128);
  for (int s = 0; s < 8; ++s) {
    const ScaleMin sm{static_cast<uint8_t>(nearest(sub_scale[s] * inverse_or_zero(d_stored), 0, 63)),
                      static_cast<uint8_t>(nearest(sub_min[s] * inverse_or_zero(dmin_stored), 0, 63))};
    k_quant_pack_scale_min(scales, s, sm);
    const float scale = d_stored * sm.scale, min = dmin_stored * sm.min;
    const int chunk = s / 2, half = s % 2;
    for (int l = 0; l < 32; ++l) {
      const int q = nearest((x[32 * s + l] + min) * inverse_or_zero(scale), 0, levels - 1);
      qs[32 * chunk + l] |= static_cast<uint8_t>((q & 0x0F) << (4 * half));
      if (qh != nullptr) qh[l] |= static_cast<uint8_t>((q >> 4) << s);
    }
  }
}

// Q6_K: sixteen sub-blocks of 16 with symmetric 6-bit grids, their scales
// quantised to int8 against d.
void encode_q6_k(const float* x, std::byte* out) {
  float sub_scale[16];
  float max_scale = 0.0f;
  for (int s = 0; s < 16; ++s) {
    sub_scale[s] = signed_extreme(x + 16 * s, 16) / -32.0f;
    max_scale = std::max(max_scale, std::fabs(sub_scale[s]));
  }
  const float d = max_scale / 127.0f;
  put_f16(out + 208, d);
  const float d_stored = f16_to_f32(f32_to_f16(d));
  uint8_t* ql = bytes_at(out);
  uint8_t* qh = bytes_at(out + 128);
  auto* scales = reinterpret_cast<int8_t*>(out + 192);
  std::memset(ql, 0, 192);
  for (int s = 0; s < 16; ++s) scales[s] = static_cast<int8_t>(nearest(sub_scale[s] * inverse_or_zero(d_stored), -128, 127));
  for (int i = 0; i < 256; ++i) {
    const float scale = d_stored * static_cast<float>(scales[i / 16]);
    const int q = nearest(x[i] * inverse_or_zero(scale) + 32.0f, 0, 63);
    // Value i lies in half i/128; within it, byte l = i % 32 and part (i % 128)
    // / 32 (see the decoder): parts 0 and 1 take low nibbles of ql[l] and
    // ql[l+32], parts 2 and 3 high ones.
    const int half = i / 128, part = (i % 128) / 32, l = i % 32;
    uint8_t& low_byte = ql[64 * half + l + 32 * (part % 2)];
    low_byte |= static_cast<uint8_t>((q & 0x0F) << (4 * (part / 2)));
    qh[32 * half + l] |= static_cast<uint8_t>((q >> 4) << (2 * part));
  }
}

}  // namespace

void k_quant_pack_scale_min(uint8_t* scales, int j, ScaleMin value) {
  if (j < 4) {
    scales[j] = static_cast<uint8_t>((scales[j] & 0xC0) | (value.scale & 63));
    scales[j + 4] = static_cast<uint8_t>((scales[j + 4] & 0xC0) | (value.min & 63));
    return;
  }
  scales[j + 4] = static_cast<uint8_t>((value.scale & 0x0F) | ((value.min & 0x0F) << 4));
  scales[j - 4] = static_cast<uint8_t>((scales[j - 4] & 63) | ((value.scale >> 4) << 6));
  scales[j] = static_cast<uint8_t>((scales[j] & 63) | ((value.min >> 4) << 6));
}

void quantize_block(DType dtype, const float* values, std::byte* out) {
  switch (dtype) {
    case DType::Q8_0: return encode_q8_0(values, out);
    case DType::Q4_0: return encode_symmetric_32(values, 16, out);
    case DType::Q5_0: return encode_symmetric_32(values, 32, out);
    case DType::Q4_K: return encode_k4_k5(values, 16, out);
    case DType::Q5_K: return encode_k4_k5(values, 32, out);
    case DType::Q6_K: return encode_q6_k(values, out);
    case DType::F32:
    case DType::F16:
    case DType::BF16: break;
  }
}

}  // namespace snapstream::kernels
