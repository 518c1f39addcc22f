// SnapKV compaction of a prefilled prompt into a slot, layer by layer.
#include "runtime/prompt_compaction.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/kv_entries.h"
#include "kernels/rope.h"
#include "kernels/snapkv.h"
#include "runtime/errors.h"

namespace snapstream::runtime {

void select_at_random(uint64_t seed, int64_t kv_heads, int64_t begin, int64_t end, int64_t count, int32_t* selected) {
  std::vector<int32_t> candidates(static_cast<size_t>(end - begin));
  for (int64_t kv = 0; kv < kv_heads; ++kv) {
    std::iota(candidates.begin(), candidates.end(), static_cast<int32_t>(begin));
    std::mt19937_64 random(seed * 1000003u + static_cast<uint64_t>(kv) * 7919u + static_cast<uint64_t>(end));
    // A partial Fisher-Yates shuffle: the first `count` candidates are a uniform draw.
    for (int64_t i = 0; i < count; ++i) {
      std::uniform_int_distribution<int64_t> pick(i, static_cast<int64_t>(candidates.size()) - 1);
      std::swap(candidates[static_cast<size_t>(i)], candidates[static_cast<size_t>(pick(random))]);
    }
    std::sort(candidates.begin(), candidates.begin() + count);
    std::copy_n(candidates.begin(), count, selected + kv * count);
  }
}

void compact_layer(kernels::ThreadPool& pool, const SnapStreamConfig& config, const kernels::RopeSpec& rope, const kernels::AttentionShape& shape,
                   const float* keys, const float* values, int64_t length, const float* window_queries, int64_t window,
                   const LayerCacheView& cache) {
  const int64_t capacity = config.capacity, kv_heads = shape.kv_heads, hd = shape.head_dim;
  if (length <= capacity) {
    for (int64_t p = 0; p < length; ++p) {
      kernels::write_entry(keys + p * shape.kv_width(), kv_heads, hd, capacity, p, cache.keys);
      kernels::write_entry(values + p * shape.kv_width(), kv_heads, hd, capacity, p, cache.values);
      for (int64_t kv = 0; kv < kv_heads; ++kv) {
        cache.live[kv * capacity + p] = 1;
        cache.positions[kv * capacity + p] = static_cast<int32_t>(p);
      }
    }
    return;
  }
  if (window < 1 || window > length || window_queries == nullptr)
    throw ContractError("SnapKV selection needs the queries of an observation window inside the prompt");
  const int64_t sink = config.sink, ring = config.ring, compressed = config.compressed();
  std::vector<int32_t> selected(static_cast<size_t>(kv_heads * compressed)), kept(static_cast<size_t>(capacity));
  if (compressed == 0) {
    // Sinks and ring only (StreamingLLM): nothing to select.
  } else if (config.selection == Selection::Random) {
    select_at_random(config.selection_seed, kv_heads, sink, length - ring, compressed, selected.data());
  } else {
    std::vector<float> scores(static_cast<size_t>(kv_heads * length)), pooled(scores.size());
    kernels::snapkv_scores(pool, window_queries, window, length - window, keys, length, shape, scores.data());
    kernels::pool_scores(scores.data(), kv_heads, length, sink, length - ring, config.pool_kernel, config.pool, pooled.data());
    kernels::select_top_k(pooled.data(), kv_heads, length, sink, length - ring, compressed, selected.data());
  }
  for (int64_t kv = 0; kv < kv_heads; ++kv) {
    std::iota(kept.begin(), kept.begin() + sink, 0);
    std::copy_n(selected.begin() + kv * compressed, compressed, kept.begin() + sink);
    std::iota(kept.begin() + sink + compressed, kept.end(), static_cast<int32_t>(length - ring));
    kernels::gather_positions(keys, length, kv_heads, hd, kv, kept.data(), capacity, capacity, 0, cache.keys);
    kernels::gather_positions(values, length, kv_heads, hd, kv, kept.data(), capacity, capacity, 0, cache.values);
    std::copy(kept.begin(), kept.end(), cache.positions + kv * capacity);
    std::fill_n(cache.live + kv * capacity, capacity, uint8_t{1});
    if (config.positions == PositionMode::Reindexed) {
      // Rotated in f32, then stored: an f16 cache rounds each key once.
      std::vector<float> key(static_cast<size_t>(hd));
      for (int64_t slot = 0; slot < capacity; ++slot) {
        std::byte* row = cache.keys.row(kv * capacity + slot, hd);
        kernels::load_row(row, cache.keys.dtype, hd, key.data());
        kernels::rope(key.data(), 1, hd, slot - kept[static_cast<size_t>(slot)], rope);
        kernels::store_row(key.data(), cache.keys.dtype, hd, row);
      }
    }
  }
}

SequenceState state_after_prompt(const SnapStreamConfig& config, int64_t length) {
  return {length, std::min(length, config.capacity), 0};
}

}  // namespace snapstream::runtime
