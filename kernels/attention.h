// Causal multi-head attention with grouped KV heads over a dense cache of past positions.
#pragma once

#include <cstdint>

#include "kernels/attention_shape.h"
#include "kernels/thread_pool.h"

namespace snapstream::kernels {

// Queries q [m][heads*head_dim] sit at positions first_position .. first_position+m-1.
// keys and values are [first_position+m][kv_heads*head_dim], one row per position from 0.
// Query i attends to positions 0..first_position+i. out is [m][heads*head_dim].
void causal_attention(ThreadPool& pool, const float* q, int64_t m, int64_t first_position, const float* keys,
                      const float* values, const AttentionShape& shape, float* out);

}  // namespace snapstream::kernels
