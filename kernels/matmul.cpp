// Argument checks and the split of matmul work over threads; the inner loops live in cpu/.
#include "kernels/matmul.h"

#include <algorithm>
#include <vector>

#include "kernels/activation_rounding.h"
#include "kernels/cpu/dot.h"
#include "kernels/cpu/float_group_dots.h"
#include "kernels/cpu/integer_dots.h"
#include "kernels/cpu/gemm.h"
#include "kernels/dequantize.h"
#include "kernels/errors.h"
#include "kernels/row_groups.h"

namespace snapstream::kernels {
namespace {
// Weight rows per GEMM band: small enough that an expanded band stays in L2.
constexpr int64_t kBandRows = 64;
// Below this many activation rows, reading W once per row is cheaper than a tile of four rows.
constexpr int64_t kGemmMinRows = 4;
// Short prompts go through the tiles as well: below this many rows, expanding and packing a
// band for the GEMM costs more than it saves (llama-110m prefill of 6, 12 and 16 tokens: f32
// 1.7-2.4 times as fast, f16 1.2 times at 16; from 32 rows on, f16 is faster in the GEMM).
constexpr int64_t kPrefillGemmMinRows = 17;
// A matrix this small is read from cache by every thread that needs it (L2 is 512 KiB or more
// on the x86 cores this targets).
constexpr int64_t kSmallMatrixBytes = 256 << 10;
// Rows this short (f32 values) are summed eight at a time when few activation rows meet them.
constexpr int64_t kShortRow = 256;
// Quantising an activation value costs about as much as this many multiply-adds.
constexpr int64_t kQuantiseCostPerValue = 16;
// Weight rows a thread takes at a time in the integer path: the widest group the tiles
// interleave (two groups of sixteen, cpu/integer_dots_x86.cpp).
constexpr int64_t kThreadRowGroup = 32;
static_assert(kThreadRowGroup % kRowGroupRows == 0, "a thread's share holds whole row groups");
// Block-quantised rows of whole blocks: each activation row is quantised once to its 8-bit grid,
// then each thread's band of weight rows meets all of them (cpu/integer_dots.h), so a weight
// block is read and unpacked once for many activation rows, and the result of a row never
// depends on the batch it came in. Several matrices on
// the same grid share the quantised rows and one split of their rows over the threads.
bool integer_ready(const WeightView& w) {
  return cpu::has_integer_dot(w.dtype) && w.first_col == 0 && row_length_supported(w.dtype, w.cols);
}

// Weight rows [begin, end) of w against the quantised activation rows, into y (w.rows apart).
void integer_rows(const WeightView& w, int64_t begin, int64_t end, const cpu::QuantisedRowView* x, int64_t m, float* y) {
  const int64_t blocks = w.cols / block_layout(w.dtype).elements;
  if (w.layout == WeightLayout::RowGroups) {
    cpu::integer_group_dots(cpu::integer_dot_kernels(), w.dtype)(w.row(begin), (end - begin) / kRowGroupRows, blocks, x, m, y + begin, w.rows);
    return;
  }
  cpu::integer_band_dots(cpu::integer_dot_kernels(), w.dtype)(w.row(begin), w.row_stride(), end - begin, blocks, x, m,
                                                              y + begin, w.rows);
}

void integer_matmul(ThreadPool& pool, const float* x, int64_t m, std::span<const WeightView> ws, std::span<float* const> ys) {
  const WeightView& first = ws.front();
  thread_local std::vector<QuantisedRow> rows;
  if (rows.size() < static_cast<size_t>(m)) rows.resize(static_cast<size_t>(m));
  thread_local std::vector<cpu::QuantisedRowView> views;
  if (views.size() < static_cast<size_t>(m)) views.resize(static_cast<size_t>(m));
  // The workers use the caller's rows and views: a thread_local named inside a lambda would be
  // their own. Prefill's many rows quantise in parallel, decode's few on the caller.
  QuantisedRow* row_storage = rows.data();
  cpu::QuantisedRowView* view_storage = views.data();
  pool.parallel_for(m, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      QuantisedRow& row = row_storage[i];
      quantise_activation_row(first.dtype, x + i * first.cols, first.cols, row);
      view_storage[i] = {row.q.data(), row.scales.data(), row.sums16.data(), row.biased.data(), row.bias_offsets.data(),
                        row.sub_sum_pairs.data()};
    }
  }, kQuantiseCostPerValue * first.cols);
  const cpu::QuantisedRowView* row_views = view_storage;
  int64_t total_rows = 0;
  for (const WeightView& w : ws) total_rows += w.rows;
  // The threads take whole groups of kThreadRowGroup rows, so no share ends inside the groups the
  // tiles take (a 576-row matrix in eight chunks of 72 left a slow remainder in each).
  const int64_t row_groups = (total_rows + kThreadRowGroup - 1) / kThreadRowGroup;
  pool.parallel_for(row_groups, [&](int64_t first_group, int64_t end_group) {
    const int64_t begin = first_group * kThreadRowGroup, end = std::min(total_rows, end_group * kThreadRowGroup);
    // Each matrix's share of [begin, end), in the order the rows are numbered.
    int64_t matrix_first = 0;
    for (size_t k = 0; k < ws.size(); matrix_first += ws[k].rows, ++k) {
      const WeightView& w = ws[k];
      const int64_t row_begin = std::max<int64_t>(begin - matrix_first, 0);
      const int64_t row_end = std::min<int64_t>(end - matrix_first, w.rows);
      if (row_begin >= row_end) continue;
      integer_rows(w, row_begin, row_end, row_views, m, ys[k]);
    }
  }, kThreadRowGroup * m * first.cols);
}

// f32 or f16 rows regrouped sixteen at a time, for any number of activation rows: each sum's bits
// depend on its weight row and activation row only (cpu/float_group_dots.h), so prefill, decode
// and any batch agree.
void float_group_matmul(ThreadPool& pool, cpu::FloatGroupDots group_dots, const float* x, int64_t m, const WeightView& w,
                        float* y) {
  if (m >= 2 * kGemmMinRows && w.total_bytes() <= kSmallMatrixBytes) {
    // As in row_dots' small-matrix case: the matrix stays in every core's cache, so the threads
    // split the activation rows and each writes whole output rows.
    pool.parallel_for(m, [&](int64_t begin, int64_t end) {
      group_dots(w.data, w.rows, w.cols, x + begin * w.cols, end - begin, y + begin * w.rows, w.rows);
    }, w.rows * w.cols);
    return;
  }
  const int64_t row_groups = (w.rows + kRowGroupRows - 1) / kRowGroupRows;
  pool.parallel_for(row_groups, [&](int64_t first_group, int64_t end_group) {
    const int64_t begin = first_group * kRowGroupRows, end = std::min(w.rows, end_group * kRowGroupRows);
    group_dots(w.row(begin), end - begin, w.cols, x, m, y + begin, w.rows);
  }, kRowGroupRows * m * w.cols);
}

// Every output of weight rows [begin, end) against activation rows [0, m): y[i * w.rows + r].
// Each is one dot product whose bits do not depend on m or on the rows around it.
void row_dots(const WeightView& w, const float* x, int64_t m, int64_t begin, int64_t end, float* y) {
  if (w.dtype == DType::F32) {
    // Tiles of up to 4 weight rows x 4 activation rows, each chunk loaded once per tile. With
    // few activation rows one weight row at a time streams memory best.
    const int64_t stride = w.row_stride() / static_cast<int64_t>(sizeof(float));
    const auto* rows_base = reinterpret_cast<const float*>(w.data);
    const int64_t tile_rows = m < kGemmMinRows ? 1 : 4;
    int64_t r = begin;
    // Short rows, few activation rows: the horizontal sums, not the reads, would bound one row
    // at a time, so eight rows share theirs.
    if (m < kGemmMinRows && w.cols <= kShortRow)
      for (; r + 8 <= end; r += 8)
        for (int64_t i = 0; i < m; ++i) {
          float sums[8];
          cpu::dot_f32_rows8(rows_base + r * stride, stride, x + i * w.cols, w.cols, sums);
          std::copy_n(sums, 8, y + i * w.rows + r);
        }
    for (; r < end; r += tile_rows) {
      const int rows = static_cast<int>(std::min<int64_t>(tile_rows, end - r));
      for (int64_t i = 0; i < m; i += 4) {
        const float* xs[4] = {x + i * w.cols, x + std::min(i + 1, m - 1) * w.cols, x + std::min(i + 2, m - 1) * w.cols,
                              x + std::min(i + 3, m - 1) * w.cols};
        const bool prefetch = i == 0 && tile_rows > 1 && r + 2 * tile_rows <= end;
        cpu::dot_f32_tile(rows_base + r * stride, stride, rows, xs, static_cast<int>(std::min<int64_t>(4, m - i)), w.cols,
                          y + i * w.rows + r, w.rows, prefetch ? rows_base + (r + tile_rows) * stride : nullptr);
      }
    }
    return;
  }
  if (cpu::has_fused_dot(w.dtype) && w.first_col == 0 && row_length_supported(w.dtype, w.cols)) {
    // f16 and bf16 rows: each chunk widens once for up to four activation rows.
    for (int64_t r = begin; r < end; ++r)
      for (int64_t i = 0; i < m; i += 4) {
        const float* xs[4] = {x + i * w.cols, x + std::min(i + 1, m - 1) * w.cols, x + std::min(i + 2, m - 1) * w.cols,
                              x + std::min(i + 3, m - 1) * w.cols};
        cpu::dot_16bit_tile(w.dtype, reinterpret_cast<const uint16_t*>(w.row(r)), xs,
                            static_cast<int>(std::min<int64_t>(4, m - i)), w.cols, y + i * w.rows + r, w.rows);
      }
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
}

void check_arguments(const float* x, int64_t m, const WeightView& w, const float* y) {
  require(x != nullptr && y != nullptr && w.data != nullptr, "matmul", "null buffer");
  require(m > 0 && w.rows > 0, "matmul", "empty shape");
  require(w.first_col >= 0 && w.first_col < block_layout(w.dtype).elements, "matmul", "column slice outside its block");
  // A packed matrix holds whole blocks; a column slice (strided) may start or end inside one.
  require(w.stride != 0 || row_length_supported(w.dtype, w.cols), "matmul",
          "row length " + std::to_string(w.cols) + " is not valid for " + std::string(dtype_name(w.dtype)));
  require(w.layout == WeightLayout::Rows || row_groups_readable(w), "matmul",
          "row groups of a matrix this CPU's kernels cannot read in groups");
}

}  // namespace

void matmul_group(ThreadPool& pool, const float* x, int64_t m, std::span<const WeightView> ws, std::span<float* const> ys,
                  MatmulPath path) {
  require(!ws.empty() && ws.size() == ys.size(), "matmul_group", "one output per matrix");
  bool shared_grid = true;
  int64_t rows_before = 0;
  for (size_t k = 0; k < ws.size(); rows_before += ws[k].rows, ++k) {
    check_arguments(x, m, ws[k], ys[k]);
    require(ws[k].cols == ws.front().cols, "matmul_group", "matrices of different row lengths");
    shared_grid = shared_grid && integer_ready(ws[k]) && activation_block(ws[k].dtype) == activation_block(ws.front().dtype);
    // The threads' shares start at multiples of kThreadRowGroup of the rows numbered in turn, so
    // row groups stay whole only if the matrices before them hold whole groups.
    shared_grid = shared_grid && (ws[k].layout == WeightLayout::Rows || rows_before % kRowGroupRows == 0);
  }
  if (shared_grid) {
    integer_matmul(pool, x, m, ws, ys);
    return;
  }
  for (size_t k = 0; k < ws.size(); ++k) matmul(pool, x, m, ws[k], ys[k], path);
}

void matmul(ThreadPool& pool, const float* exact_x, int64_t m, const WeightView& w, float* y, MatmulPath path,
            ActivationGrid grid) {
  check_arguments(exact_x, m, w, y);
  if (const cpu::FloatGroupDots group_dots = cpu::float_group_dots(w.dtype); w.layout == WeightLayout::RowGroups && group_dots) {
    float_group_matmul(pool, group_dots, exact_x, m, w, y);
    return;
  }
  if (integer_ready(w)) {
    integer_matmul(pool, exact_x, m, {&w, 1}, {&y, 1});
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

  if (path == MatmulPath::RowDots || m < kPrefillGemmMinRows) {
    if (m >= 2 * kGemmMinRows && w.total_bytes() <= kSmallMatrixBytes) {
      // A small matrix stays in every core's cache, so the threads split the activation rows
      // and each writes whole output rows; split by weight rows, both would write every output row.
      const int64_t groups = (m + kGemmMinRows - 1) / kGemmMinRows;
      pool.parallel_for(groups, [&](int64_t first_group, int64_t end_group) {
        const int64_t first = first_group * kGemmMinRows, end = std::min(m, end_group * kGemmMinRows);
        row_dots(w, x + first * w.cols, end - first, 0, w.rows, y + first * w.rows);
      }, kGemmMinRows * w.rows * w.cols);
      return;
    }
    pool.parallel_for(w.rows, [&](int64_t begin, int64_t end) { row_dots(w, x, m, begin, end, y); }, m * w.cols);
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
