// f16 row conversions, eight values at a time with F16C, one at a time otherwise.
#include "kernels/cpu/f16_rows.h"

#include <cstring>

#include "kernels/cpu/widen.h"

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

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
