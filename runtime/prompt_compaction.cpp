// SnapKV compaction of a prefilled prompt into a slot, layer by layer.
#include "runtime/prompt_compaction.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/kv_slots.h"
#include "kernels/snapkv.h"
#include "runtime/errors.h"

namespace snapstream {

void compact_prompt(kernels::ThreadPool& pool, const ModelConfig& model, DenseKvCache& dense, int64_t length,
                    const float* window_queries, int64_t window, SlotKvCache& cache, int64_t slot) {
  const SnapStreamConfig& config = cache.config();
  const int64_t capacity = config.capacity, kv_heads = model.n_kv_heads, hd = model.head_dim();
  if (length < 1 || length > dense.capacity()) throw InvalidRequestError("prompt length outside the prefill cache");
  cache.reset(slot);

  if (length <= capacity) {
    for (int64_t layer = 0; layer < model.n_layers; ++layer) {
      for (int64_t p = 0; p < length; ++p) {
        kernels::write_slot(dense.keys(layer) + p * model.kv_dim(), kv_heads, hd, capacity, p, cache.keys(slot, layer));
        kernels::write_slot(dense.values(layer) + p * model.kv_dim(), kv_heads, hd, capacity, p, cache.values(slot, layer));
        for (int64_t kv = 0; kv < kv_heads; ++kv) {
          cache.live(slot, layer)[kv * capacity + p] = 1;
          cache.positions(slot, layer)[kv * capacity + p] = static_cast<int32_t>(p);
        }
      }
    }
    cache.state(slot) = {length, length, 0};
    return;
  }

  if (window < 1 || window > length || window_queries == nullptr)
    throw InvalidRequestError("SnapKV selection needs the queries of an observation window inside the prompt");
  const int64_t sink = config.sink, ring = config.ring, compressed = config.compressed();
  const kernels::AttentionShape shape{model.n_heads, kv_heads, hd};
  std::vector<float> scores(static_cast<size_t>(kv_heads * length)), pooled(scores.size());
  std::vector<int32_t> selected(static_cast<size_t>(kv_heads * compressed));
  std::vector<int32_t> kept(static_cast<size_t>(capacity));
  for (int64_t layer = 0; layer < model.n_layers; ++layer) {
    kernels::snapkv_scores(pool, window_queries + layer * window * model.dim, window, length - window, dense.keys(layer),
                           length, shape, scores.data());
    kernels::pool_scores(scores.data(), kv_heads, length, sink, length - ring, config.pool_kernel, config.pool, pooled.data());
    kernels::select_top_k(pooled.data(), kv_heads, length, sink, length - ring, compressed, selected.data());
    for (int64_t kv = 0; kv < kv_heads; ++kv) {
      std::iota(kept.begin(), kept.begin() + sink, 0);
      std::copy_n(selected.begin() + kv * compressed, compressed, kept.begin() + sink);
      std::iota(kept.begin() + sink + compressed, kept.end(), static_cast<int32_t>(length - ring));
      kernels::gather_positions(dense.keys(layer), length, kv_heads, hd, kv, kept.data(), capacity, capacity, 0,
                                cache.keys(slot, layer));
      kernels::gather_positions(dense.values(layer), length, kv_heads, hd, kv, kept.data(), capacity, capacity, 0,
                                cache.values(slot, layer));
      std::copy(kept.begin(), kept.end(), cache.positions(slot, layer) + kv * capacity);
      std::fill_n(cache.live(slot, layer) + kv * capacity, capacity, uint8_t{1});
    }
  }
  cache.state(slot) = {length, capacity, 0};
}

}  // namespace snapstream
