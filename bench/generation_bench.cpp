// Timing loops over the graph runner itself, so the numbers exclude sampling and detokenising.
#include "bench/generation_bench.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/median.h"
#include "kernels/kv_entries.h"
#include "runtime/errors.h"
#include "runtime/slot_kv_cache.h"

namespace snapstream::bench {
namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

GenerationBenchResult run_generation_bench(const runtime::Model& model, kernels::ThreadPool& pool, const GenerationBenchOptions& options) {
  const graph::ModelShape& c = model.shape;
  const int64_t n = options.concurrency, prompt_tokens = options.prompt_tokens, steps = options.decode_tokens;
  if (n < 1 || prompt_tokens < 1 || steps < 1 || options.repeats < 1)
    throw runtime::InvalidRequestError("concurrency, prompt tokens, decode tokens and repeats must all be at least 1");
  if (prompt_tokens + steps > c.context_length)
    throw runtime::InvalidRequestError("prompt + decode tokens (" + std::to_string(prompt_tokens + steps) + ") exceed the context of " +
                              std::to_string(c.context_length));
  // Ids past the special and byte tokens, spread over the vocabulary; each sequence its own.
  const int64_t first_id = std::min<int64_t>(259, c.vocab - 1);
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(n));
  for (int64_t s = 0; s < n; ++s) {
    auto& prompt = prompts[static_cast<size_t>(s)];
    prompt.push_back(model.tokenizer.bos_id());
    for (int64_t i = 1; i < prompt_tokens; ++i)
      prompt.push_back(static_cast<int32_t>(first_id + (i * 7919 + s * 104729) % (c.vocab - first_id)));
  }

  const runtime::SnapStreamConfig config = options.cache.resolved(c.context_length);
  runtime::GraphPlan plan = options.graphs;
  plan.decode_batches = {n};
  plan.prefill_lengths = {prompt_tokens};
  runtime::SlotKvCache cache(c, config, n, runtime::held_kv_heads(c, plan));
  runtime::GraphRunner runner(model, pool, cache, plan);
  GenerationBenchResult result;
  if (options.join && !options.join(runner)) {
    result.led = false;
    return result;
  }
  // Each rank's time so far, as rank 0 last gathered it (empty in one process).
  auto rank_seconds = [&runner] {
    return runner.step_relay() != nullptr ? runner.step_relay()->rank_seconds() : std::vector<runtime::RankSeconds>{};
  };
  std::vector<float> logits(static_cast<size_t>(n * c.vocab));
  std::vector<runtime::DecodeInput> inputs(static_cast<size_t>(n));
  std::vector<double> prefill_times, compaction_times, decode_times;
  for (int r = 0; r < options.repeats; ++r) {
    const double compaction_before = runner.compaction_seconds();
    runner.set_profile(options.profile ? &result.prefill_profile : nullptr);
    auto start = std::chrono::steady_clock::now();
    for (int64_t s = 0; s < n; ++s) runner.prefill(prompts[static_cast<size_t>(s)], s, logits.data());
    prefill_times.push_back(seconds_since(start));
    compaction_times.push_back(runner.compaction_seconds() - compaction_before);
    runner.set_profile(options.profile ? &result.decode_profile : nullptr);
    const std::vector<runtime::RankSeconds> ranks_before = rank_seconds();
    start = std::chrono::steady_clock::now();
    for (int64_t step = 0; step < steps; ++step) {
      for (int64_t s = 0; s < n; ++s)
        inputs[static_cast<size_t>(s)] = {prompts[static_cast<size_t>(s)][static_cast<size_t>(step % prompt_tokens)], s};
      runner.decode(inputs, logits.data());
    }
    decode_times.push_back(seconds_since(start));
    runner.set_profile(nullptr);
    const std::vector<runtime::RankSeconds> ranks_after = rank_seconds();
    result.decode_ranks.resize(ranks_after.size());
    for (size_t rank = 0; rank < ranks_after.size() && rank < ranks_before.size(); ++rank) {
      result.decode_ranks[rank].steps += ranks_after[rank].steps - ranks_before[rank].steps;
      result.decode_ranks[rank].collectives += ranks_after[rank].collectives - ranks_before[rank].collectives;
    }
    result.decode_seconds_per_step_by_repeat.push_back(decode_times.back() / static_cast<double>(steps));
    if (options.after_repeat) options.after_repeat();
  }

  const double prefill = median(prefill_times), decode = median(decode_times);
  result.prefill_seconds = prefill;
  result.prefill_tokens_per_s = static_cast<double>(n * prompt_tokens) / prefill;
  result.compaction_share = median(compaction_times) / prefill;
  result.decode_seconds_per_step = decode / static_cast<double>(steps);
  result.decode_tokens_per_s = static_cast<double>(n * steps) / decode;
  result.weight_bytes_per_step = model.weights.bytes_read_per_token();
  // Each step reads the live slots of every sequence: its whole context, or at most C.
  const double mean_context = static_cast<double>(prompt_tokens) + static_cast<double>(steps - 1) / 2.0;
  const double live = std::min(mean_context, static_cast<double>(config.capacity));
  result.kv_bytes_per_step =
      static_cast<int64_t>(static_cast<double>(n) * live * 2.0 * static_cast<double>(c.kv_heads * c.layers) *
                           static_cast<double>(kernels::row_bytes(config.kv_dtype, c.head_dim)));
  result.weight_bytes_per_s = static_cast<double>(result.weight_bytes_per_step) / result.decode_seconds_per_step;
  result.decode_bytes_per_s =
      static_cast<double>(result.weight_bytes_per_step + result.kv_bytes_per_step) / result.decode_seconds_per_step;
  return result;
}

}  // namespace snapstream::bench
