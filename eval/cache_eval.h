// Measuring what a cache policy costs on real weights: a prompt is prefilled under the policy,
// its continuation is teacher-forced through decode steps (so the ring evicts as in serving),
// and the model's log-probability of each true token and its own top choice are recorded;
// then the same prompt generates freely and greedily. Several documents run together, one
// per slot of a static cache.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "eval/token_span.h"
#include "kernels/thread_pool.h"
#include "runtime/graph_runner.h"
#include "runtime/model.h"
#include "runtime/slot_kv_cache.h"
#include "runtime/snapstream_config.h"

namespace snapstream::eval {

// The cache settings every eval run starts from: f32 storage unless asked (serving defaults to
// f16), so two rows differ only in the positions their policies keep, never in rounding; a run
// asked for f16 or q8_0 measures what that storage's rounding costs, every row alike.
inline runtime::SnapStreamConfig measuring_cache(kernels::DType kv_dtype = kernels::DType::F32) {
  runtime::SnapStreamConfig config;
  config.kv_dtype = kv_dtype;
  return config;
}

struct EvalDocument {
  std::span<const int32_t> prompt;        // L tokens
  std::span<const int32_t> continuation;  // M tokens
  std::span<const TokenSpan> needed;      // retrieval: the prompt tokens the answer copies (may be empty)
};

struct DocumentRun {
  std::vector<double> logprobs;  // log p(continuation[j] | everything before it), j = 0..M-1
  std::vector<int32_t> argmax;   // the model's most likely token at each of those positions
  std::vector<int32_t> greedy;   // free-running greedy tokens after the prompt (EOS included)
  // With capture on: at each teacher-forced decode step j (1..M-1), each layer and KV group,
  // the attention probability of every position (the group's query heads averaged), laid out
  // [step][layer][group][position] with a stride of the model's context.
  std::vector<float> attention;
  // Given a reference run with captured attention: the share of the reference's attention mass
  // on positions this cache held (and the token itself), averaged over steps, layers and heads.
  double attention_recall = -1.0;
  // Given needed tokens: per layer and KV group ([layer][group]), whether that cache held every
  // one of them right after prefill (the full cache always does); empty without.
  std::vector<char> values_held;
};

class CacheEvaluator {
 public:
  // `cache` is resolved against the model's context. Throws ConfigError for a bad policy.
  CacheEvaluator(const runtime::Model& model, kernels::ThreadPool& pool, const runtime::SnapStreamConfig& cache, int64_t slots);

  // Runs up to slots() documents together, each generating up to `greedy_tokens` tokens after
  // its prompt, fewer where its prompt leaves less room in the context. `reference`, when given,
  // holds one run with captured attention per document, for the recall. Throws
  // InvalidRequestError when a document does not fit the context or has no prompt or continuation.
  std::vector<DocumentRun> run(std::span<const EvalDocument> documents, int64_t greedy_tokens,
                               std::span<const DocumentRun> reference = {});

  // Record each teacher-forced step's attention probabilities (DocumentRun::attention).
  void capture_attention(bool on) { capture_ = on; }

  int64_t slots() const { return cache_.slots(); }
  const runtime::SlotKvCache& cache() const { return cache_; }

 private:
  const runtime::Model& model_;
  runtime::SlotKvCache cache_;
  runtime::GraphRunner runner_;
  std::vector<float> logits_;
  bool capture_ = false;
};

}  // namespace snapstream::eval
