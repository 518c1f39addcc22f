// Heads of eight values. Scoring, on AVX2 and AVX-512: a block of keys (eight, or sixteen with
// key i in the low half of a register pair and key i + 8 in the high one) is widened and
// transposed so register d holds value d of every key, and a head's scores are then eight
// multiplies and seven adds in dot_f32's order. Weighting, on AVX-512: four value rows per
// register pair, one running sum per row modulo 4 as the generic kernel deals them. Built with
// -ffp-contract=off: a fused multiply-add in either tree would change the bits the other
// kernels give.
#include "kernels/cpu/head8.h"

#ifdef SNAPSTREAM_HEAD8_SCORES
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/widen.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN
namespace {

#ifdef SNAPSTREAM_HEAD8
using KeyLanes = __m512;
constexpr int64_t kKeysPerBlock = 16;

// Keys i and i + 8 of a block as one register: key i in lanes 0-7, key i + 8 in lanes 8-15.
inline __m512 key_pair(const float* keys, int i) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(keys + 8 * i)), _mm256_loadu_ps(keys + 8 * (i + 8)), 1);
}
inline __m512 key_pair(const uint16_t* keys, int i) {
  const __m128i low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(keys + 8 * i));
  const __m128i high = _mm_loadu_si128(reinterpret_cast<const __m128i*>(keys + 8 * (i + 8)));
  return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1));
}

// Sixteen keys of eight values, transposed: column d lane k holds value d of key k.
template <typename T>
inline void key_columns(const T* keys, __m512 (&column)[8]) {
  __m512 pair[8], unpacked[8], quads[8];
  for (int i = 0; i < 8; ++i) pair[i] = key_pair(keys, i);
  // Within each 128-bit lane, as an 8x8 transpose of 256-bit rows does it: after these two steps
  // quads[4c + d] (c = 0 for keys 0-3 and 8-11, 1 for keys 4-7 and 12-15) holds values d
  // (in 128-bit lanes 0 and 2) and d + 4 (lanes 1 and 3) of four keys.
  for (int c = 0; c < 2; ++c) {
    __m512* in = pair + 4 * c;
    __m512* out = unpacked + 4 * c;
    out[0] = _mm512_unpacklo_ps(in[0], in[1]);
    out[1] = _mm512_unpackhi_ps(in[0], in[1]);
    out[2] = _mm512_unpacklo_ps(in[2], in[3]);
    out[3] = _mm512_unpackhi_ps(in[2], in[3]);
    quads[4 * c + 0] = _mm512_shuffle_ps(out[0], out[2], 0x44);
    quads[4 * c + 1] = _mm512_shuffle_ps(out[0], out[2], 0xEE);
    quads[4 * c + 2] = _mm512_shuffle_ps(out[1], out[3], 0x44);
    quads[4 * c + 3] = _mm512_shuffle_ps(out[1], out[3], 0xEE);
  }
  // Value d of keys 0-3, 4-7, 8-11, 12-15 from lanes 0 and 2 of the two quads; d + 4 from 1 and 3.
  const __m512i low_values = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
  const __m512i high_values = _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int d = 0; d < 4; ++d) {
    column[d] = _mm512_permutex2var_ps(quads[d], low_values, quads[4 + d]);
    column[d + 4] = _mm512_permutex2var_ps(quads[d], high_values, quads[4 + d]);
  }
}

inline void store_first(float* out, __m512 scores, int64_t count) {
  _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << count) - 1), scores);
}
#else
using KeyLanes = __m256;
constexpr int64_t kKeysPerBlock = 8;

// Eight keys of eight values, transposed: column d lane k holds value d of key k.
template <typename T>
inline void key_columns(const T* keys, __m256 (&column)[8]) {
  __m256 key[8], unpacked[8], quads[8];
  for (int k = 0; k < 8; ++k) key[k] = load8(keys + 8 * k);
  // Within each 128-bit half: quads[4c + d] (c = 0 for keys 0-3, 1 for keys 4-7) holds value d
  // of four keys in its low half and value d + 4 in its high one.
  for (int c = 0; c < 2; ++c) {
    const __m256* in = key + 4 * c;
    __m256* out = unpacked + 4 * c;
    out[0] = _mm256_unpacklo_ps(in[0], in[1]);
    out[1] = _mm256_unpackhi_ps(in[0], in[1]);
    out[2] = _mm256_unpacklo_ps(in[2], in[3]);
    out[3] = _mm256_unpackhi_ps(in[2], in[3]);
    quads[4 * c + 0] = _mm256_shuffle_ps(out[0], out[2], 0x44);
    quads[4 * c + 1] = _mm256_shuffle_ps(out[0], out[2], 0xEE);
    quads[4 * c + 2] = _mm256_shuffle_ps(out[1], out[3], 0x44);
    quads[4 * c + 3] = _mm256_shuffle_ps(out[1], out[3], 0xEE);
  }
  for (int d = 0; d < 4; ++d) {
    column[d] = _mm256_permute2f128_ps(quads[d], quads[4 + d], 0x20);
    column[d + 4] = _mm256_permute2f128_ps(quads[d], quads[4 + d], 0x31);
  }
}

inline void store_first(float* out, __m256 scores, int64_t count) {
  float block[kKeysPerBlock];
  _mm256_storeu_ps(block, scores);
  std::copy_n(block, count, out);
}
#endif

// The scores of a block of keys against one query head: ((p0 + p4) + (p2 + p6)) + ((p1 + p5) +
// (p3 + p7)) for the products p, as dot_f32's horizontal sum adds its lanes. GCC's vector
// operators, so one text serves both register widths (a scalar operand is broadcast).
inline KeyLanes head_scores(const KeyLanes (&column)[8], const float* query) {
  KeyLanes p[8];
  for (int d = 0; d < 8; ++d) p[d] = column[d] * query[d];
  return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

// Block by block, each block transposed once for every head.
template <typename T>
void score_keys(const float* q, int64_t heads, const T* keys, int64_t count, float* scores, int64_t scores_stride) {
  KeyLanes column[8];
  const int64_t whole = count / kKeysPerBlock * kKeysPerBlock;
  for (int64_t s = 0; s < whole; s += kKeysPerBlock) {
    key_columns(keys + s * kHead8Width, column);
    for (int64_t h = 0; h < heads; ++h) {
      const KeyLanes block = head_scores(column, q + h * kHead8Width);
      std::memcpy(scores + h * scores_stride + s, &block, sizeof block);
    }
  }
  if (whole == count) return;
  // The last partial block is copied next to zero keys, so every load stays inside the cache.
  T rest[kKeysPerBlock * kHead8Width] = {};
  std::memcpy(rest, keys + whole * kHead8Width, static_cast<size_t>((count - whole) * kHead8Width) * sizeof(T));
  key_columns(rest, column);
  for (int64_t h = 0; h < heads; ++h)
    store_first(scores + h * scores_stride + whole, head_scores(column, q + h * kHead8Width), count - whole);
}

}  // namespace

void score_keys_head8(const float* q, int64_t heads, const float* keys, int64_t count, float* scores,
                      int64_t scores_stride) {
  score_keys(q, heads, keys, count, scores, scores_stride);
}
void score_keys_head8(const float* q, int64_t heads, const uint16_t* keys, int64_t count, float* scores,
                      int64_t scores_stride) {
  score_keys(q, heads, keys, count, scores, scores_stride);
}

#ifdef SNAPSTREAM_HEAD8
namespace {

constexpr int64_t kRowsPerStep = 4;
// The most query heads one pass keeps sums for (two registers each).
constexpr int kMaxHeadsPerPass = 4;

// Rows s, s + 1 (first) and s + 2, s + 3 (second) of four consecutive rows of eight.
inline void row_quads(const float* rows, __m512& first, __m512& second) {
  first = _mm512_loadu_ps(rows);
  second = _mm512_loadu_ps(rows + 16);
}
inline void row_quads(const uint16_t* rows, __m512& first, __m512& second) {
  const __m512i packed = _mm512_loadu_si512(rows);
  first = _mm512_cvtph_ps(_mm512_castsi512_si256(packed));
  second = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(packed, 1));
}

// Lanes 0-7 for bit 0 of a two-bit mask, lanes 8-15 for bit 1.
constexpr __mmask16 kPairLanes[4] = {0x0000, 0x00FF, 0xFF00, 0xFFFF};

// Heads [0, H) of a pass: sums[h][0] holds running sums 0 and 1, sums[h][1] sums 2 and 3.
template <int H, typename T>
void weigh_rows(const float* weights, int64_t weights_stride, const T* rows, int64_t count, float* out,
                int64_t out_stride) {
  __m512 sums[H][2];
  for (auto& head : sums) head[0] = head[1] = _mm512_setzero_ps();
  const __m512i first_pair = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const __m512i second_pair = _mm512_setr_epi32(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  auto add_rows = [&](const T* four_rows, const float* const (&four_weights)[H]) {
    __m512 first, second;
    row_quads(four_rows, first, second);
    for (int h = 0; h < H; ++h) {
      const __m128 w = _mm_loadu_ps(four_weights[h]);
      const unsigned weighed = _mm_cmp_ps_mask(w, _mm_setzero_ps(), _CMP_NEQ_UQ);
      const __m512 wide = _mm512_castps128_ps512(w);
      sums[h][0] = _mm512_mask3_fmadd_ps(first, _mm512_permutexvar_ps(first_pair, wide), sums[h][0], kPairLanes[weighed & 3]);
      sums[h][1] = _mm512_mask3_fmadd_ps(second, _mm512_permutexvar_ps(second_pair, wide), sums[h][1], kPairLanes[weighed >> 2]);
    }
  };
  const int64_t whole = count / kRowsPerStep * kRowsPerStep;
  for (int64_t s = 0; s < whole; s += kRowsPerStep) {
    const float* four_weights[H];
    for (int h = 0; h < H; ++h) four_weights[h] = weights + h * weights_stride + s;
    add_rows(rows + s * kHead8Width, four_weights);
  }
  if (whole < count) {
    // The last rows next to zero rows of zero weight, which every head skips.
    T rest[kRowsPerStep * kHead8Width] = {};
    float rest_weights[H][kRowsPerStep] = {};
    const float* four_weights[H];
    std::memcpy(rest, rows + whole * kHead8Width, static_cast<size_t>((count - whole) * kHead8Width) * sizeof(T));
    for (int h = 0; h < H; ++h) {
      std::copy_n(weights + h * weights_stride + whole, count - whole, rest_weights[h]);
      four_weights[h] = rest_weights[h];
    }
    add_rows(rest, four_weights);
  }
  for (int h = 0; h < H; ++h) {
    const __m512 pairs = _mm512_add_ps(sums[h][0], sums[h][1]);  // sums 0 + 2, then 1 + 3
    _mm256_storeu_ps(out + h * out_stride, _mm256_add_ps(_mm512_castps512_ps256(pairs), _mm512_extractf32x8_ps(pairs, 1)));
  }
}

template <typename T>
void weighted_rows(const float* weights, int64_t weights_stride, int64_t heads, const T* rows, int64_t count, float* out,
                   int64_t out_stride) {
  for (int64_t h = 0; h < heads; h += kMaxHeadsPerPass) {
    const float* w = weights + h * weights_stride;
    float* o = out + h * out_stride;
    switch (std::min<int64_t>(kMaxHeadsPerPass, heads - h)) {
      case 1: weigh_rows<1>(w, weights_stride, rows, count, o, out_stride); break;
      case 2: weigh_rows<2>(w, weights_stride, rows, count, o, out_stride); break;
      case 3: weigh_rows<3>(w, weights_stride, rows, count, o, out_stride); break;
      default: weigh_rows<4>(w, weights_stride, rows, count, o, out_stride); break;
    }
  }
}

}  // namespace

void weighted_rows_head8(const float* weights, int64_t weights_stride, int64_t heads, const float* rows, int64_t count,
                         float* out, int64_t out_stride) {
  weighted_rows(weights, weights_stride, heads, rows, count, out, out_stride);
}
void weighted_rows_head8(const float* weights, int64_t weights_stride, int64_t heads, const uint16_t* rows,
                         int64_t count, float* out, int64_t out_stride) {
  weighted_rows(weights, weights_stride, heads, rows, count, out, out_stride);
}

#endif  // SNAPSTREAM_HEAD8

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
#endif
