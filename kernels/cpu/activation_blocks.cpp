// Q8_K and Q8_0 activation blocks: the largest magnitude from running maxima (and, for Q8_K's
// signed extreme, a running minimum), then one multiply, round and narrow per eight values, the
// blocks' integer sums taken from the same lanes.
#include "kernels/cpu/activation_blocks.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/activation_rounding.h"
#include "kernels/cpu/widen.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN
namespace {

// Q8_K blocks, and the runs of values QuantisedRow::sums16 sums.
constexpr int64_t kQ8KValues = 256, kSumRun = 16;

void sum_runs(const int8_t* q, int16_t* sums16) {
  for (int64_t j = 0; j < kQ8KValues / kSumRun; ++j) {
    int sum = 0;
    for (int64_t i = 0; i < kSumRun; ++i) sum += q[kSumRun * j + i];
    sums16[j] = static_cast<int16_t>(sum);
  }
}

void scalar_q8_k_block(const float* x, int8_t* q, float& scale, int16_t* sums16) {
  quantize_q8_k_block(x, kQ8KValues, q, scale);
  sum_runs(q, sums16);
}

void scalar_q8_0_block(const float* x, int8_t* q, float& scale, uint8_t* biased, int32_t& bias_offset) {
  quantize_q8_0_block(x, kQ8Values, q, scale);
  int32_t sum = 0;
  for (int64_t i = 0; i < kQ8Values; ++i) {
    biased[i] = static_cast<uint8_t>(q[i] + 128);
    sum += q[i];
  }
  bias_offset = -128 * sum;
}

#ifdef SNAPSTREAM_AVX2
int32_t horizontal_sum(__m256i v) {
  __m128i half = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  half = _mm_hadd_epi32(half, half);
  return _mm_cvtsi128_si32(_mm_hadd_epi32(half, half));
}

// False for a block holding NaN or infinity, which is left to the scalar path.
bool vector_q8_k_block(const float* x, int8_t* q, float& scale, int16_t* sums16) {
  const __m256 sign = _mm256_set1_ps(-0.0f), finite_limit = _mm256_set1_ps(std::numeric_limits<float>::max());
  __m256 high = _mm256_setzero_ps(), low = _mm256_setzero_ps();
  int finite = 0xFF;
  for (int64_t i = 0; i < kQ8KValues; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    finite &= _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, v), finite_limit, _CMP_LE_OQ));
    high = _mm256_max_ps(high, v);
    low = _mm256_min_ps(low, v);
  }
  if (finite != 0xFF) return false;
  // The scalar path's extreme is the first value of the largest magnitude; only when the largest
  // and the most negative value have the same magnitude can that be either of them.
  const float largest = horizontal_max(high), smallest = horizontal_min(low);
  float extreme = largest > -smallest ? largest : smallest;
  if (largest == -smallest && largest != 0.0f) {
    int64_t first = 0;
    while (std::fabs(x[first]) != largest) ++first;
    extreme = x[first];
  }
  if (extreme == 0.0f) {
    std::memset(q, 0, kQ8KValues);
    std::memset(sums16, 0, sizeof(int16_t) * (kQ8KValues / kSumRun));
    scale = 0.0f;
    return true;
  }
  const float inverse = -127.0f / extreme;
  scale = 1.0f / inverse;
  const __m256 factor = _mm256_set1_ps(inverse), top = _mm256_set1_ps(127.0f);
  for (int64_t i = 0; i < kQ8KValues; i += 32) {
    __m256i integers[4];
    for (int c = 0; c < 4; ++c) {
      // A multiply, then a round: fused, the product would not be rounded first as the scalar
      // path's is.
      const __m256 product = _mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * c), factor);
      const __m256 rounded = _mm256_round_ps(product, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      integers[c] = _mm256_cvttps_epi32(_mm256_min_ps(rounded, top));
    }
    sums16[i / kSumRun] = static_cast<int16_t>(horizontal_sum(_mm256_add_epi32(integers[0], integers[1])));
    sums16[i / kSumRun + 1] = static_cast<int16_t>(horizontal_sum(_mm256_add_epi32(integers[2], integers[3])));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i), pack_int8(integers));
  }
  return true;
}

bool vector_q8_0_block(const float* x, int8_t* q, float& scale, uint8_t* biased, int32_t& bias_offset) {
  const __m256 sign = _mm256_set1_ps(-0.0f), finite_limit = _mm256_set1_ps(std::numeric_limits<float>::max());
  __m256 values[4];
  __m256 largest = _mm256_setzero_ps();
  int finite = 0xFF;
  for (int c = 0; c < 4; ++c) {
    values[c] = _mm256_loadu_ps(x + 8 * c);
    const __m256 magnitude = _mm256_andnot_ps(sign, values[c]);
    finite &= _mm256_movemask_ps(_mm256_cmp_ps(magnitude, finite_limit, _CMP_LE_OQ));
    largest = _mm256_max_ps(largest, magnitude);
  }
  if (finite != 0xFF) return false;
  const float amax = horizontal_max(largest);
  const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
  scale = f16_to_f32(f32_to_f16(amax / 127.0f));
  __m256i integers[4];
  for (int c = 0; c < 4; ++c) {
    const __m256 product = _mm256_mul_ps(values[c], _mm256_set1_ps(inverse));
    integers[c] = _mm256_cvttps_epi32(_mm256_round_ps(product, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  bias_offset = -128 * horizontal_sum(_mm256_add_epi32(_mm256_add_epi32(integers[0], integers[1]),
                                                       _mm256_add_epi32(integers[2], integers[3])));
  const __m256i packed = pack_int8(integers);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), packed);
  const __m256i flip_sign = _mm256_set1_epi8(static_cast<char>(0x80));  // q + 128 as an unsigned byte
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(biased), _mm256_xor_si256(packed, flip_sign));
  return true;
}
#endif

}  // namespace

void quantize_q8_k_blocks(const float* x, int64_t blocks, int8_t* q, float* scales, int16_t* sums16) {
  for (int64_t b = 0; b < blocks; ++b, x += kQ8KValues, q += kQ8KValues, sums16 += kQ8KValues / kSumRun) {
#ifdef SNAPSTREAM_AVX2
    if (vector_q8_k_block(x, q, scales[b], sums16)) continue;
#endif
    scalar_q8_k_block(x, q, scales[b], sums16);
  }
}

void quantize_q8_0_blocks(const float* x, int64_t blocks, int8_t* q, float* scales, uint8_t* biased,
                          int32_t* bias_offsets) {
  for (int64_t b = 0; b < blocks; ++b, x += kQ8Values, q += kQ8Values, biased += kQ8Values) {
#ifdef SNAPSTREAM_AVX2
    if (vector_q8_0_block(x, q, scales[b], biased, bias_offsets[b])) continue;
#endif
    scalar_q8_0_block(x, q, scales[b], biased, bias_offsets[b]);
  }
}

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
