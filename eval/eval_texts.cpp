// Documents for evaluation, all of one length so every policy sees the same positions.
#include "eval/eval_texts.h"

#include <spdlog/spdlog.h>

#include "eval/cache_eval.h"
#include "eval/jsonl_file.h"
#include "runtime/errors.h"
#include "runtime/generator.h"

namespace snapstream::eval {

runtime::GenerationResult sample_story(const runtime::Model& model, kernels::ThreadPool& pool, int64_t max_tokens, uint64_t seed) {
  runtime::GenerationOptions options;
  options.max_tokens = max_tokens;
  options.cache = measuring_cache();
  options.cache.full_cache = true;
  options.sampling.temperature = 1.0f;
  options.sampling.seed = seed;
  const std::vector<int32_t> start = {model.tokenizer.bos_id()};
  return runtime::generate(model, pool, start, options);
}

HaystackTexts haystack_texts(const runtime::Model& sampler, const std::string& sampler_name, kernels::ThreadPool& pool,
                             const std::string& path, int64_t stories, uint64_t seed) {
  constexpr int64_t kStoryTokens = 128;  // several sentences each
  HaystackTexts haystack;
  if (!path.empty()) {
    read_jsonl(path, "texts", [&](const nlohmann::json& line) {
      if (!line.contains("text") || !line.at("text").is_string()) throw runtime::InvalidRequestError("'text' must be a string");
      haystack.texts.push_back(line.at("text").get<std::string>());
    });
    haystack.source = "texts from " + path;
    return haystack;
  }
  spdlog::info("sampling {} stories of {} tokens for the haystack (temperature 1, seed {})", stories, kStoryTokens, seed);
  for (const auto& ids : generate_eval_texts(sampler, pool, stories, kStoryTokens, seed).documents)
    haystack.texts.push_back(sampler.tokenizer.decode(std::span<const int32_t>(ids).subspan(1)));
  haystack.source = std::to_string(stories) + " stories sampled from " + sampler_name + " at temperature 1, seed " + std::to_string(seed);
  return haystack;
}

EvalTexts read_eval_texts(const std::string& path, const runtime::Tokenizer& tokenizer, int64_t length) {
  EvalTexts texts;
  read_jsonl(path, "texts", [&](const nlohmann::json& line) {
    if (!line.contains("text") || !line.at("text").is_string()) throw runtime::InvalidRequestError("'text' must be a string");
    auto ids = tokenizer.encode(line.at("text").get<std::string>(), true);
    if (static_cast<int64_t>(ids.size()) < length) {
      ++texts.dropped_short;
      return;
    }
    ids.resize(static_cast<size_t>(length));
    texts.documents.push_back(std::move(ids));
  });
  return texts;
}

EvalTexts generate_eval_texts(const runtime::Model& model, kernels::ThreadPool& pool, int64_t count, int64_t length, uint64_t seed) {
  constexpr int64_t kAttemptsPerDocument = 50;
  EvalTexts texts;
  const std::vector<int32_t> start = {model.tokenizer.bos_id()};
  for (int64_t attempt = 0; static_cast<int64_t>(texts.documents.size()) < count; ++attempt) {
    if (attempt >= kAttemptsPerDocument * count)
      throw runtime::InvalidRequestError("only " + std::to_string(texts.documents.size()) + " of " + std::to_string(attempt) +
                                " sampled stories reached " + std::to_string(length) + " tokens; ask for shorter documents");
    const runtime::GenerationResult result = sample_story(model, pool, length - 1, seed + static_cast<uint64_t>(attempt));
    if (static_cast<int64_t>(result.ids.size()) + 1 < length) {
      ++texts.dropped_short;
      continue;
    }
    std::vector<int32_t> ids = start;
    ids.insert(ids.end(), result.ids.begin(), result.ids.begin() + (length - 1));
    texts.documents.push_back(std::move(ids));
  }
  return texts;
}

}  // namespace snapstream::eval
