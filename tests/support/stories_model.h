// The real test model, stories260K, and its reference stories (stories260K.golden.json) as one
// token sequence: real weights and real text for tests that need them.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/model.h"
#include "tests/support/test_paths.h"

namespace snapstream::test {

// stories260K.gguf from the test models; null when they are missing, and the calling test is
// then skipped loudly (a failure when CI=true), as models_dir_or_skip() does.
inline std::unique_ptr<runtime::Model> stories_model_or_skip() {
  const auto models = models_dir_or_skip();
  return models ? runtime::load_model((*models / "stories260K.gguf").string()) : nullptr;
}

// Every case's text, one per line, tokenized with BOS.
inline std::vector<int32_t> golden_story_ids(const runtime::Model& model, const std::filesystem::path& models) {
  std::ifstream in(models / "stories260K.golden.json");
  const auto golden = nlohmann::json::parse(in);
  std::string text;
  for (const auto& c : golden.at("cases")) text += c.at("text").get<std::string>() + "\n";
  return model.tokenizer.encode(text, true);
}

}  // namespace snapstream::test
