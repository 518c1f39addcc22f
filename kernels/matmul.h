// y = x · Wᵀ for f32 activations x [m][k] and a weight matrix W [n][k] in any dtype.
#pragma once

#include <cstdint>

#include "kernels/thread_pool.h"
#include "kernels/weight_view.h"

namespace snapstream::kernels {

// y is [m][w.rows]. m == 1 is the decode path (one pass over W); m > 1 is prefill (GEMM).
void matmul(ThreadPool& pool, const float* x, int64_t m, const WeightView& w, float* y);

}  // namespace snapstream::kernels
