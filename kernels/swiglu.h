// The SwiGLU gate of the Llama MLP: gate = silu(gate) * up, elementwise.
#pragma once

#include <cstdint>

namespace snapstream::kernels {

void swiglu(float* gate, const float* up, int64_t n);

}  // namespace snapstream::kernels
