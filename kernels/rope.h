// Rotary position embedding on adjacent pairs (x[2i], x[2i+1]) of each head.
#pragma once

#include <cstdint>

namespace snapstream::kernels {

// Rotates `heads` vectors of head_dim floats stored back to back, all at one position.
// Pair i turns by position * theta^(-2i/head_dim). A negative position turns back: rotations
// compose, so rope(rope(x, a), -b) is x at position a - b (up to rounding).
void rope(float* x, int64_t heads, int64_t head_dim, int64_t position, float theta);

}  // namespace snapstream::kernels
