// Decode attention over a fixed-capacity, masked KV cache: one new query token per sequence
// attends to the cache's live entries plus its own key and value. Its cost is set by the
// capacity, never by how long the sequence has grown.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention_shape.h"
#include "kernels/dtype.h"
#include "kernels/thread_pool.h"

namespace snapstream::kernels {

// One sequence's cache: keys and values are [kv_heads][capacity][head_dim] in `dtype` (F32, F16
// or Q8_0, rows row_bytes(dtype, head_dim) apart); live is [kv_heads][capacity], nonzero where an entry holds a token (each KV head keeps
// its own set).
struct CacheView {
  const std::byte* keys = nullptr;
  const std::byte* values = nullptr;
  const uint8_t* live = nullptr;
  // Entries [0, extent) may be live and the rest are all empty, so a short sequence in a large
  // cache costs its length, not the capacity. Negative: the whole capacity.
  int64_t extent = -1;
  // Re-indexed positions: entries [0, shifted_end) are scored with the sequence's row of
  // `shifted_q` instead of q (see decode_attention). 0: every entry uses q.
  int64_t shifted_end = 0;
  DType dtype = DType::F32;
};

// For b < batch: q [batch][heads*head_dim], self_keys/self_values [batch][kv_heads*head_dim]
// (the new tokens, keys already rotated), caches[b] that sequence's cache. out is
// [batch][heads*head_dim]. Entries that are not live never enter the softmax. shifted_q, laid out
// like q, is the same queries rotated to another position for the entries below each cache's
// shifted_end; it may be null when no cache has any.
void decode_attention(ThreadPool& pool, int64_t batch, const float* q, const float* shifted_q, const float* self_keys,
                      const float* self_values, const CacheView* caches, int64_t capacity, const AttentionShape& shape,
                      float* out);

}  // namespace snapstream::kernels
