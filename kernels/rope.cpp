// RoPE with the frequencies computed in f32 as the reference implementation does.
#include "kernels/rope.h"

#include <cmath>

#include "kernels/errors.h"

namespace snapstream::kernels {

void rope(float* x, int64_t heads, int64_t head_dim, int64_t position, float theta) {
  require(x != nullptr, "rope", "null buffer");
  require(heads > 0 && head_dim > 0 && head_dim % 2 == 0, "rope", "head_dim must be positive and even");
  for (int64_t i = 0; i < head_dim; i += 2) {
    const float frequency = 1.0f / std::pow(theta, static_cast<float>(i) / static_cast<float>(head_dim));
    const float angle = static_cast<float>(position) * frequency;
    const float c = std::cos(angle);
    const float s = std::sin(angle);
    for (int64_t h = 0; h < heads; ++h) {
      float* pair = x + h * head_dim + i;
      const float a = pair[0];
      const float b = pair[1];
      pair[0] = a * c - b * s;
      pair[1] = a * s + b * c;
    }
  }
}

}  // namespace snapstream::kernels
