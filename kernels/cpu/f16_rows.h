// Whole rows of f16 values widened to f32 and f32 rows narrowed to f16, as the cache and the
// dequantiser store and read them.
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

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
