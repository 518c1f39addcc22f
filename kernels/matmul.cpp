// Argument checks and the split of matmul work over threads; the inner loops live in cpu/.
#include "kernels/matmul.h"

#include <algorithm>
#include <vector>

#include "kernels/activation_rounding.h"
#include "kernels/cpu/dot.h"
#include "kernels/cpu/dot_k_quants.h"
#include "kernels/cpu/gemm.h"
#include "kernels/dequantize.h"
#include "kernels/errors.h"

namespace snapstream::kernels {
namespace {
// Weight rows per GEMM band: small enough that an expanded band stays in L2.
constexpr int64_t kBandRows = 64;
// Below this many activation rows, reading W once per row is cheaper than a GEMM.
constexpr int64_t kGemmMinRows = 4;
}  // namespace

void matmul(ThreadPool& pool, const float* exact_x, int64_t m, const WeightView& w, float* y, MatmulPath path,
            ActivationGrid grid) {
  require(exact_x != nullptr && y != nullptr && w.data != nullptr, "matmul", "null buffer");
  require(m > 0 && w.rows > 0, "matmul", "empty shape");
  require(w.first_col >= 0 && w.first_col < block_layout(w.dtype).elements, "matmul", "column slice outside its block");
  // A packed matrix holds whole blocks; a column slice (strided) may start or end inside one.
  require(w.stride != 0 || row_length_supported(w.dtype, w.cols), "matmul",
          "row length " + std::to_string(w.cols) + " is not valid for " + std::string(dtype_name(w.dtype)));

  if ((path == MatmulPath::RowDots || m < kGemmMinRows) && cpu::has_k_quant_dot(w.dtype) && w.first_col == 0 &&
      row_length_supported(w.dtype, w.cols)) {
    // K-quant rows meet the activations as Q8_K integers, quantised once for every weight row.
    thread_local std::vector<cpu::Q8KRow> activations;
    if (activations.size() < static_cast<size_t>(m)) activations.resize(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) cpu::quantize_q8_k_row(exact_x + i * w.cols, w.cols, activations[static_cast<size_t>(i)]);
    const std::vector<cpu::Q8KRow>& rows = activations;
    pool.parallel_for(w.rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        for (int64_t i = 0; i < m; ++i) y[i * w.rows + r] = cpu::dot_k_quant(w.dtype, w.row(r), rows[static_cast<size_t>(i)]);
    }, m * w.cols);
    return;
  }
  // Block-quantised weights meet activations rounded to 8 bits, as in the reference (see
  // activation_rounding.h). The buffer belongs to the calling thread and only grows.
  const float* x = exact_x;
  if (activation_block(w.dtype) != 0 && grid == ActivationGrid::Exact) {
    thread_local std::vector<float> rounded;
    if (rounded.size() < static_cast<size_t>(m * w.cols)) rounded.resize(static_cast<size_t>(m * w.cols));
    round_activations(w.dtype, exact_x, m, w.cols, rounded.data());
    x = rounded.data();
  }

  if (path == MatmulPath::RowDots || m < kGemmMinRows) {
    pool.parallel_for(w.rows, [&](int64_t begin, int64_t end) {
      if (w.dtype == DType::F32) {
        // Tiles of up to 4 weight rows x 4 activation rows, each chunk loaded once per tile. With
        // few activation rows one weight row at a time streams memory best.
        const int64_t stride = w.row_stride() / static_cast<int64_t>(sizeof(float));
        const int64_t tile_rows = m < kGemmMinRows ? 1 : 4;
        for (int64_t r = begin; r < end; r += tile_rows) {
          const int rows = static_cast<int>(std::min<int64_t>(tile_rows, end - r));
          for (int64_t i = 0; i < m; i += 4) {
            const float* xs[4] = {x + i * w.cols, x + std::min(i + 1, m - 1) * w.cols, x + std::min(i + 2, m - 1) * w.cols,
                                  x + std::min(i + 3, m - 1) * w.cols};
            const bool prefetch = i == 0 && tile_rows > 1 && r + 2 * tile_rows <= end;
            cpu::dot_f32_tile(reinterpret_cast<const float*>(w.row(r)), stride, rows, xs,
                              static_cast<int>(std::min<int64_t>(4, m - i)), w.cols, y + i * w.rows + r, w.rows,
                              prefetch ? reinterpret_cast<const float*>(w.row(r + tile_rows)) : nullptr);
          }
        }
        return;
      }
      if (cpu::has_fused_dot(w.dtype) && w.first_col == 0 && row_length_supported(w.dtype, w.cols)) {
        for (int64_t r = begin; r < end; ++r)
          for (int64_t i = 0; i < m; ++i) y[i * w.rows + r] = cpu::dot_row(w.dtype, w.row(r), x + i * w.cols, w.cols);
        return;
      }
      // Other block types and slices that cut blocks: each weight row is decoded once into a
      // buffer that stays in L1, then meets every activation row through the f32 kernel.
      std::vector<float> decoded(static_cast<size_t>(w.cols));
      for (int64_t r = begin; r < end; ++r) {
        dequantize_span(w.dtype, w.row(r), w.first_col, w.cols, decoded.data());
        for (int64_t i = 0; i < m; i += 4) {
          const float* xs[4] = {x + i * w.cols, x + std::min(i + 1, m - 1) * w.cols, x + std::min(i + 2, m - 1) * w.cols,
                                x + std::min(i + 3, m - 1) * w.cols};
          cpu::dot_f32_tile(decoded.data(), w.cols, 1, xs, static_cast<int>(std::min<int64_t>(4, m - i)), w.cols,
                            y + i * w.rows + r, w.rows, nullptr);
        }
      }
    }, m * w.cols);
    return;
  }
  const int64_t bands = (w.rows + kBandRows - 1) / kBandRows;
  pool.parallel_for(bands, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(w.dtype == DType::F32 && w.packed() ? 0 : static_cast<size_t>(kBandRows * w.cols));
    for (int64_t band = begin; band < end; ++band) {
      const int64_t row_begin = band * kBandRows;
      const int64_t row_end = std::min(w.rows, row_begin + kBandRows);
      cpu::gemm_band(x, m, w, row_begin, row_end, y, w.rows, scratch.data());
    }
  }, m * w.cols * kBandRows);
}

}  // namespace snapstream::kernels
