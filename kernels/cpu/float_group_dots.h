// Dot products of f32 or f16 weight rows regrouped sixteen at a time (kernels/row_groups.h) with
// f32 activation rows: a group's column is one 64-byte (f16: 32-byte) run, so one fused
// multiply-add takes a broadcast activation into sixteen rows' sums and no horizontal sum is left
// to do. Built with AVX-512 whatever the build targets and only called where the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace snapstream::kernels::cpu {

// y[i * y_stride + r] = (weight row r) · x[i] for r < rows and i < m, x's rows `cols` apart. w
// holds ceil(rows / 16) groups of `cols` columns, the last one padded with zero rows. Each sum is
// one chain of fused multiply-adds over the columns in order, on the weights widened to f32
// exactly, so its bits depend on its weight row and activation row only, never on the batch, the
// thread or the groups around it, and an f16 matrix gives the bits of its f32 widening.
using FloatGroupDots = void (*)(const std::byte* w, int64_t rows, int64_t cols, const float* x, int64_t m, float* y,
                                int64_t y_stride);

// The kernel this CPU runs for `dtype` (chosen once), or null for other dtypes or where the CPU
// has no AVX-512: such rows stay as stored.
FloatGroupDots float_group_dots(DType dtype);

#if defined(__x86_64__)
void f32_group_dots_avx512(const std::byte* w, int64_t rows, int64_t cols, const float* x, int64_t m, float* y,
                           int64_t y_stride);
void f16_group_dots_avx512(const std::byte* w, int64_t rows, int64_t cols, const float* x, int64_t m, float* y,
                           int64_t y_stride);
#endif

}  // namespace snapstream::kernels::cpu
