// Prefill GEMM on Eigen's blocked kernels; quantised (or column-sliced) weights are expanded a
// band at a time so the f32 copy stays in cache.
#include "kernels/cpu/gemm.h"

#include <Eigen/Core>

#include "kernels/dequantize.h"

namespace snapstream::kernels::cpu {

void gemm_band(const float* x, int64_t m, const WeightView& w, int64_t row_begin, int64_t row_end, float* y,
               int64_t ldy, float* scratch) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t band = row_end - row_begin;
  const float* weights;
  if (w.dtype == DType::F32 && w.packed()) {
    weights = reinterpret_cast<const float*>(w.row(row_begin));
  } else {
    dequantize_rows(w, row_begin, row_end, scratch);
    weights = scratch;
  }
  Eigen::Map<const RowMajor> xs(x, m, w.cols);
  Eigen::Map<const RowMajor> ws(weights, band, w.cols);
  Eigen::Map<RowMajor, 0, Eigen::OuterStride<>> ys(y + row_begin, m, band, Eigen::OuterStride<>(ldy));
  ys.noalias() = xs * ws.transpose();
}

}  // namespace snapstream::kernels::cpu
