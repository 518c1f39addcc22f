// Index of the largest value; the earliest index wins ties.
#pragma once

#include <cstdint>

namespace snapstream::kernels {

int64_t argmax(const float* x, int64_t n);

}  // namespace snapstream::kernels
