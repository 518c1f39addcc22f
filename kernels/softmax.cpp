// Softmax with the row maximum subtracted first so exp never overflows.
#include "kernels/softmax.h"

#include "kernels/cpu/exp_row.h"
#include "kernels/errors.h"

namespace snapstream::kernels {

void softmax(float* x, int64_t n) {
  require(x != nullptr && n > 0, "softmax", "empty row");
  float max_value = x[0];
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > max_value) max_value = x[i];
  const float inverse = 1.0f / cpu::exp_shifted_row(x, n, max_value);
  for (int64_t i = 0; i < n; ++i) x[i] *= inverse;
}

}  // namespace snapstream::kernels
