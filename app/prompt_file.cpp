// JSONL prompt parsing with a line number on every error.
#include "app/prompt_file.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "eval/jsonl_file.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

template <typename T>
T field(const nlohmann::json& line, const char* key, T fallback) {
  if (!line.contains(key) || line.at(key).is_null()) return fallback;
  const auto& value = line.at(key);
  if constexpr (std::is_floating_point_v<T>) {
    if (!value.is_number()) throw runtime::InvalidRequestError(std::string("'") + key + "' must be a number");
  } else {
    if (!value.is_number_integer()) throw runtime::InvalidRequestError(std::string("'") + key + "' must be an integer");
  }
  return value.get<T>();
}

// A misspelt key would otherwise leave its default in silence ("max_token": 10 running to 256).
void check_keys(const nlohmann::json& line) {
  static constexpr std::string_view kKeys[] = {"prompt", "max_tokens", "temperature", "top_k", "top_p", "min_p",
                                               "repetition_penalty", "frequency_penalty", "presence_penalty", "seed",
                                               "ignore_eos"};
  for (const auto& [key, value] : line.items())
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      std::string known;
      for (const auto name : kKeys) known += (known.empty() ? "" : ", ") + std::string(name);
      throw runtime::InvalidRequestError("unknown key '" + key + "'; a line takes " + known);
    }
}

}  // namespace

std::vector<PromptLine> read_prompt_file(const std::string& path) {
  std::vector<PromptLine> prompts;
  eval::read_jsonl(path, "prompts", [&](const nlohmann::json& line) {
    check_keys(line);
    if (!line.contains("prompt") || !line.at("prompt").is_string()) throw runtime::InvalidRequestError("'prompt' must be a string");
    PromptLine prompt;
    prompt.prompt = line.at("prompt").get<std::string>();
    prompt.max_tokens = field<int64_t>(line, "max_tokens", 256);
    if (prompt.max_tokens < 0) throw runtime::InvalidRequestError("'max_tokens' must be >= 0");
    prompt.sampling.temperature = field<float>(line, "temperature", 0.0f);
    prompt.sampling.top_k = field<int64_t>(line, "top_k", 0);
    prompt.sampling.top_p = field<float>(line, "top_p", 1.0f);
    prompt.sampling.min_p = field<float>(line, "min_p", 0.0f);
    prompt.sampling.repetition_penalty = field<float>(line, "repetition_penalty", 1.0f);
    prompt.sampling.frequency_penalty = field<float>(line, "frequency_penalty", 0.0f);
    prompt.sampling.presence_penalty = field<float>(line, "presence_penalty", 0.0f);
    prompt.sampling.seed = field<uint64_t>(line, "seed", 0);
    prompt.sampling.validate();
    if (line.contains("ignore_eos") && !line.at("ignore_eos").is_null()) {
      if (!line.at("ignore_eos").is_boolean()) throw runtime::InvalidRequestError("'ignore_eos' must be true or false");
      prompt.ignore_eos = line.at("ignore_eos").get<bool>();
    }
    prompts.push_back(std::move(prompt));
  });
  return prompts;
}

}  // namespace snapstream::app
