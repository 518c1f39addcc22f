// The value side of attention: a weighted sum of rows, accumulated in registers.
#pragma once

#include <cstdint>

namespace snapstream::kernels::cpu {

// out[d] = sum over s < count of weights[s] * rows[s * stride + d], for d < width, summed in
// order of s. Rows whose weight is exactly zero are skipped, so a masked-out row may hold
// anything, even NaN.
void weighted_row_sum(const float* weights, const float* rows, int64_t count, int64_t stride, int64_t width, float* out);

// Several heads' weighted sums of the same rows (query heads sharing a KV head): for h < heads,
// out[h * out_stride + d] equals weighted_row_sum of weights + h * weights_stride (equal as
// floats; a zero can differ in sign). The heads are summed side by side, so each row is read
// once for all of them and short rows still keep several independent chains in flight. A row
// is skipped when every head's weight for it is zero; a row any head weighs must be finite.
void weighted_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const float* rows, int64_t count,
                       int64_t stride, int64_t width, float* out, int64_t out_stride);
// The same over rows of f16 values (`stride` values apart), widened as they are read.
void weighted_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const uint16_t* rows, int64_t count,
                       int64_t stride, int64_t width, float* out, int64_t out_stride);

}  // namespace snapstream::kernels::cpu
