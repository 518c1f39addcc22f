// Softmax with the row maximum subtracted first so exp never overflows.
#include "kernels/softmax.h"

#include <cmath>

#include "kernels/errors.h"

namespace snapstream::kernels {

void softmax(float* x, int64_t n) {
  require(x != nullptr && n > 0, "softmax", "empty row");
  float max_value = x[0];
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > max_value) max_value = x[i];
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max_value);
    sum += x[i];
  }
  for (int64_t i = 0; i < n; ++i) x[i] /= sum;
}

}  // namespace snapstream::kernels
