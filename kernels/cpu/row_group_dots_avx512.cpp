// Q4_K rows regrouped sixteen at a time against Q8_K activation rows, on AVX-512 VNNI: one
// 64-byte part gives every row of the group four values in each nibble, so one dpbusd per nibble
// multiplies sixteen rows by four broadcast activations, and nothing is unpacked per row.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/k_scales16_avx512.h"
#include "kernels/cpu/row_group_dots.h"
#include "kernels/row_groups.h"

namespace snapstream::kernels::cpu {
namespace {

constexpr int64_t kGroupBlockBytes = 16 * 144;
constexpr int64_t kScalesAt = 64, kPartsAt = 256;
// Activation rows one pass over a group keeps accumulators for (registers: four per row).
constexpr int kMaxRows = 4;
// Quantised activation bytes the groups meet at a time.
constexpr int64_t kChunkBytes = 16 * 1024;

__m512i broadcast4(const int8_t* q) {
  int32_t four;
  std::memcpy(&four, q, 4);
  return _mm512_set1_epi32(four);
}

// Block b of one group against J activation rows: lane r of each total is row r's. The integer
// sums are the band kernels' (Σ scale · value · activation and Σ min · activation sums, exact)
// and the float steps k_block_share's, so the bits are too. `next` (or null) is the same block
// of the group after this one, fetched a line per part so its misses overlap these products
// instead of stalling the next group's first.
template <int J>
void group_block(const std::byte* block, int64_t b, const QuantisedRowView* x, const std::byte* next, __m512 (&totals)[J]) {
  if (next != nullptr)
    for (int64_t at = 0; at < kPartsAt; at += 64) _mm_prefetch(reinterpret_cast<const char*>(next + at), _MM_HINT_T0);
  const __m512i nibble = _mm512_set1_epi8(0x0F), byte = _mm512_set1_epi32(0xFF);
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block)));
  const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32)));
  // Byte s % 4 of lane r holds row r's scale (or min) of sub-block s.
  const KScales16 unpacked =
      unpack_k_scale_words(_mm512_loadu_si512(block + kScalesAt), _mm512_loadu_si512(block + kScalesAt + 64),
                           _mm512_loadu_si512(block + kScalesAt + 128));
  const std::byte* parts = block + kPartsAt;
  __m512i scaled[J];
  for (auto& s : scaled) s = _mm512_setzero_si512();
  // Parts 8s..8s+7 hold sub-block s in their low nibbles and sub-block s + 4 in their high ones.
  for (int s = 0; s < 4; ++s) {
    __m512i low[J], high[J];
    for (int j = 0; j < J; ++j) low[j] = high[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      const int p = 8 * s + k;
      if (next != nullptr) _mm_prefetch(reinterpret_cast<const char*>(next + kPartsAt + 64 * p), _MM_HINT_T0);
      const __m512i part = _mm512_loadu_si512(parts + 64 * p);
      const __m512i low_values = _mm512_and_si512(part, nibble);
      const __m512i high_values = _mm512_and_si512(_mm512_srli_epi16(part, 4), nibble);
      for (int j = 0; j < J; ++j) {
        const int8_t* a = x[j].q + 256 * b;
        low[j] = _mm512_dpbusd_epi32(low[j], low_values, broadcast4(a + 4 * p));
        high[j] = _mm512_dpbusd_epi32(high[j], high_values, broadcast4(a + 128 + 4 * p));
      }
    }
    const __m512i low_scale = _mm512_and_si512(_mm512_srli_epi32(unpacked.scales[0], 8 * s), byte);
    const __m512i high_scale = _mm512_and_si512(_mm512_srli_epi32(unpacked.scales[1], 8 * s), byte);
    for (int j = 0; j < J; ++j)
      scaled[j] = _mm512_add_epi32(scaled[j], _mm512_add_epi32(_mm512_mullo_epi32(low[j], low_scale),
                                                               _mm512_mullo_epi32(high[j], high_scale)));
  }
  // Row r's mins as 16-bit pairs in lane r: sub-blocks (0, 2), (1, 3), (4, 6) and (5, 7).
  const __m512i even_bytes = _mm512_set1_epi32(0x00FF00FF);
  const __m512i min_pairs[4] = {_mm512_and_si512(unpacked.mins[0], even_bytes), _mm512_srli_epi16(unpacked.mins[0], 8),
                                _mm512_and_si512(unpacked.mins[1], even_bytes), _mm512_srli_epi16(unpacked.mins[1], 8)};
  for (int j = 0; j < J; ++j) {
    alignas(32) int32_t sub_sums[8];  // each 32-value sub-block's activation sum, |sum| < 2^15
    _mm256_store_si256(reinterpret_cast<__m256i*>(sub_sums),
                       _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[j].sums16 + 16 * b)),
                                         _mm256_set1_epi16(1)));
    __m512i min_sum = _mm512_setzero_si512();
    for (int k = 0; k < 4; ++k) {
      const int first = 4 * (k / 2) + k % 2;  // the pair's sub-blocks: first and first + 2
      const uint32_t sums = static_cast<uint16_t>(sub_sums[first]) | static_cast<uint32_t>(sub_sums[first + 2]) << 16;
      min_sum = _mm512_dpwssd_epi32(min_sum, min_pairs[k], _mm512_set1_epi32(static_cast<int32_t>(sums)));
    }
    const __m512 a = _mm512_set1_ps(x[j].scales[b]);
    const __m512 share = _mm512_sub_ps(_mm512_mul_ps(_mm512_mul_ps(d, a), _mm512_cvtepi32_ps(scaled[j])),
                                       _mm512_mul_ps(_mm512_mul_ps(dmin, a), _mm512_cvtepi32_ps(min_sum)));
    totals[j] = _mm512_add_ps(totals[j], share);
  }
}

template <int J>
void group_rows(const std::byte* group, int64_t blocks, const QuantisedRowView* x, float* y, int64_t y_stride,
                const std::byte* next_group) {
  __m512 totals[J];
  for (auto& t : totals) t = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b)
    group_block<J>(group + b * kGroupBlockBytes, b, x, next_group == nullptr ? nullptr : next_group + b * kGroupBlockBytes,
                   totals);
  for (int j = 0; j < J; ++j) _mm512_storeu_ps(y + j * y_stride, totals[j]);
}

}  // namespace

void q4_k_group_dots_avx512(const std::byte* w, int64_t groups, int64_t blocks, const QuantisedRowView* x, int64_t m,
                            float* y, int64_t y_stride) {
  // Activation rows in chunks that stay in L1 while every group meets them (prefill's 512 rows
  // would not fit; read again for each group from further out, they cost a sixth of the speed).
  const int64_t chunk = std::max<int64_t>(kMaxRows, kChunkBytes / (256 * blocks) / kMaxRows * kMaxRows);
  for (int64_t first = 0; first < m; first += chunk) {
    const int64_t end = std::min(m, first + chunk);
    for (int64_t g = 0; g < groups; ++g) {
      const std::byte* group = w + g * blocks * kGroupBlockBytes;
      float* out = y + g * kRowGroupRows;
      for (int64_t i = first; i < end; i += kMaxRows) {
        // The first pass over a group fetches the next one.
        const std::byte* next = i == first && g + 1 < groups ? group + blocks * kGroupBlockBytes : nullptr;
        switch (std::min<int64_t>(kMaxRows, end - i)) {
          case 1: group_rows<1>(group, blocks, x + i, out + i * y_stride, y_stride, next); break;
          case 2: group_rows<2>(group, blocks, x + i, out + i * y_stride, y_stride, next); break;
          case 3: group_rows<3>(group, blocks, x + i, out + i * y_stride, y_stride, next); break;
          default: group_rows<4>(group, blocks, x + i, out + i * y_stride, y_stride, next); break;
        }
      }
    }
  }
}

}  // namespace snapstream::kernels::cpu
