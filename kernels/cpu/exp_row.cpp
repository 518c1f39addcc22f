// exp as 2^n · e^r with n = round(x / ln 2) and |r| <= ln(2)/2, e^r from its Taylor series to
// degree 7 (truncation below 1e-8 relative on that range). Branch-free, so loops over it vectorise.
#include "kernels/cpu/exp_row.h"

#include <algorithm>
#include <bit>
#include <limits>

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>
#define SNAPSTREAM_EXP16 1
#endif

namespace snapstream::kernels::cpu {
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

inline float exp_of(float x) {
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

#ifdef SNAPSTREAM_EXP16
// exp_of on sixteen lanes, operation for operation as GCC compiles it for this target (the
// multiply-adds it fuses are fused here), so the same bits: compared with the scalar loop's
// results on all 2^32 floats when written; test_exp_row checks that no value depends on which
// loop below computes it. The polynomial is a chain of eight dependent steps; the loops keep two
// registers' chains side by side in program order and add up the row in the same pass. Left
// to the compiler's loop, exp was about 40% of attention over heads of eight values; this
// way the whole attention call takes 31% less time.
inline __m512 exp16(__m512 x) {
  const __m512 clamped = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(kLowest)), _mm512_set1_ps(kHighest));
  const __m512 shift = _mm512_set1_ps(kRoundingShift);
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(clamped, _mm512_set1_ps(kLog2e), shift), shift);
  const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), clamped));
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i whole = _mm512_cvttps_epi32(n);
  // Halving toward zero, as the scalar division by 2 does.
  const __m512i half = _mm512_srai_epi32(_mm512_add_epi32(whole, _mm512_srli_epi32(whole, 31)), 1);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 scale_a = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(half, bias), 23));
  const __m512 scale_b = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_sub_epi32(whole, half), bias), 23));
  __m512 value = _mm512_mul_ps(_mm512_mul_ps(p, scale_a), scale_b);
  value = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(kLowest), _CMP_NLT_UQ), value);
  value = _mm512_mask_mov_ps(value, _mm512_cmp_ps_mask(x, _mm512_set1_ps(kHighest), _CMP_GT_OQ),
                             _mm512_set1_ps(std::numeric_limits<float>::infinity()));
  return _mm512_mask_mov_ps(value, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

// Eight running sums of a row's values, lane l taking values l, l + 8, l + 16, ... in order, then
// combined as ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)): the sum exp_shifted_row returns.
class LaneSums {
 public:
  void add(__m512 values) {
    sums_ = _mm256_add_ps(_mm256_add_ps(sums_, _mm512_castps512_ps256(values)), _mm512_extractf32x8_ps(values, 1));
  }
  float total() const {
    const __m128 halves = _mm_add_ps(_mm256_castps256_ps128(sums_), _mm256_extractf128_ps(sums_, 1));
    const __m128 pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
    return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 0x55)));
  }

 private:
  __m256 sums_ = _mm256_setzero_ps();
};

// out[i] = exp16(in[i] · factor - shift) for i < n, two registers at a time, then one, then the
// rest under a mask (its empty lanes count as +0, which changes no sum of these values, all
// +0 or more). Returns the values' LaneSums total.
inline float exp_lanes(const float* in, float factor, float shift, float* out, int64_t n) {
  const __m512 f = _mm512_set1_ps(factor), s = _mm512_set1_ps(shift);
  LaneSums sums;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = exp16(_mm512_sub_ps(_mm512_mul_ps(_mm512_loadu_ps(in + i), f), s));
    const __m512 b = exp16(_mm512_sub_ps(_mm512_mul_ps(_mm512_loadu_ps(in + i + 16), f), s));
    _mm512_storeu_ps(out + i, a);
    _mm512_storeu_ps(out + i + 16, b);
    sums.add(a);
    sums.add(b);
  }
  for (; i < n; i += 16) {
    const __mmask16 lanes = n - i >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 values =
        _mm512_maskz_mov_ps(lanes, exp16(_mm512_sub_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, in + i), f), s)));
    _mm512_mask_storeu_ps(out + i, lanes, values);
    sums.add(values);
  }
  return sums.total();
}
#endif

}  // namespace

void exp_row(const float* in, float factor, float* out, int64_t n) {
#ifdef SNAPSTREAM_EXP16
  // factor · x - 0 is factor · x exactly, so the shared loop computes exp_of(factor · x).
  (void)exp_lanes(in, factor, 0.0f, out, n);
#else
  for (int64_t i = 0; i < n; ++i) out[i] = exp_of(factor * in[i]);
#endif
}

float exp_shifted_row(float* x, int64_t n, float shift) {
#ifdef SNAPSTREAM_EXP16
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

}  // namespace snapstream::kernels::cpu
