// Matrix-matrix product of many activation rows with a band of weight rows, for prefill.
#pragma once

#include <cstdint>

#include "kernels/weight_view.h"

namespace snapstream::kernels::cpu {

// y[i][r] = sum_k x[i][k] * w[r][k] for i < m and r in [row_begin, row_end).
// x is [m][w.cols]; y has row stride ldy. `scratch` holds (row_end - row_begin) * w.cols
// floats and is used to expand non-f32 or strided weights.
void gemm_band(const float* x, int64_t m, const WeightView& w, int64_t row_begin, int64_t row_end, float* y,
               int64_t ldy, float* scratch);

}  // namespace snapstream::kernels::cpu
