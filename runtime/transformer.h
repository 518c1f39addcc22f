// The Llama forward pass: a block of tokens in (a prompt, or one decode token), logits out.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/thread_pool.h"
#include "runtime/kv_cache.h"
#include "runtime/model.h"

namespace snapstream {

class Transformer {
 public:
  Transformer(const Model& model, kernels::ThreadPool& pool);

  // Runs `tokens` at positions first_position.. and stores their keys/values in `cache`.
  // Writes the logits of the last token to `logits` [vocab]. A block of many tokens runs as
  // matrix-matrix work (prefill); a single token is a decode step.
  void forward(std::span<const int32_t> tokens, int64_t first_position, DenseKvCache& cache, float* logits);

 private:
  void ensure_capacity(int64_t tokens);

  const Model& model_;
  kernels::ThreadPool& pool_;
  int64_t rows_ = 0;  // tokens the activation buffers can hold
  std::vector<float> x_, normed_, q_, attention_, projected_, gate_, up_;
};

}  // namespace snapstream
