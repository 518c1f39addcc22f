// The scales and mins of one Q4_K/Q5_K block in sixteen rows, unpacked side by side with AVX-512
// (unpack_k_scales's bit moves on all rows at once). Only files built for AVX-512 include this;
// the function is static, so no other instruction set's build can share its code.
#pragma once

#include <immintrin.h>

namespace snapstream::kernels::cpu {

// Lane r of scales[0] holds row r's scales 0-3 as bytes, of scales[1] its scales 4-7; mins likewise.
struct KScales16 {
  __m512i scales[2];
  __m512i mins[2];
};

// word0..2: the three 32-bit words of each row's twelve packed scale bytes, row r in lane r.
static inline KScales16 unpack_k_scale_words(__m512i word0, __m512i word1, __m512i word2) {
  const __m512i low6 = _mm512_set1_epi32(0x3F3F3F3F), low4 = _mm512_set1_epi32(0x0F0F0F0F);
  const __m512i top2 = _mm512_set1_epi32(0x03030303);
  KScales16 out;
  out.scales[0] = _mm512_and_si512(word0, low6);
  out.mins[0] = _mm512_and_si512(word1, low6);
  out.scales[1] = _mm512_or_si512(_mm512_and_si512(word2, low4),
                                  _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(word0, 6), top2), 4));
  out.mins[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(word2, 4), low4),
                                _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(word1, 6), top2), 4));
  return out;
}

}  // namespace snapstream::kernels::cpu
