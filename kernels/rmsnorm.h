// RMSNorm over rows: out = weight * x / sqrt(mean(x²) + eps).
#pragma once

#include <cstdint>

namespace snapstream::kernels {

// x and out are [rows][dim] (they may alias); weight is [dim].
void rmsnorm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* out);

}  // namespace snapstream::kernels
