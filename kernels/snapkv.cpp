// SnapKV scoring, pooling and top-K. Scores accumulate per KV head, so one work item owns one
// output row and threads never share a row.
#include "kernels/snapkv.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/cpu/dot.h"
#include "kernels/softmax.h"

namespace snapstream::kernels {

void snapkv_scores(ThreadPool& pool, const float* window_q, int64_t window, int64_t window_start, const float* keys,
                   int64_t length, const AttentionShape& shape, float* scores) {
  require(window_q && keys && scores, "snapkv_scores", "null buffer");
  shape.check("snapkv_scores");
  require(window > 0 && window_start >= 0 && window_start + window <= length, "snapkv_scores",
          "the window must lie inside the keys");
  const int64_t hd = shape.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  pool.parallel_for(shape.kv_heads, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(length));
    for (int64_t kv = begin; kv < end; ++kv) {
      float* out = scores + kv * length;
      std::fill(out, out + length, 0.0f);
      for (int64_t i = 0; i < window; ++i) {
        const int64_t visible = window_start + i + 1;
        for (int64_t h = kv * shape.group(); h < (kv + 1) * shape.group(); ++h) {
          const float* q = window_q + i * shape.q_width() + h * hd;
          for (int64_t j = 0; j < visible; ++j)
            row[static_cast<size_t>(j)] = cpu::dot_f32(q, keys + j * shape.kv_width() + kv * hd, hd) * scale;
          softmax(row.data(), visible);
          for (int64_t j = 0; j < visible; ++j) out[j] += row[static_cast<size_t>(j)];
        }
      }
    }
  }, window * shape.group() * length * hd);
}

void pool_scores(const float* scores, int64_t rows, int64_t length, int64_t begin, int64_t end, int64_t kernel,
                 PoolKind kind, float* pooled) {
  require(scores && pooled, "pool_scores", "null buffer");
  require(0 <= begin && begin <= end && end <= length && rows >= 0, "pool_scores", "range outside the row");
  require(kernel >= 1 && kernel % 2 == 1, "pool_scores", "kernel must be a positive odd width");
  const int64_t half = kernel / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = scores + r * length;
    float* out = pooled + r * length;
    for (int64_t j = begin; j < end; ++j) {
      const int64_t lo = std::max(begin, j - half), hi = std::min(end, j + half + 1);
      float value = kind == PoolKind::Max ? in[lo] : 0.0f;
      for (int64_t t = lo; t < hi; ++t) value = kind == PoolKind::Max ? std::max(value, in[t]) : value + in[t];
      out[j] = kind == PoolKind::Max ? value : value / static_cast<float>(hi - lo);
    }
  }
}

void select_top_k(const float* pooled, int64_t rows, int64_t length, int64_t begin, int64_t end, int64_t k,
                  int32_t* selected) {
  require(pooled && selected, "select_top_k", "null buffer");
  require(0 <= begin && begin <= end && end <= length, "select_top_k", "range outside the row");
  require(k >= 0 && k <= end - begin, "select_top_k", "k exceeds the number of candidates");
  std::vector<int32_t> order(static_cast<size_t>(end - begin));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = pooled + r * length;
    std::iota(order.begin(), order.end(), static_cast<int32_t>(begin));
    auto better = [row](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); };
    std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
    int32_t* out = selected + r * k;
    std::copy(order.begin(), order.begin() + k, out);
    std::sort(out, out + k);
  }
}

}  // namespace snapstream::kernels
