// Values come from a fixed sine pattern and are quantised like a model's; the products take the
// same path as a decode step's (matmul, so the integer tiles for block types).
#include "bench/compute_probe.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "bench/best_seconds.h"
#include "kernels/errors.h"
#include "kernels/matmul.h"
#include "kernels/quantize.h"
#include "kernels/row_groups.h"

namespace snapstream::bench {
namespace {
// Rows in multiples of this many: the integer tiles take weight rows in groups of 32.
constexpr int64_t kRowMultiple = 32;
constexpr double kPassSeconds = 0.03;

float pattern(int64_t i) { return std::sin(0.37f * static_cast<float>(i % 4099) + 0.1f); }
}  // namespace

ComputeProbe::ComputeProbe(kernels::DType dtype, int64_t cols, int64_t activation_rows, bool row_groups, int threads)
    : dtype_(dtype), cols_(cols), activation_rows_(activation_rows) {
  kernels::require(activation_rows > 0, "compute probe", "needs at least one activation row");
  kernels::require(threads > 0, "compute probe", "needs at least one thread");
  kernels::require(cols > 0 && kernels::row_length_supported(dtype, cols), "compute probe", [&] {
    return "rows of " + std::to_string(cols) + " values cannot be stored as " + std::string(kernels::dtype_name(dtype));
  });
  const int64_t row_bytes = kernels::row_bytes(dtype, cols);
  rows_ = std::max(kRowMultiple, kWeightBytesPerThread * threads / row_bytes / kRowMultiple * kRowMultiple);
  weights_.resize(static_cast<size_t>(rows_ * row_bytes));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows_; ++r) {
    for (int64_t c = 0; c < cols; ++c) row[static_cast<size_t>(c)] = pattern(r * cols + c);
    kernels::quantize_row(dtype, row.data(), cols, weights_.data() + r * row_bytes);
  }
  view_ = kernels::WeightView{dtype_, weights_.data(), rows_, cols_};
  if (row_groups && kernels::row_groups_supported(view_)) {
    grouped_.resize(static_cast<size_t>(kernels::row_groups_bytes(view_)));
    view_ = kernels::write_row_groups(view_, grouped_.data());
  }
  x_.resize(static_cast<size_t>(activation_rows * cols));
  for (size_t i = 0; i < x_.size(); ++i) x_[i] = pattern(static_cast<int64_t>(i) + 7);
  y_.resize(static_cast<size_t>(activation_rows * rows_));
}

ComputeResult ComputeProbe::measure(kernels::ThreadPool& pool, int passes) {
  const kernels::ThreadPool::Burst burst(pool);  // as in a decode step: workers spin between calls
  auto run = [&](int64_t calls) {
    for (int64_t call = 0; call < calls; ++call) kernels::matmul(pool, x_.data(), activation_rows_, view_, y_.data());
  };
  const double one = best_seconds(3, [&] { run(1); });
  const auto calls = static_cast<int64_t>(std::clamp(kPassSeconds / std::max(one, 1e-9), 1.0, 1e6));
  const double seconds = best_seconds(passes, [&] { run(calls); });
  ComputeResult result;
  result.threads = pool.size();
  result.activation_rows = activation_rows_;
  result.weight_bytes = static_cast<int64_t>(weights_.size());
  result.regrouped = view_.layout == kernels::WeightLayout::RowGroups;
  result.multiply_adds_per_s = static_cast<double>(rows_ * cols_ * activation_rows_ * calls) / seconds;
  return result;
}

}  // namespace snapstream::bench
