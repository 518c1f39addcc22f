// exp over a row of scores, sixteen or eight at a time in the copies built for AVX-512 or AVX2
// (the same bits as the portable loop compiled with fused multiply-adds; the x86_64 copy, which
// has none, rounds each step apart and may differ, within the same 2 ulp): softmax and attention
// spend most of their time here on small heads, where a scalar libm call per score dominates.
#pragma once

#include <cstdint>

#include "kernels/cpu/float_isa.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

// x[i] = exp(x[i] - shift) for i < n, within 2 ulp of the exact value (exactly 0 below
// about exp(-87.3), the smallest normal float; -inf gives 0, NaN stays NaN). Returns the sum of
// the new values, added in eight interleaved partial sums then combined in a fixed order, so
// a row's sum depends only on the row.
float exp_shifted_row(float* x, int64_t n, float shift);

// out[i] = exp(factor · in[i]) for i < n, with the same accuracy and edges.
void exp_row(const float* in, float factor, float* out, int64_t n);

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
