// Activation rows rounded to Q8_K blocks for the integer dot products, eight values at a time
// with AVX2: at a decode batch the scalar rounding took a tenth of the Q4_K matmul's time.
#pragma once

#include <cstdint>

#include "kernels/cpu/float_isa.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

// `blocks` blocks of 256 values each rounded as quantize_q8_k_block rounds one (the same bytes
// and scale, ties of the largest magnitude included), and sums16[j] the sum of q[16j .. 16j+15]
// (kernels/activation_rounding.h). A block holding NaN or infinity is handed to
// quantize_q8_k_block itself.
void quantize_q8_k_blocks(const float* x, int64_t blocks, int8_t* q, float* scales, int16_t* sums16);

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
