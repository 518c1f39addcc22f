// Stored f32 and f16 values as f32, eight lanes at a time (copies built for AVX2+FMA+F16C) or one
// at a time: the loads the dot and weighted-sum kernels share, so both read a row type the same
// way, and the lane reductions and int8 packing the block conversions share.
// Only the float kernels' own copies include this (cpu/float_isa.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/float_isa.h"
#include "kernels/dtype.h"

#ifndef SNAPSTREAM_FLOAT_ISA
#error "widen.h is for the float kernels' copies; elsewhere use the entry points (cpu/f16_rows.h)"
#endif

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define SNAPSTREAM_AVX2 1
#include <immintrin.h>
#endif

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

inline float widen(float value) { return value; }
inline float widen(uint16_t f16_bits) { return f16_to_f32(f16_bits); }

// Q8_0 blocks: an f16 scale, then 32 int8 values.
inline constexpr int64_t kQ8Values = 32, kQ8Bytes = 34;
inline float q8_scale(const std::byte* block) {
  uint16_t bits;
  std::memcpy(&bits, block, 2);
#ifdef SNAPSTREAM_AVX2
  return _cvtsh_ss(bits);
#else
  return f16_to_f32(bits);
#endif
}
inline float q8_value(const std::byte* block, int64_t i) { return static_cast<float>(static_cast<int8_t>(block[2 + i])); }

#ifdef SNAPSTREAM_AVX2
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* f16) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f16))); }
// Eight int8 values as f32.
inline __m256 load8_int8(const std::byte* q) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q))));
}
#ifdef __AVX512F__
// Sixteen int8 values as f32 (the avx512 copy).
inline __m512 load16_int8(const std::byte* q) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))));
}
#endif
// The largest and the smallest of eight lanes.
inline float horizontal_max(__m256 v) {
  __m128 half = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  half = _mm_max_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_max_ss(half, _mm_shuffle_ps(half, half, 0x55)));
}
inline float horizontal_min(__m256 v) {
  __m128 half = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  half = _mm_min_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_min_ss(half, _mm_shuffle_ps(half, half, 0x55)));
}
// 32 int32 values in [-128, 127] as int8, in order: packing works within 128-bit halves, and the
// permutation puts each group of four back in place.
inline __m256i pack_int8(const __m256i (&integers)[4]) {
  const __m256i packed =
      _mm256_packs_epi16(_mm256_packs_epi32(integers[0], integers[1]), _mm256_packs_epi32(integers[2], integers[3]));
  return _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}
#endif

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
