// Numerically stable softmax over one row, in place.
#pragma once

#include <cstdint>

namespace snapstream::kernels {

void softmax(float* x, int64_t n);

}  // namespace snapstream::kernels
