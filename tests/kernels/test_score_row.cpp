// scale_live_scores against the plain loop it replaces: scaled live scores, -inf for empty
// entries, and the same maximum, including rows with no live entry and NaN scores.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/score_row.h"

using snapstream::kernels::cpu::scale_live_scores;

TEST_CASE("scaling live scores matches the plain loop, maximum included", "[score_row]") {
  const int64_t n = GENERATE(0, 1, 7, 8, 9, 33, 161);
  const int pattern = GENERATE(0, 1, 2);  // all live, every third empty, none live
  std::mt19937 rng(static_cast<uint32_t>(n * 3 + pattern));
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> scores(static_cast<size_t>(n));
  std::vector<uint8_t> live(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    scores[static_cast<size_t>(i)] = normal(rng);
    live[static_cast<size_t>(i)] = pattern == 0 || (pattern == 1 && i % 3 != 0);
  }
  if (n > 5) scores[5] = std::numeric_limits<float>::quiet_NaN();
  const float start = -1.5f, scale = 0.125f;

  std::vector<float> expected = scores;
  float expected_max = start;
  for (int64_t i = 0; i < n; ++i) {
    float& s = expected[static_cast<size_t>(i)];
    s = live[static_cast<size_t>(i)] ? s * scale : -std::numeric_limits<float>::infinity();
    expected_max = std::max(expected_max, s);
  }
  const float largest = scale_live_scores(scores.data(), live.data(), n, scale, start);
  CHECK(largest == expected_max);
  for (int64_t i = 0; i < n; ++i) {
    const float got = scores[static_cast<size_t>(i)], want = expected[static_cast<size_t>(i)];
    INFO("entry " << i);
    CHECK((std::isnan(want) ? std::isnan(got) : got == want));
  }
}
