// Teacher forcing and greedy generation over a batch of sequence slots, step by step.
#include "eval/cache_eval.h"

#include <algorithm>
#include <cmath>

#include "kernels/argmax.h"
#include "kernels/kv_entries.h"
#include "runtime/errors.h"
#include "runtime/token_logprobs.h"

namespace snapstream::eval {
namespace {

// Softmax over one query head's live cache entries and the token itself, added (scaled by `share`)
// into probabilities by position.
void add_head_probabilities(const float* q, const float* self_key, const runtime::LayerCacheView& view, int64_t capacity, int64_t extent,
                            int64_t head_dim, int64_t self_position, double share, float* by_position) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  auto dot = [&](const float* k) {
    double sum = 0;
    for (int64_t d = 0; d < head_dim; ++d) sum += static_cast<double>(q[d]) * k[d];
    return sum * scale;
  };
  std::vector<double> scores;
  std::vector<int64_t> where;
  std::vector<float> key(static_cast<size_t>(head_dim));
  for (int64_t entry = 0; entry < extent && entry < capacity; ++entry)
    if (view.live[entry]) {
      kernels::load_row(view.keys.row(entry, head_dim), view.keys.dtype, head_dim, key.data());
      scores.push_back(dot(key.data()));
      where.push_back(view.positions[entry]);
    }
  scores.push_back(dot(self_key));
  where.push_back(self_position);
  const double top = *std::max_element(scores.begin(), scores.end());
  double total = 0;
  for (double& x : scores) total += (x = std::exp(x - top));
  for (size_t i = 0; i < scores.size(); ++i) by_position[where[i]] += static_cast<float>(share * scores[i] / total);
}

}  // namespace

CacheEvaluator::CacheEvaluator(const runtime::Model& model, kernels::ThreadPool& pool, const runtime::SnapStreamConfig& cache, int64_t slots)
    : model_(model),
      cache_(model.shape, cache.resolved(model.shape.context_length), slots),
      runner_(model, pool, cache_, runtime::GraphPlan{}) {}

std::vector<DocumentRun> CacheEvaluator::run(std::span<const EvalDocument> documents, int64_t greedy_tokens,
                                             std::span<const DocumentRun> reference) {
  const auto vocab = static_cast<size_t>(model_.shape.vocab);
  const auto count = static_cast<int64_t>(documents.size());
  if (count > slots()) throw runtime::ContractError("more documents than evaluation slots");
  int64_t steps = 0;
  for (const EvalDocument& d : documents) {
    const auto length = static_cast<int64_t>(d.prompt.size() + d.continuation.size());
    if (d.prompt.empty() || d.continuation.empty()) throw runtime::InvalidRequestError("a document needs a prompt and a continuation");
    if (length > model_.shape.context_length)
      throw runtime::InvalidRequestError("a document of " + std::to_string(length) + " tokens does not fit the context of " +
                                std::to_string(model_.shape.context_length));
    steps = std::max(steps, static_cast<int64_t>(d.continuation.size()));
  }
  if (!reference.empty() && reference.size() != documents.size()) throw runtime::ContractError("one reference run per document");
  const graph::ModelShape& c = model_.shape;
  const int64_t groups = c.kv_heads, stride = c.context_length;
  const auto step_size = static_cast<size_t>(c.layers * groups * stride);
  std::vector<DocumentRun> runs(documents.size());
  for (auto& r : runs)
    if (capture_) r.attention.assign(static_cast<size_t>(steps) * step_size, 0.0f);
  logits_.resize(static_cast<size_t>(count) * vocab);
  int64_t step = 0;  // the teacher-forced step the observer records
  // The observer refers to this call's locals: it must not outlive the call, even on a throw.
  struct ObserverReset {
    runtime::GraphRunner& runner;
    ~ObserverReset() { runner.set_attention_observer({}); }
  } reset{runner_};
  if (capture_)
    runner_.set_attention_observer([&](int64_t layer, int64_t kv_begin, const kernels::AttentionShape& shard,
                                       std::span<const int64_t> slots, const float* q, const float* k) {
      const int64_t group_size = c.heads / c.kv_heads;
      for (size_t r = 0; r < slots.size(); ++r) {
        const int64_t slot = slots[r];
        const runtime::LayerCacheView view = cache_.layer_view(slot, layer);
        const int64_t self = cache_.state(slot).length;
        for (int64_t g = 0; g < shard.kv_heads; ++g) {
          const int64_t group = kv_begin + g;
          const runtime::LayerCacheView head_view = view.from_head(group, cache_.capacity(), shard.head_dim);
          float* out = runs[static_cast<size_t>(slot)].attention.data() + static_cast<size_t>(step) * step_size +
                       static_cast<size_t>((layer * groups + group) * stride);
          for (int64_t h = 0; h < group_size; ++h)
            add_head_probabilities(q + (r * shard.heads + g * group_size + h) * shard.head_dim,
                                   k + (r * shard.kv_heads + g) * shard.head_dim, head_view, cache_.capacity(),
                                   cache_.extent(slot), shard.head_dim, self, 1.0 / static_cast<double>(group_size), out);
        }
      }
    });
  std::vector<double> recall(documents.size(), 0.0);
  std::vector<int64_t> recalled(documents.size(), 0);
  // The reference's attention mass on what this cache holds for document i, before step j.
  auto measure_recall = [&](size_t i, int64_t j) {
    const float* probabilities = reference[i].attention.data() + static_cast<size_t>(j) * step_size;
    const int64_t self = cache_.state(static_cast<int64_t>(i)).length;
    for (int64_t layer = 0; layer < c.layers; ++layer) {
      const runtime::LayerCacheView view = cache_.layer_view(static_cast<int64_t>(i), layer);
      for (int64_t group = 0; group < groups; ++group) {
        const float* p = probabilities + (layer * groups + group) * stride;
        double kept = p[self];
        for (int64_t entry = 0; entry < cache_.capacity(); ++entry)
          if (view.live[group * cache_.capacity() + entry]) kept += p[view.positions[group * cache_.capacity() + entry]];
        recall[i] += kept;
        ++recalled[i];
      }
    }
  };
  auto prefill_all = [&] {
    for (int64_t i = 0; i < count; ++i) {
      cache_.reset(i);
      runner_.prefill(documents[static_cast<size_t>(i)].prompt, i, logits_.data() + static_cast<size_t>(i) * vocab);
    }
  };
  // Decodes one step of the documents still running and puts each one's logits back in its row.
  auto decode_rows = [&](const std::vector<runtime::DecodeInput>& batch, const std::vector<size_t>& rows) {
    std::vector<float> step_logits(batch.size() * vocab);
    runner_.decode(batch, step_logits.data());
    for (size_t r = 0; r < rows.size(); ++r) std::copy_n(step_logits.data() + r * vocab, vocab, logits_.data() + rows[r] * vocab);
  };
  auto row = [&](size_t i) { return std::span<const float>(logits_.data() + i * vocab, vocab); };
  auto top_token = [&](size_t i) { return static_cast<int32_t>(kernels::argmax(logits_.data() + i * vocab, static_cast<int64_t>(vocab))); };

  // Whether each layer's and group's cache holds all of a document's needed tokens.
  auto measure_values_held = [&](size_t i) {
    const auto& needed = documents[i].needed;
    if (needed.empty()) return;
    std::vector<char> held(static_cast<size_t>(c.context_length));
    for (int64_t layer = 0; layer < c.layers; ++layer) {
      const runtime::LayerCacheView view = cache_.layer_view(static_cast<int64_t>(i), layer);
      for (int64_t group = 0; group < groups; ++group) {
        std::fill(held.begin(), held.end(), 0);
        for (int64_t entry = 0; entry < cache_.capacity(); ++entry) {
          const int64_t at = group * cache_.capacity() + entry;
          if (view.live[at] && view.positions[at] >= 0 && view.positions[at] < c.context_length) held[static_cast<size_t>(view.positions[at])] = 1;
        }
        bool all = true;
        for (const TokenSpan& span : needed)
          for (int64_t p = span.begin; p < span.end; ++p) all = all && p >= 0 && p < c.context_length && held[static_cast<size_t>(p)];
        runs[i].values_held.push_back(all);
      }
    }
  };

  // Teacher forcing: each step feeds the true previous token to every document still running.
  prefill_all();
  for (size_t i = 0; i < documents.size(); ++i) measure_values_held(i);
  std::vector<runtime::DecodeInput> batch;
  std::vector<size_t> rows;
  for (int64_t j = 0; j < steps; ++j) {
    if (j > 0) {
      batch.clear();
      rows.clear();
      for (size_t i = 0; i < documents.size(); ++i)
        if (j < static_cast<int64_t>(documents[i].continuation.size())) {
          batch.push_back({documents[i].continuation[static_cast<size_t>(j - 1)], static_cast<int64_t>(i)});
          rows.push_back(i);
        }
      if (!reference.empty())
        for (const size_t i : rows) measure_recall(i, j);
      step = j;
      decode_rows(batch, rows);
    }
    for (size_t i = 0; i < documents.size(); ++i) {
      if (j >= static_cast<int64_t>(documents[i].continuation.size())) continue;
      runs[i].logprobs.push_back(runtime::token_logprob(row(i), documents[i].continuation[static_cast<size_t>(j)]));
      runs[i].argmax.push_back(top_token(i));
    }
  }

  runner_.set_attention_observer({});
  for (size_t i = 0; i < runs.size(); ++i)
    if (recalled[i] > 0) runs[i].attention_recall = recall[i] / static_cast<double>(recalled[i]);

  // Free-running greedy generation from the same prompts, each document as far as its own
  // prompt leaves room for in the context.
  if (greedy_tokens > 0) {
    prefill_all();
    auto generates = [&](size_t i, int64_t g) {
      return g < std::min(greedy_tokens, c.context_length - static_cast<int64_t>(documents[i].prompt.size()));
    };
    for (int64_t g = 0; g < greedy_tokens; ++g) {
      if (g > 0) {
        batch.clear();
        rows.clear();
        for (size_t i = 0; i < documents.size(); ++i)
          if (generates(i, g)) {
            batch.push_back({runs[i].greedy.back(), static_cast<int64_t>(i)});
            rows.push_back(i);
          }
        if (batch.empty()) break;
        decode_rows(batch, rows);
      }
      for (size_t i = 0; i < documents.size(); ++i)
        if (generates(i, g)) runs[i].greedy.push_back(top_token(i));
    }
  }
  return runs;
}

}  // namespace snapstream::eval
