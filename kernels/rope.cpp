// RoPE in f32 as the reference implementations compute it: each pair's angle is the previous
// pair's times theta^(-2/head_dim), so the products round as they do there.
#include "kernels/rope.h"

#include <cmath>

#include "kernels/errors.h"

namespace snapstream::kernels {

void rope(float* x, int64_t heads, int64_t head_dim, int64_t position, const RopeSpec& spec) {
  require(x != nullptr, "rope", "null buffer");
  require(heads > 0 && head_dim > 0 && head_dim % 2 == 0, "rope", "head_dim must be positive and even");
  const int64_t half = head_dim / 2;
  // The second element of pair i sits right after the first, or half a head later.
  const int64_t partner = spec.pairs == RopePairs::Adjacent ? 1 : half;
  const float step = std::pow(spec.theta, -2.0f / static_cast<float>(head_dim));
  float undivided = static_cast<float>(position);
  for (int64_t i = 0; i < half; ++i, undivided *= step) {
    const float angle = spec.divisors != nullptr ? undivided / spec.divisors[i] : undivided;
    const float c = std::cos(angle);
    const float s = std::sin(angle);
    const int64_t first = spec.pairs == RopePairs::Adjacent ? 2 * i : i;
    for (int64_t h = 0; h < heads; ++h) {
      float* a_at = x + h * head_dim + first;
      const float a = a_at[0];
      const float b = a_at[partner];
      a_at[0] = a * c - b * s;
      a_at[partner] = a * s + b * c;
    }
  }
}

}  // namespace snapstream::kernels
