// The product of many activation rows with a band of f32 weight rows: prefill's GEMM, on Eigen's
// blocked kernels, one copy per instruction set (cpu/float_isa.h).
#pragma once

#include <cstdint>

#include "kernels/cpu/float_isa.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

// y[i * ldy + r] = sum_k x[i * cols + k] * w[r * cols + k] for i < m and r < rows.
void gemm_f32(const float* x, int64_t m, const float* w, int64_t rows, int64_t cols, float* y, int64_t ldy);

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
