// Masked decode attention: one work item per (sequence, query head); the softmax runs over the
// live slots and the token itself, so empty slots cost a mask test but change nothing.
#include "kernels/decode_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/dot.h"

namespace snapstream::kernels {

void decode_attention(ThreadPool& pool, int64_t batch, const float* q, const float* self_keys, const float* self_values,
                      const CacheView* caches, int64_t capacity, const AttentionShape& shape, float* out) {
  require(q && self_keys && self_values && caches && out, "decode_attention", "null buffer");
  require(batch > 0 && capacity >= 0, "decode_attention", "empty batch or negative capacity");
  shape.check("decode_attention");
  for (int64_t b = 0; b < batch; ++b)
    require(capacity == 0 || (caches[b].keys && caches[b].values && caches[b].live), "decode_attention",
            "null cache for sequence " + std::to_string(b));
  const int64_t hd = shape.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));

  pool.parallel_for(batch * shape.heads, [&](int64_t begin, int64_t end) {
    std::vector<float> weights(static_cast<size_t>(capacity + 1));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / shape.heads, h = item % shape.heads, kv = h / shape.group();
      const float* qh = q + b * shape.q_width() + h * hd;
      const CacheView& cache = caches[b];
      const float* keys = cache.keys + kv * capacity * hd;
      const float* values = cache.values + kv * capacity * hd;
      const uint8_t* live = cache.live + kv * capacity;
      const float* self_key = self_keys + b * shape.kv_width() + kv * hd;
      const float* self_value = self_values + b * shape.kv_width() + kv * hd;

      float max_score = cpu::dot_f32(qh, self_key, hd) * scale;
      weights[static_cast<size_t>(capacity)] = max_score;
      for (int64_t s = 0; s < capacity; ++s) {
        if (!live[s]) continue;
        weights[static_cast<size_t>(s)] = cpu::dot_f32(qh, keys + s * hd, hd) * scale;
        max_score = std::max(max_score, weights[static_cast<size_t>(s)]);
      }
      float total = 0.0f;
      for (int64_t s = 0; s < capacity; ++s)
        if (live[s]) total += (weights[static_cast<size_t>(s)] = std::exp(weights[static_cast<size_t>(s)] - max_score));
      total += (weights[static_cast<size_t>(capacity)] = std::exp(weights[static_cast<size_t>(capacity)] - max_score));

      // The token itself comes last, as the newest position does in causal attention, so an
      // uncompressed cache sums in the same order as the dense kernel.
      float* o = out + b * shape.q_width() + h * hd;
      std::fill(o, o + hd, 0.0f);
      for (int64_t s = 0; s < capacity; ++s) {
        if (!live[s]) continue;
        const float a = weights[static_cast<size_t>(s)] / total;
        const float* v = values + s * hd;
        for (int64_t d = 0; d < hd; ++d) o[d] += a * v[d];
      }
      const float self_weight = weights[static_cast<size_t>(capacity)] / total;
      for (int64_t d = 0; d < hd; ++d) o[d] += self_weight * self_value[d];
    }
  }, 2 * (capacity + 1) * hd);
}

}  // namespace snapstream::kernels
