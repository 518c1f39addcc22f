// Whole rows of f16 values widened to f32 and f32 rows narrowed to f16, as the cache and the
// dequantiser store and read them, and runs of Q8_0 blocks narrowed and widened, as a Q8_0 cache
// stores them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/float_isa.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

// n stored f16 values (read bytewise: a row need not be aligned) as f32.
void widen_f16_row(const std::byte* f16, int64_t n, float* out);

// n f32 values stored as f16 (written bytewise), rounded as f32_to_f16 rounds: the hardware
// conversion rounds to nearest even as it does, but keeps a NaN's payload, so eight values
// holding a NaN take the scalar path.
void narrow_f16_row(const float* values, int64_t n, std::byte* f16);

// 32 * blocks f32 values as `blocks` Q8_0 blocks, byte for byte as quantize_row writes them
// (a block holding NaN or infinity is handed to it).
void narrow_q8_0_blocks(const float* values, int64_t blocks, std::byte* q8_0);

// `blocks` consecutive Q8_0 blocks (an f16 scale, then 32 int8 values; read bytewise) as their
// 32 * blocks f32 values, each the scale times the integer.
void widen_q8_0_blocks(const std::byte* q8_0, int64_t blocks, float* out);

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
