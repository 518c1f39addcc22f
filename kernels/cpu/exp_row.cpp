// exp as 2^n · e^r with n = round(x / ln 2) and |r| <= ln(2)/2, e^r from its Taylor series to
// degree 7 (truncation below 1e-8 relative on that range). exp_of is the portable scalar form;
// AVX-512 and AVX2 builds run the same steps on a register of lanes (exp_lanes_of).
#include "kernels/cpu/exp_row.h"

#include <algorithm>
#include <bit>
#include <limits>

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>
#define SNAPSTREAM_EXP_LANES 16
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define SNAPSTREAM_EXP_LANES 8
#endif

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN
namespace {

// ln of the smallest normal float: below it the result is reported as 0, so masked scores
// (-inf) and far-off ones give weights that are exactly zero.
constexpr float kLowest = -87.33654f;
// Above ln of the largest float the result is +inf.
constexpr float kHighest = 88.72283f;
constexpr float kLog2e = 1.44269504f;
// ln 2 split so that n · kLn2High is exact for the n that occur (|n| <= 128).
constexpr float kLn2High = 0.693359375f;
constexpr float kLn2Low = -2.12194440e-4f;
// Adding and subtracting 1.5 · 2^23 rounds a float of magnitude below 2^22 to an integer.
constexpr float kRoundingShift = 12582912.0f;

[[maybe_unused]] inline float exp_of(float x) {
  // std::max(kLowest, NaN) is kLowest: the conversion to int below must never see a NaN.
  const float clamped = std::min(std::max(kLowest, x), kHighest);
  const float n = (clamped * kLog2e + kRoundingShift) - kRoundingShift;
  const float r = (clamped - n * kLn2High) - n * kLn2Low;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n for n in [-126, 128): n = 128 only at the clamp, where the halves keep it finite.
  const int32_t half = static_cast<int32_t>(n) / 2;
  const float scale_a = std::bit_cast<float>((half + 127) << 23);
  const float scale_b = std::bit_cast<float>((static_cast<int32_t>(n) - half + 127) << 23);
  const float value = p * scale_a * scale_b;
  if (x < kLowest) return 0.0f;
  if (x > kHighest) return std::numeric_limits<float>::infinity();
  if (x != x) return x;  // NaN stays NaN
  return value;
}

#ifdef SNAPSTREAM_EXP_LANES
// One register of lanes as exp_lanes_of and exp_lanes take it: sixteen floats on AVX-512, eight
// on AVX2, with the same names, so the arithmetic below is written once for both.
#if SNAPSTREAM_EXP_LANES == 16
#define SNAPSTREAM_LANE_OP(op) _mm512_##op
using Floats = __m512;
using Ints = __m512i;
using TailMask = __mmask16;
#else
#define SNAPSTREAM_LANE_OP(op) _mm256_##op
using Floats = __m256;
using Ints = __m256i;
using TailMask = __m256i;
#endif
inline Floats splat(float v) { return SNAPSTREAM_LANE_OP(set1_ps)(v); }
inline Ints splat_int(int32_t v) { return SNAPSTREAM_LANE_OP(set1_epi32)(v); }
inline Floats load(const float* p) { return SNAPSTREAM_LANE_OP(loadu_ps)(p); }
inline void store(float* p, Floats v) { SNAPSTREAM_LANE_OP(storeu_ps)(p, v); }
inline Floats sub(Floats a, Floats b) { return SNAPSTREAM_LANE_OP(sub_ps)(a, b); }
inline Floats mul(Floats a, Floats b) { return SNAPSTREAM_LANE_OP(mul_ps)(a, b); }
inline Floats fmadd(Floats a, Floats b, Floats c) { return SNAPSTREAM_LANE_OP(fmadd_ps)(a, b, c); }
inline Floats fnmadd(Floats a, Floats b, Floats c) { return SNAPSTREAM_LANE_OP(fnmadd_ps)(a, b, c); }
inline Floats min(Floats a, Floats b) { return SNAPSTREAM_LANE_OP(min_ps)(a, b); }
inline Floats max(Floats a, Floats b) { return SNAPSTREAM_LANE_OP(max_ps)(a, b); }
inline Ints truncate(Floats v) { return SNAPSTREAM_LANE_OP(cvttps_epi32)(v); }
inline Ints add(Ints a, Ints b) { return SNAPSTREAM_LANE_OP(add_epi32)(a, b); }
inline Ints sub(Ints a, Ints b) { return SNAPSTREAM_LANE_OP(sub_epi32)(a, b); }
inline Ints shift_right_arithmetic(Ints a, int n) { return SNAPSTREAM_LANE_OP(srai_epi32)(a, n); }
inline Ints shift_right(Ints a, int n) { return SNAPSTREAM_LANE_OP(srli_epi32)(a, n); }
inline Ints shift_left(Ints a, int n) { return SNAPSTREAM_LANE_OP(slli_epi32)(a, n); }
#undef SNAPSTREAM_LANE_OP

// What differs beyond the names: reinterpreting bits, lane masks, and the running sums.
#if SNAPSTREAM_EXP_LANES == 16
inline Floats as_floats(Ints a) { return _mm512_castsi512_ps(a); }
// value where x is not below kLowest (NaN included), else +0; +inf above kHighest; x where NaN.
inline Floats edges(Floats value, Floats x) {
  value = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, splat(kLowest), _CMP_NLT_UQ), value);
  value = _mm512_mask_mov_ps(value, _mm512_cmp_ps_mask(x, splat(kHighest), _CMP_GT_OQ),
                             splat(std::numeric_limits<float>::infinity()));
  return _mm512_mask_mov_ps(value, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}
inline TailMask tail_mask(int64_t count) {
  return count >= 16 ? TailMask{0xFFFF} : static_cast<TailMask>((1u << count) - 1);
}
inline Floats load_tail(const float* p, TailMask lanes) { return _mm512_maskz_loadu_ps(lanes, p); }
inline Floats zero_outside(TailMask lanes, Floats v) { return _mm512_maskz_mov_ps(lanes, v); }
inline void store_tail(float* p, TailMask lanes, Floats v) { _mm512_mask_storeu_ps(p, lanes, v); }
// Eight running sums: lane l of each half adds into sum l, the low half first.
inline __m256 add_to_sums(__m256 sums, Floats v) {
  return _mm256_add_ps(_mm256_add_ps(sums, _mm512_castps512_ps256(v)), _mm512_extractf32x8_ps(v, 1));
}
#else
inline Floats as_floats(Ints a) { return _mm256_castsi256_ps(a); }
inline Floats edges(Floats value, Floats x) {
  value = _mm256_and_ps(value, _mm256_cmp_ps(x, splat(kLowest), _CMP_NLT_UQ));
  value = _mm256_blendv_ps(value, splat(std::numeric_limits<float>::infinity()), _mm256_cmp_ps(x, splat(kHighest), _CMP_GT_OQ));
  return _mm256_blendv_ps(value, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
inline TailMask tail_mask(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(std::min<int64_t>(count, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Floats load_tail(const float* p, TailMask lanes) { return _mm256_maskload_ps(p, lanes); }
inline Floats zero_outside(TailMask lanes, Floats v) { return _mm256_and_ps(v, _mm256_castsi256_ps(lanes)); }
inline void store_tail(float* p, TailMask lanes, Floats v) { _mm256_maskstore_ps(p, lanes, v); }
inline __m256 add_to_sums(__m256 sums, Floats v) { return _mm256_add_ps(sums, v); }
#endif
constexpr int64_t kLanes = SNAPSTREAM_EXP_LANES;

// exp_of on a register of lanes, operation for operation as GCC compiles it for these targets
// (the multiply-adds it fuses are fused here), so the same bits: compared with the scalar loop's
// results on all 2^32 floats, on AVX-512 and on AVX2; test_exp_row checks that no value depends
// on which loop below computes it. The polynomial is a chain of eight dependent steps; the loops
// keep two registers' chains side by side in program order and add up the row in the same pass.
// Left to the compiler's loop, exp was about 40% of attention over heads of eight values on
// AVX-512 (this way the whole attention call takes 31% less time); on AVX2, GCC 12 leaves the
// loop scalar, about 140 instructions a value, 40% of all that stories260K's decode of 16
// sequences ran.
inline Floats exp_lanes_of(Floats x) {
  const Floats clamped = min(max(x, splat(kLowest)), splat(kHighest));
  const Floats shift = splat(kRoundingShift);
  const Floats n = sub(fmadd(clamped, splat(kLog2e), shift), shift);
  const Floats r = fnmadd(n, splat(kLn2Low), fnmadd(n, splat(kLn2High), clamped));
  Floats p = splat(1.0f / 5040.0f);
  p = fmadd(p, r, splat(1.0f / 720.0f));
  p = fmadd(p, r, splat(1.0f / 120.0f));
  p = fmadd(p, r, splat(1.0f / 24.0f));
  p = fmadd(p, r, splat(1.0f / 6.0f));
  p = fmadd(p, r, splat(0.5f));
  p = fmadd(p, r, splat(1.0f));
  p = fmadd(p, r, splat(1.0f));
  const Ints whole = truncate(n);
  // Halving toward zero, as the scalar division by 2 does.
  const Ints half = shift_right_arithmetic(add(whole, shift_right(whole, 31)), 1);
  const Ints bias = splat_int(127);
  const Floats scale_a = as_floats(shift_left(add(half, bias), 23));
  const Floats scale_b = as_floats(shift_left(add(sub(whole, half), bias), 23));
  return edges(mul(mul(p, scale_a), scale_b), x);
}

// out[i] = exp_lanes_of(in[i] · factor - shift) for i < n, two registers at a time, then one,
// then the rest under a mask (its empty lanes count as +0, which changes no sum of these values,
// all +0 or more). Returns the values' sum: eight running sums, sum l taking values l, l + 8,
// l + 16, ... in order, combined as ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)).
inline float exp_lanes(const float* in, float factor, float shift, float* out, int64_t n) {
  const Floats f = splat(factor), s = splat(shift);
  __m256 sums = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Floats a = exp_lanes_of(sub(mul(load(in + i), f), s));
    const Floats b = exp_lanes_of(sub(mul(load(in + i + kLanes), f), s));
    store(out + i, a);
    store(out + i + kLanes, b);
    sums = add_to_sums(add_to_sums(sums, a), b);
  }
  for (; i < n; i += kLanes) {
    const TailMask lanes = tail_mask(n - i);
    const Floats values = zero_outside(lanes, exp_lanes_of(sub(mul(load_tail(in + i, lanes), f), s)));
    store_tail(out + i, lanes, values);
    sums = add_to_sums(sums, values);
  }
  const __m128 halves = _mm_add_ps(_mm256_castps256_ps128(sums), _mm256_extractf128_ps(sums, 1));
  const __m128 pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 0x55)));
}
#endif

}  // namespace

void exp_row(const float* in, float factor, float* out, int64_t n) {
#ifdef SNAPSTREAM_EXP_LANES
  // factor · x - 0 is factor · x exactly, so the shared loop computes exp_of(factor · x).
  (void)exp_lanes(in, factor, 0.0f, out, n);
#else
  for (int64_t i = 0; i < n; ++i) out[i] = exp_of(factor * in[i]);
#endif
}

float exp_shifted_row(float* x, int64_t n, float shift) {
#ifdef SNAPSTREAM_EXP_LANES
  // 1 · x is x exactly, so this is exp_of(x - shift).
  return exp_lanes(x, 1.0f, shift, x, n);
#else
  for (int64_t i = 0; i < n; ++i) x[i] = exp_of(x[i] - shift);
  float lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += x[i + l];
  for (int l = 0; i < n; ++i, ++l) lanes[l] += x[i];
  return ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
#endif
}

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
