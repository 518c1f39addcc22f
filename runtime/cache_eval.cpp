// Teacher forcing and greedy generation over a batch of slots, step by step.
#include "runtime/cache_eval.h"

#include <algorithm>
#include <cmath>

#include "runtime/errors.h"

namespace snapstream {
namespace {

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

}  // namespace

double token_logprob(std::span<const float> logits, int32_t token) {
  const float top = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (const float l : logits) sum += std::exp(static_cast<double>(l) - top);
  return static_cast<double>(logits[static_cast<size_t>(token)]) - top - std::log(sum);
}

CacheEvaluator::CacheEvaluator(const Model& model, kernels::ThreadPool& pool, const SnapStreamConfig& cache, int64_t slots)
    : model_(model),
      cache_(model.config, cache.resolved(model.config.context_length), slots),
      runner_(model, pool, cache_, GraphPlan{}) {}

std::vector<DocumentRun> CacheEvaluator::run(std::span<const EvalDocument> documents, int64_t greedy_tokens) {
  const auto vocab = static_cast<size_t>(model_.config.vocab_size);
  const auto count = static_cast<int64_t>(documents.size());
  if (count > slots()) throw InvalidRequestError("more documents than evaluation slots");
  int64_t steps = 0;
  for (const EvalDocument& d : documents) {
    const auto length = static_cast<int64_t>(d.prompt.size() + d.continuation.size());
    if (d.prompt.empty() || d.continuation.empty()) throw InvalidRequestError("a document needs a prompt and a continuation");
    if (std::max<int64_t>(length, static_cast<int64_t>(d.prompt.size()) + greedy_tokens) > model_.config.context_length)
      throw InvalidRequestError("a document of " + std::to_string(length) + " tokens does not fit the context of " +
                                std::to_string(model_.config.context_length));
    steps = std::max(steps, static_cast<int64_t>(d.continuation.size()));
  }
  std::vector<DocumentRun> runs(documents.size());
  logits_.resize(static_cast<size_t>(count) * vocab);
  auto prefill_all = [&] {
    for (int64_t i = 0; i < count; ++i) {
      cache_.reset(i);
      runner_.prefill(documents[static_cast<size_t>(i)].prompt, i, logits_.data() + static_cast<size_t>(i) * vocab);
    }
  };
  auto row = [&](size_t i) { return std::span<const float>(logits_.data() + i * vocab, vocab); };

  // Teacher forcing: each step feeds the true previous token to every document still running.
  prefill_all();
  std::vector<DecodeInput> batch;
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
      std::vector<float> step(batch.size() * vocab);
      runner_.decode(batch, step.data());
      for (size_t r = 0; r < rows.size(); ++r) std::copy_n(step.data() + r * vocab, vocab, logits_.data() + rows[r] * vocab);
    }
    for (size_t i = 0; i < documents.size(); ++i) {
      if (j >= static_cast<int64_t>(documents[i].continuation.size())) continue;
      runs[i].logprobs.push_back(token_logprob(row(i), documents[i].continuation[static_cast<size_t>(j)]));
      runs[i].argmax.push_back(argmax(row(i)));
    }
  }

  // Free-running greedy generation from the same prompts.
  if (greedy_tokens > 0) {
    prefill_all();
    for (int64_t g = 0; g < greedy_tokens; ++g) {
      if (g > 0) {
        batch.clear();
        for (size_t i = 0; i < documents.size(); ++i) batch.push_back({runs[i].greedy.back(), static_cast<int64_t>(i)});
        runner_.decode(batch, logits_.data());
      }
      for (size_t i = 0; i < documents.size(); ++i) runs[i].greedy.push_back(argmax(row(i)));
    }
  }
  return runs;
}

}  // namespace snapstream
