// The value side of attention: a weighted sum of rows, accumulated in registers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/float_isa.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

// For h < heads: out[h * out_stride + d] = the sum over s < count of w_h[s] * rows[s * stride + d],
// for d < width, with w_h = weights + h * weights_stride. With AVX2, rows of 8 or 16 values are dealt
// round-robin to 4 or 2 running sums, added pairwise at the end; wider rows are summed in order
// of s, and so is every column past the last multiple of 8. A row is skipped
// when every head's weight for it is exactly zero, so a masked-out row may hold anything, even
// NaN; a row any head weighs must be finite. The heads are summed side by side, so each row is
// read once for all of them (query heads sharing a KV head) and short rows still keep several
// independent chains in flight; a head's sums do not depend on the others.
void weighted_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const float* rows, int64_t count,
                       int64_t stride, int64_t width, float* out, int64_t out_stride);
// The same over rows of f16 values (`stride` values apart), widened as they are read.
void weighted_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const uint16_t* rows, int64_t count,
                       int64_t stride, int64_t width, float* out, int64_t out_stride);

// The same over Q8_0 cache rows (`row_bytes` apart; width a multiple of 32, blocks of an f16
// scale and 32 int8 values): each row's weight times a block's scale multiplies the block's
// values, read where they lie.
void weighted_q8_0_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const std::byte* rows,
                            int64_t count, int64_t row_bytes, int64_t width, float* out, int64_t out_stride);

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
