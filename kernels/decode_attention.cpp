// Masked decode attention: one work item per (sequence, KV head), covering the query heads that
// share it, so each key and value row is read once for the whole group. The softmax runs over
// the live entries and the token itself; empty entries get zero weight and are never read for values.
#include "kernels/decode_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/dot.h"
#include "kernels/cpu/exp_row.h"
#include "kernels/cpu/head8.h"
#include "kernels/cpu/score_row.h"
#include "kernels/cpu/weighted_sum.h"
#include "kernels/kv_entries.h"

namespace snapstream::kernels {
namespace {

// Query heads scored against keys at once, the most the tiled dot kernel takes.
constexpr int64_t kHeadsPerTile = 4;
constexpr int64_t kKeysPerTile = 4;
constexpr int64_t kKeysPerBlock = 8;  // cpu::dot_f32_rows8, dot_f16_rows8
// Cache rows come from memory, one sequence and head after another, faster than the hardware
// prefetcher ramps up on each short run: keys are asked for this many entries ahead, and each
// block's values while its keys are scored, so the weighted sum finds them in L2. Short rows
// (small heads) are asked for further ahead, so the distance covers a memory latency either way.
constexpr int64_t kPrefetchAhead = 12;
constexpr int64_t kPrefetchAheadBytes = 2048;
constexpr int64_t kLineBytes = 64;

int64_t extent_of(const CacheView& cache, int64_t capacity) {
  return cache.extent < 0 ? capacity : std::min(cache.extent, capacity);
}

void rows8(const float* rows, int64_t hd, const float* q, float* out) { cpu::dot_f32_rows8(rows, hd, q, hd, out); }
void rows8(const uint16_t* rows, int64_t hd, const float* q, float* out) { cpu::dot_f16_rows8(rows, hd, q, hd, out); }

// Keys past the last block of eight: f32 ones in tiles of up to four keys and four heads (the
// bits rows8 gives), f16 ones one at a time.
void score_rest(const float* q, int64_t group, const float* keys, int64_t count, int64_t hd, float* scores,
                int64_t scores_stride) {
  for (int64_t g = 0; g < group; g += kHeadsPerTile) {
    const int heads = static_cast<int>(std::min(kHeadsPerTile, group - g));
    const float* qs[kHeadsPerTile];
    for (int j = 0; j < kHeadsPerTile; ++j) qs[j] = q + (g + std::min<int64_t>(j, heads - 1)) * hd;
    for (int64_t t = 0; t < count; t += kKeysPerTile) {
      const int rows = static_cast<int>(std::min(kKeysPerTile, count - t));
      cpu::dot_f32_tile(keys + t * hd, hd, rows, qs, heads, hd, scores + g * scores_stride + t, scores_stride, nullptr);
    }
  }
}
void score_rest(const float* q, int64_t group, const uint16_t* keys, int64_t count, int64_t hd, float* scores,
                int64_t scores_stride) {
  for (int64_t g = 0; g < group; ++g)
    for (int64_t t = 0; t < count; ++t) scores[g * scores_stride + t] = cpu::dot_f16(keys + t * hd, q + g * hd, hd);
}

// scores[g][s] = q_g . key_s for the group's query heads and entries s < extent (live or not);
// the entries' value rows are prefetched on the way. Eight keys at a time per head.
template <typename T>
void score_group(const float* q, int64_t group, const T* keys, const T* values, int64_t extent, int64_t hd, float* scores,
                 int64_t scores_stride) {
  // Without the prefetches below: a key row this short leaves one 256-byte stream per block,
  // which the hardware prefetcher follows (64 sequences of 512 entries, caches far beyond L3:
  // 29 GB/s, the machine's read bandwidth).
  if (hd == cpu::kHead8Width && cpu::head8_scores_available())
    return cpu::score_keys_head8(q, group, keys, extent, scores, scores_stride);
  constexpr int64_t kValuesPerLine = kLineBytes / static_cast<int64_t>(sizeof(T));
  const int64_t distance = std::max(kPrefetchAhead, kPrefetchAheadBytes / (hd * static_cast<int64_t>(sizeof(T))));
  int64_t s = 0;
  for (; s + kKeysPerBlock <= extent; s += kKeysPerBlock) {
    const int64_t ahead = std::min(s + distance, extent - kKeysPerBlock) * hd;
    for (int64_t k = 0; k < kKeysPerBlock * hd; k += kValuesPerLine) {
      __builtin_prefetch(keys + ahead + k, 0, 2);
      __builtin_prefetch(values + s * hd + k, 0, 2);
    }
    for (int64_t g = 0; g < group; ++g) rows8(keys + s * hd, hd, q + g * hd, scores + g * scores_stride + s);
  }
  score_rest(q, group, keys + s * hd, extent - s, hd, scores + s, scores_stride);
}

// One work item: sequence b's KV head kv, its cache rows stored as T.
template <typename T>
void attend(const float* q, const float* shifted_q, const float* self_keys, const float* self_values, const CacheView& cache,
            int64_t b, int64_t kv, int64_t capacity, const AttentionShape& shape, int64_t row, std::vector<float>& weights,
            float* out) {
  const int64_t hd = shape.head_dim, group = shape.group();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int64_t extent = extent_of(cache, capacity);
  const T* keys = reinterpret_cast<const T*>(cache.keys) + kv * capacity * hd;
  const T* values = reinterpret_cast<const T*>(cache.values) + kv * capacity * hd;
  const uint8_t* live = cache.live + kv * capacity;
  const float* self_key = self_keys + b * shape.kv_width() + kv * hd;
  const float* self_value = self_values + b * shape.kv_width() + kv * hd;
  const float* q_group = q + b * shape.q_width() + kv * group * hd;

  // Slots below shifted_end hold keys whose rotation is offset from the ring's; their queries
  // were rotated by the same offset, so every score sees the intended distance.
  const int64_t shifted = std::min(cache.shifted_end, extent);
  if (shifted > 0)
    score_group(shifted_q + b * shape.q_width() + kv * group * hd, group, keys, values, shifted, hd, weights.data(), row);
  score_group(q_group, group, keys + shifted * hd, values + shifted * hd, extent - shifted, hd, weights.data() + shifted, row);
  float* o = out + b * shape.q_width() + kv * group * hd;
  for (int64_t g = 0; g < group; ++g) {
    float* w = weights.data() + g * row;
    // The token itself comes last, as the newest position does in causal attention.
    w[extent] = cpu::dot_f32(q_group + g * hd, self_key, hd) * scale;
    const float max_score = cpu::scale_live_scores(w, live, extent, scale, w[extent]);
    const float inverse = 1.0f / cpu::exp_shifted_row(w, extent + 1, max_score);
    for (int64_t s = 0; s <= extent; ++s) w[s] *= inverse;
  }
  if (hd == cpu::kHead8Width && cpu::head8_weighted_rows_available())
    cpu::weighted_rows_head8(weights.data(), row, group, values, extent, o, hd);
  else
    cpu::weighted_row_sums(weights.data(), row, group, values, extent, hd, hd, o, hd);
  for (int64_t g = 0; g < group; ++g) {
    const float a = weights[static_cast<size_t>(g * row + extent)];
    for (int64_t d = 0; d < hd; ++d) o[g * hd + d] += a * self_value[d];
  }
}

}  // namespace

void decode_attention(ThreadPool& pool, int64_t batch, const float* q, const float* shifted_q, const float* self_keys,
                      const float* self_values, const CacheView* caches, int64_t capacity, const AttentionShape& shape,
                      float* out) {
  require(q && self_keys && self_values && caches && out, "decode_attention", "null buffer");
  require(batch > 0 && capacity >= 0, "decode_attention", "empty batch or negative capacity");
  shape.check("decode_attention");
  int64_t longest = 0;
  for (int64_t b = 0; b < batch; ++b) {
    require(capacity == 0 || (caches[b].keys && caches[b].values && caches[b].live), "decode_attention",
            [&] { return "null cache for sequence " + std::to_string(b); });
    require(is_kv_dtype(caches[b].dtype), "decode_attention", "a cache stores F32 or F16");
    longest = std::max(longest, extent_of(caches[b], capacity));
    require(caches[b].shifted_end >= 0 && (caches[b].shifted_end == 0 || shifted_q != nullptr), "decode_attention",
            [&] { return "sequence " + std::to_string(b) + " has shifted entries but no shifted queries"; });
  }
  const int64_t row = longest + 1;  // a score row: the entries, then the token itself

  pool.parallel_for(batch * shape.kv_heads, [&](int64_t begin, int64_t end) {
    // Kept per thread: a tiny model's chunks are short enough that allocating a row per chunk
    // showed up as a few percent of its decode step.
    thread_local std::vector<float> weights;
    weights.resize(std::max(weights.size(), static_cast<size_t>(shape.group() * row)));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / shape.kv_heads, kv = item % shape.kv_heads;
      if (caches[b].dtype == DType::F16)
        attend<uint16_t>(q, shifted_q, self_keys, self_values, caches[b], b, kv, capacity, shape, row, weights, out);
      else
        attend<float>(q, shifted_q, self_keys, self_values, caches[b], b, kv, capacity, shape, row, weights, out);
    }
  }, 2 * row * shape.head_dim * shape.group());
}

}  // namespace snapstream::kernels
