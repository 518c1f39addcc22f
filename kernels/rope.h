// Rotary position embedding on adjacent pairs (x[2i], x[2i+1]) of each head.
#pragma once

#include <cstdint>

namespace snapstream::kernels {

// Rotates `heads` vectors of head_dim floats stored back to back, all at one position.
// Pair i turns by position * theta^(-2i/head_dim).
void rope(float* x, int64_t heads, int64_t head_dim, int64_t position, float theta);

}  // namespace snapstream::kernels
