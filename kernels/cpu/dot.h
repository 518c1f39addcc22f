// Dot products of one weight row (in its storage dtype) with an f32 activation vector.
// These are the inner loops of decode, where every weight is read once per step.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace snapstream::kernels::cpu {

float dot_f32(const float* w, const float* x, int64_t n);
float dot_f16(const uint16_t* w, const float* x, int64_t n);
float dot_bf16(const uint16_t* w, const float* x, int64_t n);
// n must be a multiple of kQ8BlockSize; blocks are read unaligned.
float dot_q8_0(const std::byte* w, const float* x, int64_t n);

float dot_row(DType dtype, const std::byte* row, const float* x, int64_t n);

}  // namespace snapstream::kernels::cpu
