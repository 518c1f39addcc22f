// Causal attention: one work item per (query, head), scores kept in a per-thread buffer.
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/dot.h"
#include "kernels/errors.h"
#include "kernels/softmax.h"

namespace snapstream::kernels {

void causal_attention(ThreadPool& pool, const float* q, int64_t m, int64_t first_position, const float* keys,
                      const float* values, const AttentionShape& shape, float* out) {
  require(q && keys && values && out, "causal_attention", "null buffer");
  require(m > 0 && first_position >= 0, "causal_attention", "empty query block or negative position");
  shape.check("causal_attention");
  const int64_t hd = shape.head_dim;
  const int64_t q_stride = shape.q_width();
  const int64_t kv_stride = shape.kv_width();
  const int64_t group = shape.group();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));

  pool.parallel_for(m * shape.heads, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(first_position + m));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t i = item / shape.heads;
      const int64_t h = item % shape.heads;
      const int64_t visible = first_position + i + 1;
      const float* qi = q + i * q_stride + h * hd;
      const int64_t kv_offset = (h / group) * hd;
      for (int64_t t = 0; t < visible; ++t) scores[t] = cpu::dot_f32(qi, keys + t * kv_stride + kv_offset, hd) * scale;
      softmax(scores.data(), visible);
      float* oi = out + i * q_stride + h * hd;
      std::fill(oi, oi + hd, 0.0f);
      for (int64_t t = 0; t < visible; ++t) {
        const float a = scores[t];
        const float* v = values + t * kv_stride + kv_offset;
        for (int64_t d = 0; d < hd; ++d) oi[d] += a * v[d];
      }
    }
  }, 2 * (first_position + m) * hd);
}

}  // namespace snapstream::kernels
