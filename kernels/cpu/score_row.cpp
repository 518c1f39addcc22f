// Scaling, masking and the row maximum in one pass. AVX2 builds take eight entries a register;
// the portable loops are written as eight independent lanes, since a float max reduction in one
// variable is not reassociated without -ffast-math. Both keep running maximum k over the
// entries i with i mod 8 = k, then fold the eight in one order, so they return the same float.
#include "kernels/cpu/score_row.h"

#include <limits>

#include "kernels/cpu/widen.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

float scale_live_scores(float* scores, const uint8_t* live, int64_t n, float scale, float start) {
  constexpr float kRuledOut = -std::numeric_limits<float>::infinity();
  constexpr int kLanes = 8;
  float lanes[kLanes];
  int64_t i = 0;
#ifdef SNAPSTREAM_AVX2
  // The byte mask widened to lanes; GCC 12 leaves the portable loops scalar on AVX2.
  const __m256 scale_lanes = _mm256_set1_ps(scale), ruled_out = _mm256_set1_ps(kRuledOut);
  __m256 largest_lanes = _mm256_set1_ps(start);
  for (; i + kLanes <= n; i += kLanes) {
    const __m128i live_bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(live + i));
    const __m256i live_lanes = _mm256_cvtepu8_epi32(live_bytes);
    const __m256 empty = _mm256_castsi256_ps(_mm256_cmpeq_epi32(live_lanes, _mm256_setzero_si256()));
    const __m256 scaled = _mm256_blendv_ps(_mm256_mul_ps(_mm256_loadu_ps(scores + i), scale_lanes), ruled_out, empty);
    _mm256_storeu_ps(scores + i, scaled);
    // max_ps(a, b) is a > b ? a : b lane by lane, the portable loop's comparison.
    largest_lanes = _mm256_max_ps(scaled, largest_lanes);
  }
  _mm256_storeu_ps(lanes, largest_lanes);
#else
  for (float& lane : lanes) lane = start;
  for (int64_t j = 0; j < n; ++j) scores[j] = live[j] != 0 ? scores[j] * scale : kRuledOut;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lanes[k] = scores[i + k] > lanes[k] ? scores[i + k] : lanes[k];
#endif
  for (; i < n; ++i) {
#ifdef SNAPSTREAM_AVX2
    scores[i] = live[i] != 0 ? scores[i] * scale : kRuledOut;
#endif
    lanes[0] = scores[i] > lanes[0] ? scores[i] : lanes[0];
  }
  float largest = start;
  for (const float lane : lanes) largest = lane > largest ? lane : largest;
  return largest;
}

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
