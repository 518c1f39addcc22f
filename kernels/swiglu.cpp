// SwiGLU, silu(x) = x / (1 + e^-x).
#include "kernels/swiglu.h"

#include <cmath>

#include "kernels/errors.h"

namespace snapstream::kernels {

void swiglu(float* gate, const float* up, int64_t n) {
  require(gate && up, "swiglu", "null buffer");
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g * (1.0f / (1.0f + std::exp(-g))) * up[i];
  }
}

}  // namespace snapstream::kernels
