// f16 row and Q8_0 block conversions, eight values at a time with AVX2, one at a time otherwise.
#include "kernels/cpu/f16_rows.h"

#include <cstring>

#include "kernels/cpu/widen.h"
#include "kernels/quantize.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

void widen_f16_row(const std::byte* f16, int64_t n, float* out) {
  int64_t i = 0;
#ifdef SNAPSTREAM_AVX2
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, load8(reinterpret_cast<const uint16_t*>(f16 + 2 * i)));
#endif
  for (; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, f16 + 2 * i, 2);
    out[i] = f16_to_f32(bits);
  }
}

void narrow_f16_row(const float* values, int64_t n, std::byte* f16) {
  int64_t i = 0;
#ifdef SNAPSTREAM_AVX2
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(values + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) break;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(f16 + 2 * i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
#endif
  for (; i < n; ++i) {
    const uint16_t bits = f32_to_f16(values[i]);
    std::memcpy(f16 + 2 * i, &bits, 2);
  }
}

void narrow_q8_0_blocks(const float* values, int64_t blocks, std::byte* q8_0) {
  for (int64_t b = 0; b < blocks; ++b, values += kQ8Values, q8_0 += kQ8Bytes) {
#ifdef SNAPSTREAM_AVX2
    __m256 v[4];
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 largest = _mm256_setzero_ps();
    int finite = 0xFF;
    for (int c = 0; c < 4; ++c) {
      v[c] = _mm256_loadu_ps(values + 8 * c);
      const __m256 magnitude = _mm256_andnot_ps(sign, v[c]);
      finite &= _mm256_movemask_ps(_mm256_cmp_ps(magnitude, _mm256_set1_ps(3.4028235e38f), _CMP_LE_OQ));
      largest = _mm256_max_ps(largest, magnitude);
    }
    if (finite == 0xFF) {
      const float amax = horizontal_max(largest);
      // quantize_row's steps: the scale amax / 127 stored as f16, values times its f32 inverse
      // rounded half away from zero (lround) and clamped to ±127.
      const float d = amax / 127.0f, inverse = d != 0.0f ? 1.0f / d : 0.0f;
      const uint16_t bits = f32_to_f16(d);
      std::memcpy(q8_0, &bits, 2);
      __m256i integers[4];
      for (int c = 0; c < 4; ++c) {
        const __m256 x = _mm256_mul_ps(v[c], _mm256_set1_ps(inverse));
        const __m256 whole = _mm256_round_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        // x - whole is exact, so the tie test is too.
        const __m256 away = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(x, whole)), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
        const __m256 step = _mm256_and_ps(away, _mm256_or_ps(_mm256_and_ps(sign, x), _mm256_set1_ps(1.0f)));
        const __m256 rounded = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(whole, step), _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
        integers[c] = _mm256_cvttps_epi32(rounded);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q8_0 + 2), pack_int8(integers));
      continue;
    }
#endif
    quantize_row(DType::Q8_0, values, kQ8Values, q8_0);
  }
}

void widen_q8_0_blocks(const std::byte* q8_0, int64_t blocks, float* out) {
  for (int64_t b = 0; b < blocks; ++b, q8_0 += kQ8Bytes, out += kQ8Values) {
    const float scale = q8_scale(q8_0);
#ifdef SNAPSTREAM_AVX2
    for (int64_t i = 0; i < kQ8Values; i += 8)
      _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_set1_ps(scale), load8_int8(q8_0 + 2 + i)));
#else
    for (int64_t i = 0; i < kQ8Values; ++i) out[i] = scale * q8_value(q8_0, i);
#endif
  }
}

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
