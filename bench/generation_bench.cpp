// Timing loops over the graph runner itself, so the numbers exclude sampling and detokenising.
#include "bench/generation_bench.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "runtime/errors.h"
#include "runtime/graph_runner.h"
#include "runtime/slot_kv_cache.h"

namespace snapstream::bench {
namespace {
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}
}  // namespace

GenerationBenchResult run_generation_bench(const Model& model, kernels::ThreadPool& pool, const GenerationBenchOptions& options) {
  const ModelConfig& c = model.config;
  const int64_t total = options.prompt_tokens + options.decode_tokens;
  if (options.prompt_tokens < 1 || options.decode_tokens < 1 || options.repeats < 1)
    throw InvalidRequestError("prompt tokens, decode tokens and repeats must all be at least 1");
  if (total > c.context_length)
    throw InvalidRequestError("prompt + decode tokens (" + std::to_string(total) + ") exceed the context of " +
                              std::to_string(c.context_length));
  // Ids past the special and byte tokens, spread over the vocabulary.
  const int64_t first_id = std::min<int64_t>(259, c.vocab_size - 1);
  std::vector<int32_t> prompt(static_cast<size_t>(options.prompt_tokens));
  for (int64_t i = 0; i < options.prompt_tokens; ++i)
    prompt[static_cast<size_t>(i)] = static_cast<int32_t>(first_id + (i * 7919) % (c.vocab_size - first_id));
  prompt[0] = model.tokenizer.bos_id();

  const SnapStreamConfig config = options.cache.resolved(c.context_length);
  SlotKvCache cache(c, config, 1);
  GraphRunner runner(model, pool, cache, {{1}, {options.prompt_tokens}, 1, true});
  std::vector<float> logits(static_cast<size_t>(c.vocab_size));
  std::vector<double> prefill_times, decode_times;
  for (int r = 0; r < options.repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    runner.prefill(prompt, 0, logits.data());
    prefill_times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    start = std::chrono::steady_clock::now();
    for (int64_t step = 0; step < options.decode_tokens; ++step) {
      const DecodeInput input[1] = {{prompt[static_cast<size_t>(step % options.prompt_tokens)], 0}};
      runner.decode(input, logits.data());
    }
    decode_times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  GenerationBenchResult result;
  result.prefill_tokens_per_s = static_cast<double>(options.prompt_tokens) / median(prefill_times);
  result.decode_seconds_per_token = median(decode_times) / static_cast<double>(options.decode_tokens);
  result.decode_tokens_per_s = 1.0 / result.decode_seconds_per_token;
  result.weight_bytes_per_token = model.weights.bytes_read_per_token();
  // A decode step reads the live slots: the whole context, or at most C under SnapStream.
  const double mean_context = static_cast<double>(options.prompt_tokens) + static_cast<double>(options.decode_tokens - 1) / 2.0;
  const double live = std::min(mean_context, static_cast<double>(config.capacity));
  result.kv_bytes_per_token = static_cast<int64_t>(live * 2.0 * static_cast<double>(c.kv_dim() * c.n_layers) * 4.0);
  result.weight_bytes_per_s = static_cast<double>(result.weight_bytes_per_token) / result.decode_seconds_per_token;
  result.decode_bytes_per_s =
      static_cast<double>(result.weight_bytes_per_token + result.kv_bytes_per_token) / result.decode_seconds_per_token;
  return result;
}

}  // namespace snapstream::bench
