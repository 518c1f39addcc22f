// Measuring what a cache policy costs on real weights: a prompt is prefilled under the policy,
// its continuation is teacher-forced through decode steps (so the ring evicts as in serving),
// and the model's log-probability of each true token and its own top choice are recorded;
// then the same prompt generates freely and greedily. Several documents run together, one
// per slot of a static cache.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/thread_pool.h"
#include "runtime/graph_runner.h"
#include "runtime/model.h"
#include "runtime/slot_kv_cache.h"
#include "runtime/snapstream_config.h"

namespace snapstream {

struct EvalDocument {
  std::span<const int32_t> prompt;        // L tokens
  std::span<const int32_t> continuation;  // M tokens
};

struct DocumentRun {
  std::vector<double> logprobs;  // log p(continuation[j] | everything before it), j = 0..M-1
  std::vector<int32_t> argmax;   // the model's most likely token at each of those positions
  std::vector<int32_t> greedy;   // free-running greedy tokens after the prompt (EOS included)
};

class CacheEvaluator {
 public:
  // `cache` is resolved against the model's context. Throws ConfigError for a bad policy.
  CacheEvaluator(const Model& model, kernels::ThreadPool& pool, const SnapStreamConfig& cache, int64_t slots);

  // Runs up to slots() documents together. Throws InvalidRequestError when a document does
  // not fit the context or has no prompt or continuation.
  std::vector<DocumentRun> run(std::span<const EvalDocument> documents, int64_t greedy_tokens);

  int64_t slots() const { return cache_.slots(); }
  const SlotKvCache& cache() const { return cache_; }

 private:
  const Model& model_;
  SlotKvCache cache_;
  GraphRunner runner_;
  std::vector<float> logits_;
};

// log softmax(logits)[token], computed in double.
double token_logprob(std::span<const float> logits, int32_t token);

}  // namespace snapstream
