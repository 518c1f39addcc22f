// The portable integer dot products: plain loops that define the results every SIMD variant
// reproduces bit for bit (the integer sums are exact; the float steps are the same operations in
// the same order: one per block for the 32-value blocks, whatever register holds the sums).
#include <algorithm>
#include <cmath>

#include "kernels/cpu/integer_dot_blocks.h"
#include "kernels/cpu/integer_dots.h"

namespace snapstream::kernels::cpu {
namespace {

using namespace integer_blocks;

// Q8_0, Q4_0 and Q5_0 blocks as 32 signed weights and their scale.
void signed_q8_0(const std::byte* block, int8_t w[32]) { std::memcpy(w, block + 2, 32); }

void signed_q4_0(const std::byte* block, int8_t w[32]) {
  const uint8_t* qs = bytes(block + 2);
  for (int j = 0; j < 16; ++j) {
    w[j] = static_cast<int8_t>((qs[j] & 0x0F) - 8);
    w[j + 16] = static_cast<int8_t>((qs[j] >> 4) - 8);
  }
}

void signed_q5_0(const std::byte* block, int8_t w[32]) {
  uint32_t qh;
  std::memcpy(&qh, block + 2, 4);
  const uint8_t* qs = bytes(block + 6);
  for (int j = 0; j < 16; ++j) {
    w[j] = static_cast<int8_t>(((qs[j] & 0x0F) | (((qh >> j) & 1u) << 4)) - 16);
    w[j + 16] = static_cast<int8_t>(((qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4)) - 16);
  }
}

// Each block's integer sum, times the two block scales, added to the row's total block by block.
template <void (*Signed)(const std::byte*, int8_t*), int64_t BlockBytes>
void q8_family_dots(const std::byte* w, int64_t blocks, const QuantisedRowView* x, int m, float* out,
                    int64_t out_stride) {
  float totals[kTileRows] = {};
  int8_t weights[32];
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * BlockBytes;
    Signed(block, weights);
    const float d = stored_f16(block);
    for (int j = 0; j < m; ++j) {
      const int8_t* a = x[j].q + 32 * b;
      int32_t sum = 0;
      for (int k = 0; k < 32; ++k) sum += weights[k] * a[k];
      totals[j] = q8_block_step(totals[j], d, x[j].scales[b], sum);
    }
  }
  for (int j = 0; j < m; ++j) out[j * out_stride] = totals[j];
}

// Σ_j min_j · (sum of the activations of sub-block j), sub-blocks of 32 from sums of 16.
int32_t k_mins_sum(const uint8_t min[8], const int16_t* sums16) {
  int32_t total = 0;
  for (int j = 0; j < 8; ++j) total += min[j] * (sums16[2 * j] + sums16[2 * j + 1]);
  return total;
}

// Q6_K's values are stored with +32; Σ_j 32 · scale_j · (sum of sub-block j's activations) takes it back.
int32_t q6_k_offset_sum(const int8_t* scales, const int16_t* sums16) {
  int32_t total = 0;
  for (int j = 0; j < 16; ++j) total += 32 * scales[j] * sums16[j];
  return total;
}

// Σ_s scale_s · Σ_{l in sub-block s} values_l · a_l over `count` sub-blocks of `length` values.
template <typename Scale>
int32_t scaled_sum(const uint8_t* values, const int8_t* a, const Scale* scales, int count, int length) {
  int32_t total = 0;
  for (int s = 0; s < count; ++s) {
    int32_t sum = 0;
    for (int l = length * s; l < length * (s + 1); ++l) sum += values[l] * a[l];
    total += scales[s] * sum;
  }
  return total;
}

// Q4_K and Q5_K: unsigned 4- or 5-bit values, eight sub-blocks of 32 with a scale and a min.
template <bool FifthBit>
void q45_k_dots(const std::byte* w, int64_t blocks, const QuantisedRowView* x, int m, float* out,
                int64_t out_stride) {
  const int64_t block_bytes = FifthBit ? kQ5_KBytes : kQ4_KBytes;
  float totals[kTileRows] = {};
  uint8_t values[256];
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * block_bytes;
    const uint8_t* qs = bytes(block + (FifthBit ? kQ5_KQs : kQ4_KQs));
    const uint8_t* qh = bytes(block + kQ5_KQh);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) {
        values[64 * c + l] = qs[32 * c + l] & 0x0F;
        values[64 * c + 32 + l] = qs[32 * c + l] >> 4;
        if (FifthBit) {
          values[64 * c + l] |= static_cast<uint8_t>(((qh[l] >> (2 * c)) & 1) << 4);
          values[64 * c + 32 + l] |= static_cast<uint8_t>(((qh[l] >> (2 * c + 1)) & 1) << 4);
        }
      }
    uint8_t scale[8], min[8];
    unpack_k_scales(bytes(block + kKScales), scale, min);
    const float d = stored_f16(block), dmin = stored_f16(block + 2);
    for (int j = 0; j < m; ++j) {
      const int32_t scaled = scaled_sum(values, x[j].q + 256 * b, scale, 8, 32);
      totals[j] += k_block_share(d, dmin, x[j].scales[b], scaled, k_mins_sum(min, x[j].sums16 + 16 * b));
    }
  }
  for (int j = 0; j < m; ++j) out[j * out_stride] = totals[j];
}

// Q6_K: 6-bit values stored with +32, sixteen sub-blocks of 16 with int8 scales. Value
// 128h + 32p + l takes a nibble of ql (low for parts 0-1, high for 2-3) and two bits of qh.
void q6_k_dots(const std::byte* w, int64_t blocks, const QuantisedRowView* x, int m, float* out, int64_t out_stride) {
  float totals[kTileRows] = {};
  uint8_t values[256];
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * kQ6_KBytes;
    const uint8_t* ql = bytes(block);
    const uint8_t* qh = bytes(block + kQ6_KQh);
    const auto* scales = reinterpret_cast<const int8_t*>(block + kQ6_KScales);
    for (int h = 0; h < 2; ++h)
      for (int p = 0; p < 4; ++p)
        for (int l = 0; l < 32; ++l) {
          const uint8_t low = ql[64 * h + 32 * (p % 2) + l];
          values[128 * h + 32 * p + l] =
              static_cast<uint8_t>((p < 2 ? low & 0x0F : low >> 4) | (((qh[32 * h + l] >> (2 * p)) & 3) << 4));
        }
    const float d = stored_f16(block + kQ6_KScale);
    for (int j = 0; j < m; ++j) {
      const int32_t scaled =
          scaled_sum(values, x[j].q + 256 * b, scales, 16, 16) - q6_k_offset_sum(scales, x[j].sums16 + 16 * b);
      totals[j] += k_block_share(d, 0.0f, x[j].scales[b], scaled, 0);
    }
  }
  for (int j = 0; j < m; ++j) out[j * out_stride] = totals[j];
}

// Each row tile as a band kernel.
template <auto RowTile, int64_t BlockValues>
void band(const std::byte* w, int64_t row_stride, int64_t rows, int64_t blocks, const QuantisedRowView* x, int64_t m,
          float* y, int64_t y_stride) {
  band_by_rows(RowTile, w, row_stride, rows, blocks, BlockValues, x, m, y, y_stride);
}

}  // namespace

const IntegerDotKernels kPortableIntegerDots = {
    "portable",
    band<q8_family_dots<signed_q8_0, kQ8_0Bytes>, 32>,
    band<q8_family_dots<signed_q4_0, kQ4_0Bytes>, 32>,
    band<q8_family_dots<signed_q5_0, kQ5_0Bytes>, 32>,
    band<q45_k_dots<false>, 256>,
    band<q45_k_dots<true>, 256>,
    band<q6_k_dots, 256>,
    nullptr,
    nullptr,
};

}  // namespace snapstream::kernels::cpu
