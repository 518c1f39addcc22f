// SnapKV selection: the observation window's queries vote for the prefix positions they attend
// to; votes are smoothed by 1-D pooling and the top-K positions per KV head are kept.
#pragma once

#include <cstdint>

#include "kernels/attention_shape.h"
#include "kernels/thread_pool.h"

namespace snapstream::kernels {

enum class PoolKind : uint8_t { Max, Avg };

// Recomputes the window's attention rows (a fused attention kernel keeps no probabilities):
// scores[kv][j] = sum over window queries i and the query heads h of KV head kv of
// softmax_j(q_i,h · k_j / sqrt(head_dim)), the softmax over every key visible to query i.
// window_q is [window][heads*head_dim] at positions window_start.., keys [length][kv_heads*head_dim]
// at positions 0.., with window_start + window <= length. scores is [kv_heads][length].
void snapkv_scores(ThreadPool& pool, const float* window_q, int64_t window, int64_t window_start, const float* keys,
                   int64_t length, const AttentionShape& shape, float* scores);

// Smooths each row's [begin, end) with a stride-1, same-padding window of odd `kernel` width;
// positions outside [begin, end) are ignored (an average divides by the positions inside).
void pool_scores(const float* scores, int64_t rows, int64_t length, int64_t begin, int64_t end, int64_t kernel,
                 PoolKind kind, float* pooled);

// Picks, per row, the k best positions in [begin, end); equal scores prefer the earlier
// position. selected is [rows][k], each row in ascending position order.
void select_top_k(const float* pooled, int64_t rows, int64_t length, int64_t begin, int64_t end, int64_t k,
                  int32_t* selected);

}  // namespace snapstream::kernels
