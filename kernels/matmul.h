// y = x · Wᵀ for f32 activations x [m][k] and a weight matrix W [n][k] in any dtype.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/thread_pool.h"
#include "kernels/weight_view.h"

namespace snapstream::kernels {

enum class MatmulPath : uint8_t {
  Auto,     // row dot products up to 16 rows, a GEMM for more (prefill)
  RowDots,  // every output is one dot product of a weight row with an activation row, whatever
            // m is: a row's result never depends on the other rows, so batching is invisible
};

// How x arrives: exact, or already on the 8-bit grid (rounded over a wider row than this
// column slice, as tensor-parallel shards do).
enum class ActivationGrid : uint8_t { Exact, Rounded };

// y is [m][w.rows]. Either path reads W from memory once. Block-quantised weights of whole
// blocks multiply as integers with x quantised to the reference's 8-bit grid, in any path and
// batch (cpu/integer_dots.h; an x already on the grid quantises to the same integers); column
// slices that cut a block meet x rounded to that grid in floats (activation_rounding.h).
void matmul(ThreadPool& pool, const float* x, int64_t m, const WeightView& w, float* y,
            MatmulPath path = MatmulPath::Auto, ActivationGrid grid = ActivationGrid::Exact);

// ys[i] = x · ws[i]ᵀ for matrices that read the same x (a layer's q, k and v; gate and up), each
// with the bits matmul gives it alone. Where their weights share an activation grid, x is
// quantised once and all their rows split over the threads in one hand-off.
void matmul_group(ThreadPool& pool, const float* x, int64_t m, std::span<const WeightView> ws, std::span<float* const> ys,
                  MatmulPath path = MatmulPath::Auto);

}  // namespace snapstream::kernels
