// The end of prefill: a prompt's keys and values move from the dense prefill layout into its
// sequence slot, compressed by SnapKV selection when the prompt is longer than the capacity.
#pragma once

#include <cstdint>

#include "kernels/attention_shape.h"
#include "kernels/thread_pool.h"
#include "runtime/slot_kv_cache.h"

namespace snapstream::runtime {

// One layer for a contiguous range of KV heads (all of them, or one tensor-parallel shard's).
// keys/values are [length][shape.kv_width()], window_queries [window][shape.q_width()] (the
// rotated queries of the last `window` prompt positions), and `cache` points at the range's
// first KV head. A prompt of at most C tokens is copied in position order. A longer one keeps,
// per KV head, the S sink positions, the K best-scoring candidates of [S, length - R) in
// ascending order (or K random ones, with Selection::Random), and the last R positions in the ring (its oldest entry in the ring's first slot).
// With re-indexed positions the kept keys turn from their position to their entry index (see
// SlotKvCache::next_rotation), which needs the model's RoPE.
void compact_layer(kernels::ThreadPool& pool, const SnapStreamConfig& config, const kernels::RopeSpec& rope, const kernels::AttentionShape& shape,
                   const float* keys, const float* values, int64_t length, const float* window_queries, int64_t window,
                   const LayerCacheView& cache);

// The random baseline's choice: per KV head, `count` distinct positions of [begin, end) drawn
// uniformly, in ascending order, into selected[kv * count ...]. The same seed and range draw
// the same positions.
void select_at_random(uint64_t seed, int64_t kv_heads, int64_t begin, int64_t end, int64_t count, int32_t* selected);

// The sequence state a slot holds after compacting a prompt of `length` tokens.
SequenceState state_after_prompt(const SnapStreamConfig& config, int64_t length);

}  // namespace snapstream::runtime
