// Slot cache allocation and the write-entry rule shared by prefill compaction and decode.
#include "runtime/slot_kv_cache.h"

#include <algorithm>
#include <string>

#include "kernels/kv_entries.h"
#include "runtime/errors.h"

namespace snapstream::runtime {

namespace {

KvHeadRange resolved(KvHeadRange held, int64_t kv_heads) {
  if (held.count == 0 && held.first == 0) held.count = kv_heads;
  if (held.first < 0 || held.count < 1 || held.first + held.count > kv_heads)
    throw ConfigError("a KV cache cannot hold heads [" + std::to_string(held.first) + ", " + std::to_string(held.first + held.count) +
                      ") of a model with " + std::to_string(kv_heads));
  return held;
}

}  // namespace

SlotKvCache::SlotKvCache(const graph::ModelShape& model, const SnapStreamConfig& config, int64_t slots, KvHeadRange held)
    : config_(config), held_(resolved(held, model.kv_heads)), slots_(slots), layers_(model.layers),
      layer_bytes_(held_.count * config.capacity * kernels::row_bytes(config.kv_dtype, model.head_dim)),
      layer_markers_(held_.count * config.capacity) {
  if (slots < 1) throw ConfigError("the KV cache needs at least one slot");
  if (config.capacity < 1) throw ConfigError("the SnapStream config must be resolved before allocating the cache");
  if (const std::string why = kernels::kv_dtype_error(config.kv_dtype, model.head_dim); !why.empty()) throw ConfigError(why);
  keys_ = LazyPages(static_cast<size_t>(slots_ * layers_ * layer_bytes_), PageSize::Huge);
  values_ = LazyPages(keys_.size(), PageSize::Huge);
  keys_.make_resident();
  values_.make_resident();
  live_.assign(static_cast<size_t>(slots_ * layers_ * layer_markers_), 0);
  positions_.assign(live_.size(), -1);
  states_.assign(static_cast<size_t>(slots_), {});
}

void SlotKvCache::reset(int64_t slot) {
  const auto first = marker_offset(slot, 0), count = layers_ * layer_markers_;
  std::fill_n(live_.begin() + first, count, uint8_t{0});
  std::fill_n(positions_.begin() + first, count, -1);
  states_.at(static_cast<size_t>(slot)) = {};
}

int64_t SlotKvCache::next_write_entry(int64_t slot) {
  SequenceState& s = state(slot);
  if (s.filled < config_.capacity) return s.filled++;
  const int64_t ring_start = config_.capacity - config_.ring;
  return ring_start + (s.ring_writes++ % config_.ring);
}

void store_token(const LayerCacheView& view, int64_t kv_heads, int64_t head_dim, int64_t capacity, int64_t entry,
                 int64_t position, const float* key, const float* value) {
  kernels::write_entry(key, kv_heads, head_dim, capacity, entry, view.keys);
  kernels::write_entry(value, kv_heads, head_dim, capacity, entry, view.values);
  for (int64_t kv = 0; kv < kv_heads; ++kv) {
    view.live[kv * capacity + entry] = 1;
    view.positions[kv * capacity + entry] = static_cast<int32_t>(position);
  }
}

int64_t SlotKvCache::next_rotation(int64_t slot) const {
  const SequenceState& s = states_.at(static_cast<size_t>(slot));
  if (config_.positions == PositionMode::Original) return s.length;
  return s.filled < config_.capacity ? s.filled : config_.capacity + s.ring_writes;
}

int64_t SlotKvCache::shifted_end(int64_t slot) const {
  const SequenceState& s = states_.at(static_cast<size_t>(slot));
  const bool overwriting = s.filled == config_.capacity && !config_.full_cache;
  return config_.positions == PositionMode::Reindexed && overwriting ? config_.capacity - config_.ring : 0;
}

int64_t SlotKvCache::bytes_per_slot() const { return 2 * layers_ * layer_bytes_; }

int64_t SlotKvCache::full_cache_bytes(const graph::ModelShape& model, int64_t positions, kernels::DType kv_dtype) {
  return 2 * model.layers * model.kv_heads * positions * kernels::row_bytes(kv_dtype, model.head_dim);
}

}  // namespace snapstream::runtime
