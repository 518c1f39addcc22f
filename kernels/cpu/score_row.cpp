// Written as independent lanes so GCC vectorises both loops without -ffast-math: a float max
// reduction in one variable is not reassociated, eight running maxima are.
#include "kernels/cpu/score_row.h"

#include <limits>

namespace snapstream::kernels::cpu {

float scale_live_scores(float* scores, const uint8_t* live, int64_t n, float scale, float start) {
  constexpr float kRuledOut = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) scores[i] = live[i] != 0 ? scores[i] * scale : kRuledOut;
  constexpr int kLanes = 8;
  float lanes[kLanes];
  for (float& lane : lanes) lane = start;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lanes[k] = scores[i + k] > lanes[k] ? scores[i + k] : lanes[k];
  for (; i < n; ++i) lanes[0] = scores[i] > lanes[0] ? scores[i] : lanes[0];
  float largest = start;
  for (const float lane : lanes) largest = lane > largest ? lane : largest;
  return largest;
}

}  // namespace snapstream::kernels::cpu
