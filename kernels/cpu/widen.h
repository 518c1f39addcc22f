// Stored f32 and f16 values as f32, eight lanes at a time (AVX2+FMA+F16C builds) or one at a
// time: the loads the dot and weighted-sum kernels share, so both read a row type the same way;
// and f32 rows stored as f16, as the cache writes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dtype.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define SNAPSTREAM_AVX2 1
#include <immintrin.h>
#endif

namespace snapstream::kernels::cpu {

inline float widen(float value) { return value; }
inline float widen(uint16_t f16_bits) { return f16_to_f32(f16_bits); }

#ifdef SNAPSTREAM_AVX2
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* f16) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f16))); }
#endif

// n stored f16 values (read bytewise: a row need not be aligned) as f32.
inline void widen_f16_row(const std::byte* f16, int64_t n, float* out) {
  int64_t i = 0;
#ifdef SNAPSTREAM_AVX2
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f16 + 2 * i))));
#endif
  for (; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, f16 + 2 * i, 2);
    out[i] = f16_to_f32(bits);
  }
}

// n f32 values stored as f16 (written bytewise), rounded as f32_to_f16 rounds: the hardware
// conversion rounds to nearest even as it does, but keeps a NaN's payload, so eight values
// holding a NaN take the scalar path.
inline void narrow_f16_row(const float* values, int64_t n, std::byte* f16) {
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

}  // namespace snapstream::kernels::cpu
