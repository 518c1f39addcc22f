// RMS normalisation. The sum of squares accumulates in double, as llama.cpp's does: quantised
// models round the normalised activations to 8 bits next, which turns small differences into steps.
#include "kernels/rmsnorm.h"

#include <cmath>

#include "kernels/errors.h"

namespace snapstream::kernels {
namespace {
constexpr int64_t kLanes = 8;
}  // namespace

void rmsnorm(const float* x, const float* weight, int64_t rows, int64_t dim, float eps, float* out) {
  require(x && weight && out, "rmsnorm", "null buffer");
  require(rows > 0 && dim > 0, "rmsnorm", "empty shape");
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = out + r * dim;
    // Eight running sums instead of one: a single double chain waits on each add, which made
    // this loop a few percent of a batched decode step. Another order moves the double sum by
    // a few of its last bits, which the float mean rounds away unless it sits on a float tie.
    double lanes[kLanes] = {};
    int64_t j = 0;
    for (; j + kLanes <= dim; j += kLanes)
      for (int64_t k = 0; k < kLanes; ++k) lanes[k] += static_cast<double>(xr[j + k] * xr[j + k]);
    double sum_squares = 0.0;
    for (const double lane : lanes) sum_squares += lane;
    for (; j < dim; ++j) sum_squares += static_cast<double>(xr[j] * xr[j]);
    const float mean = static_cast<float>(sum_squares / static_cast<double>(dim));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int64_t j = 0; j < dim; ++j) yr[j] = weight[j] * (scale * xr[j]);
  }
}

}  // namespace snapstream::kernels
