// Generation for one sequence: prefill the prompt, then decode and sample until a stop.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kernels/thread_pool.h"
#include "runtime/graph_runner.h"
#include "runtime/model.h"
#include "runtime/sampler.h"
#include "runtime/slot_kv_cache.h"
#include "runtime/snapstream_config.h"

namespace snapstream::runtime {

struct GenerationOptions {
  int64_t max_tokens = 256;
  SamplingParams sampling;
  SnapStreamConfig cache;  // resolved against the model's context by generate()
  GraphPlan graphs;        // shards and looping; one sequence, so only the batch-1 decode graph
  bool ignore_eos = false; // end-of-generation tokens are generated as any other: only max_tokens ends
};

struct GenerationResult {
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> ids;            // generated ids, without the BOS/EOS that stopped them
  std::string finish_reason;           // "stop" (EOS or BOS, unless ignore_eos) or "length"
  std::vector<float> first_logits;     // the logits that chose the first generated token
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;
  int64_t decode_steps = 0;            // forward passes after the prompt

  double prefill_tokens_per_s() const;
  double decode_tokens_per_s() const;
};

// One sequence's graphs and cache, compiled and allocated once; run() then generates for one
// prompt after another.
class Generator {
 public:
  // Throws ConfigError for a cache or tensor-parallel plan the model's shape cannot take, before
  // any prompt is looked at.
  Generator(const Model& model, kernels::ThreadPool& pool, const GenerationOptions& options);

  // Calls on_token for each generated id as soon as it is chosen. max_tokens is reduced to what
  // the context leaves after the prompt. Throws InvalidRequestError for an empty prompt, a
  // prompt that fills the context, or ids outside the vocabulary.
  GenerationResult run(std::span<const int32_t> prompt_ids, const std::function<void(int32_t)>& on_token = {});

  const GraphRunner& runner() const { return runner_; }
  GraphRunner& runner() { return runner_; }
  const SlotKvCache& cache() const { return cache_; }

 private:
  const Model& model_;
  GenerationOptions options_;
  SlotKvCache cache_;
  GraphRunner runner_;
};

// Generator(model, pool, options).run(prompt_ids, on_token).
GenerationResult generate(const Model& model, kernels::ThreadPool& pool, std::span<const int32_t> prompt_ids,
                          const GenerationOptions& options, const std::function<void(int32_t)>& on_token = {});

}  // namespace snapstream::runtime
