// The Llama forward pass: a block of prompt tokens over a dense cache (prefill), or one token
// for each of a batch of sequences over their fixed-capacity slot caches (decode).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "runtime/kv_cache.h"
#include "runtime/model.h"
#include "runtime/graph_runner.h"
#include "runtime/slot_kv_cache.h"

namespace snapstream {

class Transformer {
 public:
  Transformer(const Model& model, kernels::ThreadPool& pool);

  // Runs `tokens` at positions first_position.. and stores their keys/values in `cache`.
  // Writes the logits of the last token to `logits` [vocab]. The block runs as matrix-matrix
  // work. When window_queries is given ([layers][window][dim]), the rotated queries of the
  // block's last `window` tokens are copied there for SnapKV.
  void forward(std::span<const int32_t> tokens, int64_t first_position, DenseKvCache& cache, float* logits,
               float* window_queries = nullptr, int64_t window = 0);

  // Prefills a whole prompt into `slot` of `cache` (compressing it when it exceeds the
  // capacity) and writes the last token's logits [vocab].
  void prefill(std::span<const int32_t> prompt, SlotKvCache& cache, int64_t slot, float* logits);

  // One decode step for a batch of sequences; logits is [batch][vocab]. Each token attends to
  // its slot's live entries and itself, then is written to the slot (the ring once it is full).
  void decode(std::span<const DecodeInput> batch, SlotKvCache& cache, float* logits);

 private:
  void ensure_capacity(int64_t tokens);
  void embed(std::span<const int32_t> tokens);
  // The MLP block and its residual for `rows` rows of x_.
  void mlp_block(const LayerWeights& layer, int64_t rows, kernels::MatmulPath path);

  const Model& model_;
  kernels::ThreadPool& pool_;
  int64_t rows_ = 0;  // tokens the activation buffers can hold
  std::vector<float> x_, normed_, q_, k_, v_, attention_, projected_, gate_, up_;
};

}  // namespace snapstream
