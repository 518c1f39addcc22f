// The end of prefill: a prompt's keys and values move from the dense prefill cache into its
// sequence slot, compressed by SnapKV selection when the prompt is longer than the capacity.
#pragma once

#include <cstdint>

#include "kernels/thread_pool.h"
#include "runtime/kv_cache.h"
#include "runtime/model_config.h"
#include "runtime/slot_kv_cache.h"

namespace snapstream {

// `dense` holds positions 0..length-1 of every layer. window_queries is
// [layers][window][dim]: the rotated queries of the last `window` prompt positions.
// A prompt of at most C tokens is copied in position order. A longer one keeps per KV head
// the S sink positions, the K best-scoring candidates of [S, length - R) in ascending order,
// and the last R positions in the ring (whose oldest entry is then the ring's first slot).
void compact_prompt(kernels::ThreadPool& pool, const ModelConfig& model, DenseKvCache& dense, int64_t length,
                    const float* window_queries, int64_t window, SlotKvCache& cache, int64_t slot);

}  // namespace snapstream
