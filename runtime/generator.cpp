// The generation loop. A generated BOS ends the sequence as EOS does: it means the model has
// started a new document.
#include "runtime/generator.h"

#include <algorithm>
#include <chrono>

#include "runtime/errors.h"
#include "runtime/slot_kv_cache.h"
#include "runtime/stop_rule.h"
#include "runtime/graph_runner.h"

namespace snapstream {
namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

double GenerationResult::prefill_tokens_per_s() const {
  return prefill_seconds > 0 ? static_cast<double>(prompt_ids.size()) / prefill_seconds : 0.0;
}

double GenerationResult::decode_tokens_per_s() const {
  return decode_seconds > 0 ? static_cast<double>(decode_steps) / decode_seconds : 0.0;
}

GenerationResult generate(const Model& model, kernels::ThreadPool& pool, std::span<const int32_t> prompt_ids,
                          const GenerationOptions& options, const std::function<void(int32_t)>& on_token) {
  const int64_t context = model.shape.context_length;
  const auto prompt_length = static_cast<int64_t>(prompt_ids.size());
  if (prompt_length == 0) throw InvalidRequestError("the prompt has no tokens");
  if (prompt_length >= context)
    throw InvalidRequestError("the prompt has " + std::to_string(prompt_length) + " tokens; the context holds " +
                              std::to_string(context) + ", leaving no room to generate");
  if (options.max_tokens < 0) throw InvalidRequestError("max_tokens must be >= 0");
  model.tokenizer.check_ids(prompt_ids);
  Sampler sampler(options.sampling);

  GenerationResult result;
  result.prompt_ids.assign(prompt_ids.begin(), prompt_ids.end());
  result.finish_reason = "length";
  const int64_t max_tokens = generation_limit(options.max_tokens, prompt_length, context);
  SlotKvCache cache(model.shape, options.cache.resolved(context), 1);
  GraphPlan plan = options.graphs;
  plan.decode_batches = {1};
  GraphRunner runner(model, pool, cache, plan);
  std::vector<float> logits(static_cast<size_t>(model.shape.vocab));

  auto start = std::chrono::steady_clock::now();
  runner.prefill(prompt_ids, 0, logits.data());
  result.prefill_seconds = seconds_since(start);
  result.first_logits = logits;

  start = std::chrono::steady_clock::now();
  while (static_cast<int64_t>(result.ids.size()) < max_tokens) {
    const int32_t next = sampler.sample(logits);
    if (is_end_token(model.tokenizer, next)) {
      result.finish_reason = "stop";
      break;
    }
    result.ids.push_back(next);
    if (on_token) on_token(next);
    if (static_cast<int64_t>(result.ids.size()) == max_tokens) break;
    const DecodeInput step[1] = {{next, 0}};
    runner.decode(step, logits.data());
    ++result.decode_steps;
  }
  result.decode_seconds = seconds_since(start);
  return result;
}

}  // namespace snapstream
