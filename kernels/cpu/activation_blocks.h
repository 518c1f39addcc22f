// Activation rows rounded to Q8_K and Q8_0 blocks for the integer dot products, eight values at a
// time with AVX2: at a decode batch of 16 the scalar rounding took a tenth of the Q4_K and Q8_0
// matmuls' time.
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

// `blocks` blocks of 32 values each rounded as quantize_q8_0_block rounds one, with biased[i] =
// q[i] + 128 and bias_offsets[b] = -128 times the sum of block b's q (QuantisedRow). A block
// holding NaN or infinity is handed to quantize_q8_0_block itself.
void quantize_q8_0_blocks(const float* x, int64_t blocks, int8_t* q, float* scales, uint8_t* biased,
                          int32_t* bias_offsets);

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
