// Documents for evaluation, all of one length so every policy sees the same positions.
#include "eval/eval_texts.h"

#include "eval/jsonl_file.h"
#include "runtime/errors.h"
#include "runtime/generator.h"

namespace snapstream::eval {

std::vector<std::string> read_text_lines(const std::string& path) {
  std::vector<std::string> texts;
  read_jsonl(path, "texts", [&](const nlohmann::json& line) {
    if (!line.contains("text") || !line.at("text").is_string()) throw runtime::InvalidRequestError("'text' must be a string");
    texts.push_back(line.at("text").get<std::string>());
  });
  return texts;
}

std::vector<std::string> sample_story_texts(const runtime::Model& model, kernels::ThreadPool& pool, int64_t count, int64_t length,
                                            uint64_t seed) {
  std::vector<std::string> texts;
  for (const auto& ids : generate_eval_texts(model, pool, count, length, seed).documents)
    texts.push_back(model.tokenizer.decode(std::span<const int32_t>(ids).subspan(1)));
  return texts;
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
  runtime::GenerationOptions options;
  options.max_tokens = length - 1;
  options.cache.full_cache = true;
  options.sampling.temperature = 1.0f;
  const std::vector<int32_t> start = {model.tokenizer.bos_id()};
  for (int64_t attempt = 0; static_cast<int64_t>(texts.documents.size()) < count; ++attempt) {
    if (attempt >= kAttemptsPerDocument * count)
      throw runtime::InvalidRequestError("only " + std::to_string(texts.documents.size()) + " of " + std::to_string(attempt) +
                                " sampled stories reached " + std::to_string(length) + " tokens; ask for shorter documents");
    options.sampling.seed = seed + static_cast<uint64_t>(attempt);
    const runtime::GenerationResult result = runtime::generate(model, pool, start, options);
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
