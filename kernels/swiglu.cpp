// SwiGLU, silu(x) = x / (1 + e^-x).
#include "kernels/swiglu.h"

#include <algorithm>

#include "kernels/cpu/exp_row.h"
#include "kernels/errors.h"

namespace snapstream::kernels {

void swiglu(float* gate, const float* up, int64_t n) {
  require(gate && up, "swiglu", "null buffer");
  // e^-x a chunk at a time from the vectorised exp (a libm call per value dominated the MLP).
  constexpr int64_t kChunk = 256;
  float decay[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t count = std::min(kChunk, n - start);
    cpu::exp_row(gate + start, -1.0f, decay, count);
    for (int64_t i = 0; i < count; ++i) {
      const float g = gate[start + i];
      gate[start + i] = g * (1.0f / (1.0f + decay[i])) * up[start + i];
    }
  }
}

}  // namespace snapstream::kernels
