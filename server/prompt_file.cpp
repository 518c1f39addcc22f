// JSONL prompt parsing with a line number on every error.
#include "server/prompt_file.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/errors.h"

namespace snapstream::server {
namespace {

template <typename T>
T field(const nlohmann::json& line, const char* key, T fallback) {
  if (!line.contains(key) || line.at(key).is_null()) return fallback;
  const auto& value = line.at(key);
  if constexpr (std::is_floating_point_v<T>) {
    if (!value.is_number()) throw InvalidRequestError(std::string("'") + key + "' must be a number");
  } else {
    if (!value.is_number_integer()) throw InvalidRequestError(std::string("'") + key + "' must be an integer");
  }
  return value.get<T>();
}

}  // namespace

std::vector<PromptLine> read_prompt_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidRequestError(path + ": cannot open the prompts file");
  std::vector<PromptLine> prompts;
  std::string text;
  for (int64_t number = 1; std::getline(in, text); ++number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const auto line = nlohmann::json::parse(text);
      if (!line.is_object()) throw InvalidRequestError("each line must be a JSON object");
      if (!line.contains("prompt") || !line.at("prompt").is_string()) throw InvalidRequestError("'prompt' must be a string");
      PromptLine prompt;
      prompt.prompt = line.at("prompt").get<std::string>();
      prompt.max_tokens = field<int64_t>(line, "max_tokens", 256);
      if (prompt.max_tokens < 0) throw InvalidRequestError("'max_tokens' must be >= 0");
      prompt.sampling.temperature = field<float>(line, "temperature", 0.0f);
      prompt.sampling.top_k = field<int64_t>(line, "top_k", 0);
      prompt.sampling.top_p = field<float>(line, "top_p", 1.0f);
      prompt.sampling.seed = field<uint64_t>(line, "seed", 0);
      prompt.sampling.validate();
      prompts.push_back(std::move(prompt));
    } catch (const nlohmann::json::exception& e) {
      throw InvalidRequestError(path + ":" + std::to_string(number) + ": not valid JSON (" + e.what() + ")");
    } catch (const InvalidRequestError& e) {
      throw InvalidRequestError(path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  return prompts;
}

}  // namespace snapstream::server
