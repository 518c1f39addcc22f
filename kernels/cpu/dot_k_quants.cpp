// Q4_K·Q8_K and Q6_K·Q8_K: integer products within each block (AVX2 maddubs/madd when the build
// targets it, the same integers in portable loops otherwise), then one f32 scale per block, so
// both paths give identical results.
#include "kernels/cpu/dot_k_quants.h"

#include "kernels/activation_rounding.h"
#include "kernels/quant_blocks.h"

#if defined(__AVX2__)
#define SNAPSTREAM_AVX2_INT 1
#include <immintrin.h>
#endif

namespace snapstream::kernels::cpu {
namespace {

constexpr int64_t kBlock = 256;  // values per Q8_K block, as per Q4_K and Q6_K block

#ifdef SNAPSTREAM_AVX2_INT
int32_t horizontal_sum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}
#endif

// Σ scale_j · Σ_{l in sub-block j} q4_l · a_l over the 8 sub-blocks of 32 of one Q4_K block.
int32_t q4_k_scaled_sum(const uint8_t* qs, const uint8_t* scales, const int8_t* a) {
#ifdef SNAPSTREAM_AVX2_INT
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  __m256i acc = _mm256_setzero_si256();
  for (int c = 0; c < 4; ++c) {
    const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
    const __m256i low = _mm256_and_si256(packed, nibble);
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(packed, 4), nibble);
    const __m256i a_low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64 * c));
    const __m256i a_high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64 * c + 32));
    const auto scale_low = static_cast<int16_t>(k_quant_scale_min(scales, 2 * c).scale);
    const auto scale_high = static_cast<int16_t>(k_quant_scale_min(scales, 2 * c + 1).scale);
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(low, a_low), _mm256_set1_epi16(scale_low)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(high, a_high), _mm256_set1_epi16(scale_high)));
  }
  return horizontal_sum(acc);
#else
  int32_t total = 0;
  for (int c = 0; c < 4; ++c) {
    int32_t low = 0, high = 0;
    for (int l = 0; l < 32; ++l) {
      low += (qs[32 * c + l] & 0x0F) * a[64 * c + l];
      high += (qs[32 * c + l] >> 4) * a[64 * c + 32 + l];
    }
    total += k_quant_scale_min(scales, 2 * c).scale * low + k_quant_scale_min(scales, 2 * c + 1).scale * high;
  }
  return total;
#endif
}

float dot_q4_k(const std::byte* w, const Q8KRow& a) {
  const int64_t block_bytes = block_layout(DType::Q4_K).bytes;
  float total = 0.0f;
  for (int64_t b = 0; b < a.blocks; ++b) {
    const std::byte* block = w + b * block_bytes;
    const auto* scales = reinterpret_cast<const uint8_t*>(block + 4);
    const auto* qs = reinterpret_cast<const uint8_t*>(block + 16);
    const int16_t* sums = a.sums16.data() + b * 16;
    int32_t mins = 0;
    for (int j = 0; j < 8; ++j) mins += k_quant_scale_min(scales, j).min * (sums[2 * j] + sums[2 * j + 1]);
    const int32_t scaled = q4_k_scaled_sum(qs, scales, a.q.data() + b * kBlock);
    const float scale = a.scales[static_cast<size_t>(b)];
    total += block_scale_at(block) * scale * static_cast<float>(scaled) - block_scale_at(block + 2) * scale * static_cast<float>(mins);
  }
  return total;
}

// Σ scale_j · Σ_{l in sub-block j} (q6_l + 32) · a_l over the 16 sub-blocks of 16; the +32
// keeps the weights unsigned for maddubs and is taken back with the activation sums.
int32_t q6_k_scaled_sum(const uint8_t* ql, const uint8_t* qh, const int8_t* scales, const int8_t* a) {
#ifdef SNAPSTREAM_AVX2_INT
  const __m256i nibble = _mm256_set1_epi8(0x0F), two_bits = _mm256_set1_epi8(0x03);
  __m256i acc = _mm256_setzero_si256();
  for (int half = 0; half < 2; ++half) {
    const __m256i low0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * half));
    const __m256i low1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * half + 32));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + 32 * half));
    const __m256i values[4] = {
        _mm256_or_si256(_mm256_and_si256(low0, nibble), _mm256_slli_epi16(_mm256_and_si256(high, two_bits), 4)),
        _mm256_or_si256(_mm256_and_si256(low1, nibble),
                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 2), two_bits), 4)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low0, 4), nibble),
                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 4), two_bits), 4)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low1, 4), nibble),
                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 6), two_bits), 4))};
    for (int part = 0; part < 4; ++part) {
      // Part p of this half is values 32p..32p+31: two sub-blocks of 16, scales 8h+2p and 8h+2p+1.
      const int8_t* sc = scales + 8 * half + 2 * part;
      const __m256i a_part = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 128 * half + 32 * part));
      const __m256i scale_pair = _mm256_set_m128i(_mm_set1_epi16(sc[1]), _mm_set1_epi16(sc[0]));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(values[part], a_part), scale_pair));
    }
  }
  return horizontal_sum(acc);
#else
  int32_t total = 0;
  for (int half = 0; half < 2; ++half)
    for (int part = 0; part < 4; ++part)
      for (int sub = 0; sub < 2; ++sub) {
        int32_t sum = 0;
        for (int i = 0; i < 16; ++i) {
          const int l = 16 * sub + i;
          const uint8_t low = part % 2 == 0 ? ql[64 * half + l] : ql[64 * half + 32 + l];
          const int value = (part < 2 ? (low & 0x0F) : (low >> 4)) | (((qh[32 * half + l] >> (2 * part)) & 0x03) << 4);
          sum += value * a[128 * half + 32 * part + l];
        }
        total += scales[8 * half + 2 * part + sub] * sum;
      }
  return total;
#endif
}

float dot_q6_k(const std::byte* w, const Q8KRow& a) {
  const int64_t block_bytes = block_layout(DType::Q6_K).bytes;
  float total = 0.0f;
  for (int64_t b = 0; b < a.blocks; ++b) {
    const std::byte* block = w + b * block_bytes;
    const auto* ql = reinterpret_cast<const uint8_t*>(block);
    const auto* qh = reinterpret_cast<const uint8_t*>(block + 128);
    const auto* scales = reinterpret_cast<const int8_t*>(block + 192);
    const int16_t* sums = a.sums16.data() + b * 16;
    int32_t offset = 0;
    for (int j = 0; j < 16; ++j) offset += 32 * scales[j] * sums[j];
    const int32_t scaled = q6_k_scaled_sum(ql, qh, scales, a.q.data() + b * kBlock) - offset;
    total += block_scale_at(block + 208) * a.scales[static_cast<size_t>(b)] * static_cast<float>(scaled);
  }
  return total;
}

}  // namespace

void quantize_q8_k_row(const float* x, int64_t n, Q8KRow& row) {
  row.blocks = n / kBlock;
  row.q.resize(static_cast<size_t>(n));
  row.scales.resize(static_cast<size_t>(row.blocks));
  row.sums16.resize(static_cast<size_t>(n / 16));
  for (int64_t b = 0; b < row.blocks; ++b)
    quantize_q8_k_block(x + b * kBlock, kBlock, row.q.data() + b * kBlock, row.scales[static_cast<size_t>(b)]);
  for (int64_t j = 0; j < n / 16; ++j) {
    int16_t sum = 0;
    for (int i = 0; i < 16; ++i) sum = static_cast<int16_t>(sum + row.q[static_cast<size_t>(16 * j + i)]);
    row.sums16[static_cast<size_t>(j)] = sum;
  }
}

bool has_k_quant_dot(DType dtype) { return dtype == DType::Q4_K || dtype == DType::Q6_K; }

float dot_k_quant(DType dtype, const std::byte* w, const Q8KRow& a) {
  return dtype == DType::Q4_K ? dot_q4_k(w, a) : dot_q6_k(w, a);
}

}  // namespace snapstream::kernels::cpu
