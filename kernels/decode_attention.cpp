// Masked decode attention: one work item per (sequence, KV head), covering the query heads that
// share it, so each key and value row is read once for the whole group. The softmax runs over
// the live entries and the token itself; empty entries get zero weight and are never read for values.
#include "kernels/decode_attention.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
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

// A head's entries are rows of head_dim values: f32 or f16 ones (T float, uint16_t), or Q8_0
// blocks (T std::byte).
template <typename T>
const T* row_at(const T* rows, int64_t s, int64_t hd) {
  return rows + s * hd;
}
const std::byte* row_at(const std::byte* rows, int64_t s, int64_t hd) { return rows + s * row_bytes(DType::Q8_0, hd); }
// Bytes of one such row (computed, not measured between pointers: an empty cache's are null).
template <typename T>
int64_t row_size(int64_t hd) {
  return hd * static_cast<int64_t>(sizeof(T));
}
template <>
int64_t row_size<std::byte>(int64_t hd) {
  return row_bytes(DType::Q8_0, hd);
}

void rows8(const float* rows, int64_t hd, const float* q, float* out) { cpu::dot_f32_rows8(rows, hd, q, hd, out); }
void rows8(const uint16_t* rows, int64_t hd, const float* q, float* out) { cpu::dot_f16_rows8(rows, hd, q, hd, out); }
void rows8(const std::byte* rows, int64_t hd, const float* q, float* out) {
  cpu::dot_q8_0_rows8(rows, row_bytes(DType::Q8_0, hd), q, hd, out);
}

// Keys past the last block of eight: f32 ones in tiles of up to four keys and four heads (the
// bits rows8 gives), f16 and Q8_0 ones one at a time.
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
void score_rest(const float* q, int64_t group, const std::byte* keys, int64_t count, int64_t hd, float* scores,
                int64_t scores_stride) {
  for (int64_t g = 0; g < group; ++g)
    for (int64_t t = 0; t < count; ++t) scores[g * scores_stride + t] = cpu::dot_q8_0(row_at(keys, t, hd), q + g * hd, hd);
}

// out[g] = the sum over entries s < extent of weight g,s times value row s, for the group's heads.
void weighted_rows(const float* weights, int64_t row, int64_t group, const float* values, int64_t extent, int64_t hd,
                   float* out) {
  cpu::weighted_row_sums(weights, row, group, values, extent, hd, hd, out, hd);
}
void weighted_rows(const float* weights, int64_t row, int64_t group, const uint16_t* values, int64_t extent, int64_t hd,
                   float* out) {
  cpu::weighted_row_sums(weights, row, group, values, extent, hd, hd, out, hd);
}
void weighted_rows(const float* weights, int64_t row, int64_t group, const std::byte* values, int64_t extent, int64_t hd,
                   float* out) {
  cpu::weighted_q8_0_row_sums(weights, row, group, values, extent, row_bytes(DType::Q8_0, hd), hd, out, hd);
}

// Whether the small-head kernels take rows of T.
template <typename T>
constexpr bool head8_rows = !std::is_same_v<T, std::byte>;

// scores[g][s] = q_g . key_s for the group's query heads and entries s < extent (live or not);
// the entries' value rows are prefetched on the way. Eight keys at a time per head.
template <typename T>
void score_group(const float* q, int64_t group, const T* keys, const T* values, int64_t extent, int64_t hd, float* scores,
                 int64_t scores_stride) {
  // Without the prefetches below: a key row this short leaves one 256-byte stream per block,
  // which the hardware prefetcher follows (64 sequences of 512 entries, caches far beyond L3:
  // 29 GB/s, the machine's read bandwidth).
  if constexpr (head8_rows<T>)
    if (hd == cpu::kHead8Width && cpu::head8_scores_available())
      return cpu::score_keys_head8(q, group, keys, extent, scores, scores_stride);
  const int64_t distance = std::max(kPrefetchAhead, kPrefetchAheadBytes / row_size<T>(hd));
  const int64_t block_bytes = kKeysPerBlock * row_size<T>(hd);
  int64_t s = 0;
  for (; s + kKeysPerBlock <= extent; s += kKeysPerBlock) {
    const auto* ahead = reinterpret_cast<const char*>(row_at(keys, std::min(s + distance, extent - kKeysPerBlock), hd));
    const auto* block_values = reinterpret_cast<const char*>(row_at(values, s, hd));
    for (int64_t k = 0; k < block_bytes; k += kLineBytes) {
      __builtin_prefetch(ahead + k, 0, 2);
      __builtin_prefetch(block_values + k, 0, 2);
    }
    for (int64_t g = 0; g < group; ++g) rows8(row_at(keys, s, hd), hd, q + g * hd, scores + g * scores_stride + s);
  }
  score_rest(q, group, row_at(keys, s, hd), extent - s, hd, scores + s, scores_stride);
}

// One KV head's entries [0, extent) of one sequence's cache, as T rows of head_dim values.
template <typename T>
struct HeadEntries {
  const T* keys;
  const T* values;
  const uint8_t* live;
  int64_t extent, shifted_end;
};

// One work item: sequence b's KV head kv.
template <typename T>
void attend(const float* q, const float* shifted_q, const float* self_keys, const float* self_values, HeadEntries<T> entries,
            int64_t b, int64_t kv, const AttentionShape& shape, int64_t row, std::vector<float>& weights, float* out) {
  const int64_t hd = shape.head_dim, group = shape.group();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int64_t extent = entries.extent;
  const T* keys = entries.keys;
  const T* values = entries.values;
  const uint8_t* live = entries.live;
  const float* self_key = self_keys + b * shape.kv_width() + kv * hd;
  const float* self_value = self_values + b * shape.kv_width() + kv * hd;
  const float* q_group = q + b * shape.q_width() + kv * group * hd;

  // Slots below shifted_end hold keys whose rotation is offset from the ring's; their queries
  // were rotated by the same offset, so every score sees the intended distance.
  const int64_t shifted = std::min(entries.shifted_end, extent);
  if (shifted > 0)
    score_group(shifted_q + b * shape.q_width() + kv * group * hd, group, keys, values, shifted, hd, weights.data(), row);
  score_group(q_group, group, row_at(keys, shifted, hd), row_at(values, shifted, hd), extent - shifted, hd,
              weights.data() + shifted, row);
  float* o = out + b * shape.q_width() + kv * group * hd;
  for (int64_t g = 0; g < group; ++g) {
    float* w = weights.data() + g * row;
    // The token itself comes last, as the newest position does in causal attention.
    w[extent] = cpu::dot_f32(q_group + g * hd, self_key, hd) * scale;
    const float max_score = cpu::scale_live_scores(w, live, extent, scale, w[extent]);
    const float inverse = 1.0f / cpu::exp_shifted_row(w, extent + 1, max_score);
    for (int64_t s = 0; s <= extent; ++s) w[s] *= inverse;
  }
  bool done = false;
  if constexpr (head8_rows<T>)
    if (hd == cpu::kHead8Width && cpu::head8_weighted_rows_available()) {
      cpu::weighted_rows_head8(weights.data(), row, group, values, extent, o, hd);
      done = true;
    }
  if (!done) weighted_rows(weights.data(), row, group, values, extent, hd, o);
  for (int64_t g = 0; g < group; ++g) {
    const float a = weights[static_cast<size_t>(g * row + extent)];
    for (int64_t d = 0; d < hd; ++d) o[g * hd + d] += a * self_value[d];
  }
}

// Sequence b's KV head kv from its cache, rows read where they lie in the cache's type.
void attend_cached(const float* q, const float* shifted_q, const float* self_keys, const float* self_values,
                   const CacheView& cache, int64_t b, int64_t kv, int64_t capacity, const AttentionShape& shape, int64_t row,
                   std::vector<float>& weights, float* out) {
  const int64_t hd = shape.head_dim, extent = extent_of(cache, capacity);
  const int64_t first = kv * capacity * row_bytes(cache.dtype, hd);
  const std::byte* keys = cache.keys + first;
  const std::byte* values = cache.values + first;
  const uint8_t* live = cache.live + kv * capacity;
  switch (cache.dtype) {
    case DType::F16:
      return attend(q, shifted_q, self_keys, self_values,
                    HeadEntries<uint16_t>{reinterpret_cast<const uint16_t*>(keys), reinterpret_cast<const uint16_t*>(values),
                                          live, extent, cache.shifted_end},
                    b, kv, shape, row, weights, out);
    case DType::Q8_0:
      return attend(q, shifted_q, self_keys, self_values, HeadEntries<std::byte>{keys, values, live, extent, cache.shifted_end},
                    b, kv, shape, row, weights, out);
    default:
      return attend(q, shifted_q, self_keys, self_values,
                    HeadEntries<float>{reinterpret_cast<const float*>(keys), reinterpret_cast<const float*>(values), live,
                                       extent, cache.shifted_end},
                    b, kv, shape, row, weights, out);
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
    require(kv_dtype_error(caches[b].dtype, shape.head_dim).empty(), "decode_attention",
            [&] { return kv_dtype_error(caches[b].dtype, shape.head_dim); });
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
      attend_cached(q, shifted_q, self_keys, self_values, caches[b], b, kv, capacity, shape, row, weights, out);
    }
  }, 2 * row * shape.head_dim * shape.group());
}

}  // namespace snapstream::kernels
