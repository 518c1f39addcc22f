// The reference stories of stories260K.golden.json as one token sequence: real text for tests
// that need long prompts.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/model.h"

namespace snapstream::test {

// Every case's text, one per line, tokenized with BOS.
inline std::vector<int32_t> golden_story_ids(const runtime::Model& model, const std::filesystem::path& models) {
  std::ifstream in(models / "stories260K.golden.json");
  const auto golden = nlohmann::json::parse(in);
  std::string text;
  for (const auto& c : golden.at("cases")) text += c.at("text").get<std::string>() + "\n";
  return model.tokenizer.encode(text, true);
}

}  // namespace snapstream::test
