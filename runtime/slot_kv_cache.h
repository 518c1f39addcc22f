// The SnapStream KV cache manager: a fixed number of sequence slots, each of one static shape
// ([layers][kv_heads][capacity][head_dim] keys and values, f32, f16 or Q8_0), allocated once at start-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/model_shape.h"
#include "kernels/decode_attention.h"
#include "kernels/kv_entries.h"
#include "runtime/lazy_pages.h"
#include "runtime/snapstream_config.h"

namespace snapstream::runtime {

// Where a slot's sequence stands; the same for every layer and head.
struct SequenceState {
  int64_t length = 0;       // positions seen (prompt + generated), i.e. the next position
  int64_t filled = 0;       // cache entries written in order before the ring took over
  int64_t ring_writes = 0;  // writes into the ring once the cache is full
};

// One layer of one sequence's cache, every held KV head: [held heads][capacity] entries.
struct LayerCacheView {
  kernels::KvRows keys;        // [held heads][capacity][head_dim]
  kernels::KvRows values;
  uint8_t* live = nullptr;     // [held heads][capacity]
  int32_t* positions = nullptr;

  // The same view starting at held KV head `first` (for a tensor-parallel shard).
  LayerCacheView from_head(int64_t first, int64_t capacity, int64_t head_dim) const {
    return {{keys.dtype, keys.row(first * capacity, head_dim)}, {values.dtype, values.row(first * capacity, head_dim)},
            live + first * capacity, positions + first * capacity};
  }
};

// The KV heads [first, first + count) a cache holds of every layer: all of them in one process,
// one tensor-parallel shard's on an MPI rank. count 0 means all.
struct KvHeadRange {
  int64_t first = 0;
  int64_t count = 0;
};

// Writes one token's keys and values ([kv_heads][head_dim] each) into entry `entry` of a layer
// view and marks the entry live at `position`.
void store_token(const LayerCacheView& view, int64_t kv_heads, int64_t head_dim, int64_t capacity, int64_t entry,
                 int64_t position, const float* key, const float* value);

class SlotKvCache {
 public:
  // `config` must be resolved for `model`'s context length. Holds the KV heads `held` only.
  SlotKvCache(const graph::ModelShape& model, const SnapStreamConfig& config, int64_t slots, KvHeadRange held = {});

  const SnapStreamConfig& config() const { return config_; }
  int64_t slots() const { return slots_; }
  int64_t capacity() const { return config_.capacity; }
  // The KV heads held, count resolved (never 0).
  KvHeadRange held_heads() const { return held_; }
  // Whether a sequence may grow past the model's context: a bounded cache with re-indexed
  // positions keeps every query-key distance below its capacity (StreamingLLM's unbounded
  // streaming), where original positions would rotate keys beyond anything the model saw.
  bool streams_past_context() const { return !config_.full_cache && config_.positions == PositionMode::Reindexed; }

  kernels::KvRows keys(int64_t slot, int64_t layer) { return {config_.kv_dtype, keys_.data() + offset(slot, layer)}; }
  kernels::KvRows values(int64_t slot, int64_t layer) { return {config_.kv_dtype, values_.data() + offset(slot, layer)}; }
  uint8_t* live(int64_t slot, int64_t layer) { return live_.data() + marker_offset(slot, layer); }
  int32_t* positions(int64_t slot, int64_t layer) { return positions_.data() + marker_offset(slot, layer); }
  const int32_t* positions(int64_t slot, int64_t layer) const { return positions_.data() + marker_offset(slot, layer); }
  LayerCacheView layer_view(int64_t slot, int64_t layer) {
    return {keys(slot, layer), values(slot, layer), live(slot, layer), positions(slot, layer)};
  }
  SequenceState& state(int64_t slot) { return states_.at(static_cast<size_t>(slot)); }
  // Entries [0, extent) of sequence slot `slot` may be live; the rest are empty.
  int64_t extent(int64_t slot) const {
    const SequenceState& s = states_.at(static_cast<size_t>(slot));
    return s.ring_writes > 0 ? config_.capacity : s.filled;
  }

  // Empties a slot for its next sequence: nothing of the previous one stays live.
  void reset(int64_t slot);

  // The cache entry the next decoded token goes to: the next free entry while the cache fills,
  // then the ring's oldest, S + K + (ring writes mod R). Advances the state.
  int64_t next_write_entry(int64_t slot);

  // The RoPE rotation of the next decoded token (call before next_write_entry). Original
  // positions: its absolute position. Re-indexed positions, which keep every query-key distance
  // within the capacity: while the cache fills, its entry index (its rank); once the ring
  // overwrites, C + the overwrites so far. A ring key then sits at distance C - rank from the
  // query; the sink and compressed entries [0, C - R) keep their index as rotation, so their
  // queries turn to C instead (shifted_rotation; the entries below shifted_end() use it).
  int64_t next_rotation(int64_t slot) const;
  int64_t shifted_rotation() const { return config_.capacity; }
  // Entries [0, shifted_end) of slot `slot` are scored with queries at shifted_rotation(): 0 unless
  // positions are re-indexed and the ring has started overwriting.
  int64_t shifted_end(int64_t slot) const;

  // Bytes one sequence slot holds here (keys and values of the held heads), and all slots together.
  int64_t bytes_per_slot() const;
  int64_t total_bytes() const { return bytes_per_slot() * slots_; }
  // What a full cache of `positions` tokens would hold for one sequence, for comparison.
  static int64_t full_cache_bytes(const graph::ModelShape& model, int64_t positions, kernels::DType kv_dtype);

 private:
  int64_t offset(int64_t slot, int64_t layer) const { return (slot * layers_ + layer) * layer_bytes_; }
  int64_t marker_offset(int64_t slot, int64_t layer) const { return (slot * layers_ + layer) * layer_markers_; }

  SnapStreamConfig config_;
  KvHeadRange held_;
  int64_t slots_, layers_, layer_bytes_, layer_markers_;
  // Made resident at start-up, on huge pages: a decode step reads a run of entries from each head
  // of each layer of each sequence, and small pages made that a TLB miss every 4 KiB.
  LazyPages keys_, values_;
  std::vector<uint8_t> live_;
  std::vector<int32_t> positions_;  // the absolute position each entry holds, -1 when empty
  std::vector<SequenceState> states_;
};

}  // namespace snapstream::runtime
