// exp as 2^n · e^r with n = round(x / ln 2) and |r| <= ln(2)/2, e^r from its Taylor series to
// degree 7 (truncation below 1e-8 relative on that range). Branch-free, so loops over it vectorise.
#include "kernels/cpu/exp_row.h"

#include <algorithm>
#include <bit>
#include <limits>

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

}  // namespace

void exp_row(const float* in, float factor, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_of(factor * in[i]);
}

float exp_shifted_row(float* x, int64_t n, float shift) {
  for (int64_t i = 0; i < n; ++i) x[i] = exp_of(x[i] - shift);
  float lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += x[i + l];
  for (int l = 0; i < n; ++i, ++l) lanes[l] += x[i];
  return ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
}

}  // namespace snapstream::kernels::cpu
