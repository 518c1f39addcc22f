// Moving token keys/values between the dense per-position layout ([position][kv_heads*head_dim])
// and a sequence's cache entries ([kv_heads][capacity][head_dim]): an entry holds one token's
// vector for each KV head.
#pragma once

#include <cstdint>

namespace snapstream::kernels {

// Copies one token's vectors for every KV head into entry `entry` of the cache.
void write_entry(const float* token, int64_t kv_heads, int64_t head_dim, int64_t capacity, int64_t entry, float* cache);

// For one KV head: copies the rows of `positions` (count of them, each below `length`) out of
// the dense layout [length][kv_heads*head_dim] into consecutive entries starting at `first_entry`.
void gather_positions(const float* dense, int64_t length, int64_t kv_heads, int64_t head_dim, int64_t kv_head,
                      const int32_t* positions, int64_t count, int64_t capacity, int64_t first_entry, float* cache);

}  // namespace snapstream::kernels
