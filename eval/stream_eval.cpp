// Teacher-forced streams in slots of one cache, scored token by token into windows of positions.
#include "eval/stream_eval.h"

#include <algorithm>

#include "eval/eval_texts.h"
#include "runtime/errors.h"
#include "runtime/graph_runner.h"
#include "runtime/slot_kv_cache.h"
#include "runtime/token_logprobs.h"

namespace snapstream::eval {

std::vector<int32_t> sample_story_stream(const runtime::Model& model, kernels::ThreadPool& pool, int64_t length, uint64_t seed) {
  std::vector<int32_t> stream;
  for (uint64_t story = 0; static_cast<int64_t>(stream.size()) < length; ++story) {
    const runtime::GenerationResult result = sample_story(model, pool, model.shape.context_length - 1, seed + story);
    stream.push_back(model.tokenizer.bos_id());
    stream.insert(stream.end(), result.ids.begin(), result.ids.end());
  }
  stream.resize(static_cast<size_t>(length));
  return stream;
}

std::vector<StreamWindow> run_stream_eval(const runtime::Model& model, kernels::ThreadPool& pool, const std::vector<EvalRow>& rows,
                                          const std::vector<std::vector<int32_t>>& streams, int64_t prompt_length, int64_t window,
                                          int64_t slots, const std::function<void(int64_t, int64_t)>& progress) {
  if (streams.empty() || window <= 0 || prompt_length <= 0 || slots <= 0)
    throw runtime::ConfigError("a stream evaluation needs streams, a window, a prompt and slots");
  const auto length = static_cast<int64_t>(streams.front().size());
  for (const auto& stream : streams)
    if (static_cast<int64_t>(stream.size()) != length || length <= prompt_length)
      throw runtime::InvalidRequestError("every stream must have the same length, longer than the prompt of " + std::to_string(prompt_length));
  if (prompt_length >= model.shape.context_length)
    throw runtime::ConfigError("the prompt of " + std::to_string(prompt_length) + " tokens must be shorter than the context");
  const auto vocab = static_cast<size_t>(model.shape.vocab);
  const int64_t windows = (length + window - 1) / window;
  std::vector<StreamWindow> results;
  for (size_t r = 0; r < rows.size(); ++r) {
    // Per window and stream: NLL summed and tokens scored.
    std::vector<std::vector<double>> nll(static_cast<size_t>(windows), std::vector<double>(streams.size(), 0.0));
    std::vector<std::vector<int64_t>> tokens(static_cast<size_t>(windows), std::vector<int64_t>(streams.size(), 0));
    for (size_t first = 0; first < streams.size(); first += static_cast<size_t>(slots)) {
      const auto size = std::min(static_cast<size_t>(slots), streams.size() - first);
      const auto group = std::span<const std::vector<int32_t>>(streams).subspan(first, size);
      const auto count = static_cast<int64_t>(group.size());
      runtime::SlotKvCache cache(model.shape, rows[r].cache.resolved(model.shape.context_length), count);
      runtime::GraphRunner runner(model, pool, cache);
      std::vector<float> logits(static_cast<size_t>(count) * vocab), batch_logits(logits.size());
      const bool per_story = rows[r].policy == "story";
      auto score = [&](int64_t position) {  // the logits predict stream[position] in every slot
        const auto w = static_cast<size_t>(position / window);
        for (int64_t s = 0; s < count; ++s) {
          const std::span<const float> row(logits.data() + static_cast<size_t>(s) * vocab, vocab);
          nll[w][first + static_cast<size_t>(s)] -= runtime::token_logprob(row, group[static_cast<size_t>(s)][static_cast<size_t>(position)]);
          ++tokens[w][first + static_cast<size_t>(s)];
        }
      };
      for (int64_t s = 0; s < count; ++s)
        runner.prefill(std::span<const int32_t>(group[static_cast<size_t>(s)]).first(static_cast<size_t>(prompt_length)), s,
                       logits.data() + static_cast<size_t>(s) * vocab);
      score(prompt_length);
      // A sequence ends where it may not grow: the context, unless the cache streams past it.
      const int64_t last = cache.streams_past_context() || per_story ? length : std::min(length, model.shape.context_length);
      std::vector<runtime::DecodeInput> batch;
      for (int64_t position = prompt_length + 1; position < last; ++position) {
        batch.clear();
        for (int64_t s = 0; s < count; ++s) {
          const int32_t input = group[static_cast<size_t>(s)][static_cast<size_t>(position - 1)];
          if (per_story && input == model.tokenizer.bos_id()) {
            cache.reset(s);
            runner.prefill(std::span<const int32_t>(&input, 1), s, logits.data() + static_cast<size_t>(s) * vocab);
          } else {
            batch.push_back({input, s});
          }
        }
        if (!batch.empty()) runner.decode(batch, batch_logits.data());
        for (size_t i = 0; i < batch.size(); ++i)
          std::copy_n(batch_logits.data() + i * vocab, vocab, logits.data() + static_cast<size_t>(batch[i].slot) * vocab);
        score(position);
      }
    }
    for (int64_t w = 0; w < windows; ++w) {
      const auto& window_nll = nll[static_cast<size_t>(w)];
      const auto& window_tokens = tokens[static_cast<size_t>(w)];
      StreamWindow result{rows[r], w * window, std::min(length, (w + 1) * window), 0, 0.0, {}};
      double sum = 0;
      for (size_t s = 0; s < streams.size(); ++s) {
        result.tokens += window_tokens[s];
        sum += window_nll[s];
        result.stream_nll.push_back(window_tokens[s] > 0 ? window_nll[s] / static_cast<double>(window_tokens[s]) : 0.0);
      }
      if (result.tokens == 0) continue;
      result.nll = sum / static_cast<double>(result.tokens);
      results.push_back(std::move(result));
    }
    if (progress) progress(static_cast<int64_t>(r) + 1, static_cast<int64_t>(rows.size()));
  }
  return results;
}

}  // namespace snapstream::eval
