// The value side of attention: a weighted sum of rows, accumulated in registers.
#pragma once

#include <cstdint>

namespace snapstream::kernels::cpu {

// out[d] = sum over s < count of weights[s] * rows[s * stride + d], for d < width, summed in
// order of s. Rows whose weight is exactly zero are skipped, so a masked-out row may hold
// anything, even NaN.
void weighted_row_sum(const float* weights, const float* rows, int64_t count, int64_t stride, int64_t width, float* out);

}  // namespace snapstream::kernels::cpu
