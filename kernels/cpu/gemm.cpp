// Prefill GEMM; quantised (or column-sliced) weights are expanded a band at a time so the f32
// copy stays in cache.
#include "kernels/cpu/gemm.h"

#include "kernels/cpu/gemm_f32.h"
#include "kernels/dequantize.h"

namespace snapstream::kernels::cpu {

void gemm_band(const float* x, int64_t m, const WeightView& w, int64_t row_begin, int64_t row_end, float* y,
               int64_t ldy, float* scratch) {
  const int64_t band = row_end - row_begin;
  const float* weights;
  if (w.dtype == DType::F32 && w.packed()) {
    weights = reinterpret_cast<const float*>(w.row(row_begin));
  } else {
    dequantize_rows(w, row_begin, row_end, scratch);
    weights = scratch;
  }
  gemm_f32(x, m, weights, band, w.cols, y + row_begin, ldy);
}

}  // namespace snapstream::kernels::cpu
