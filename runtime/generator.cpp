// The generation loop. A generated BOS ends the sequence as EOS does: it means the model has
// started a new document.
#include "runtime/generator.h"

#include <algorithm>
#include <chrono>

#include "runtime/errors.h"
#include "runtime/prompt_check.h"
#include "runtime/stop_rule.h"

namespace snapstream::runtime {
namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One sequence: only the batch-1 decode graph.
GraphPlan one_sequence(GraphPlan plan) {
  plan.decode_batches = {1};
  return plan;
}
}  // namespace

double GenerationResult::prefill_tokens_per_s() const {
  return prefill_seconds > 0 ? static_cast<double>(prompt_ids.size()) / prefill_seconds : 0.0;
}

double GenerationResult::decode_tokens_per_s() const {
  return decode_seconds > 0 ? static_cast<double>(decode_steps) / decode_seconds : 0.0;
}

Generator::Generator(const Model& model, kernels::ThreadPool& pool, const GenerationOptions& options)
    : model_(model),
      options_(options),
      cache_(model.shape, options.cache.resolved(model.shape.context_length), 1, held_kv_heads(model.shape, options.graphs)),
      runner_(model, pool, cache_, one_sequence(options.graphs)) {}

GenerationResult Generator::run(std::span<const int32_t> prompt_ids, const std::function<void(int32_t)>& on_token) {
  const int64_t context = model_.shape.context_length;
  const auto prompt_length = static_cast<int64_t>(prompt_ids.size());
  check_prompt(prompt_ids, context, model_.tokenizer);
  if (options_.max_tokens < 0) throw InvalidRequestError("max_tokens must be >= 0");
  Sampler sampler(options_.sampling, prompt_ids);

  GenerationResult result;
  result.prompt_ids.assign(prompt_ids.begin(), prompt_ids.end());
  result.finish_reason = "length";
  const int64_t max_tokens = generation_limit(options_.max_tokens, prompt_length, context, cache_.streams_past_context());
  std::vector<float> logits(static_cast<size_t>(model_.shape.vocab));

  auto start = std::chrono::steady_clock::now();
  runner_.prefill(prompt_ids, 0, logits.data());
  result.prefill_seconds = seconds_since(start);
  result.first_logits = logits;

  start = std::chrono::steady_clock::now();
  while (static_cast<int64_t>(result.ids.size()) < max_tokens) {
    const int32_t next = sampler.sample(logits);
    if (!options_.ignore_eos && is_end_token(model_.tokenizer, next)) {
      result.finish_reason = "stop";
      break;
    }
    result.ids.push_back(next);
    if (on_token) on_token(next);
    if (static_cast<int64_t>(result.ids.size()) == max_tokens) break;
    const DecodeInput step[1] = {{next, 0}};
    runner_.decode(step, logits.data());
    ++result.decode_steps;
  }
  result.decode_seconds = seconds_since(start);
  return result;
}

GenerationResult generate(const Model& model, kernels::ThreadPool& pool, std::span<const int32_t> prompt_ids,
                          const GenerationOptions& options, const std::function<void(int32_t)>& on_token) {
  return Generator(model, pool, options).run(prompt_ids, on_token);
}

}  // namespace snapstream::runtime
