// Greedy generation reproduces the reference implementation's outputs on stories260K exactly,
// from the llama2.c checkpoint and from the GGUF file alike.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/errors.h"
#include "runtime/generator.h"
#include "runtime/model.h"
#include "tests/support/stories_model.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

TEST_CASE("greedy generation reproduces stories260K.golden.json", "[golden]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  std::ifstream in(*models / "stories260K.golden.json");
  const auto golden = nlohmann::json::parse(in);
  REQUIRE(golden.at("cases").size() >= 4);

  const std::string file = GENERATE("stories260K.bin", "stories260K.gguf");
  // The baseline full cache, and SnapStream with room for every position (so nothing is evicted).
  const bool full_cache = GENERATE(true, false);
  INFO((full_cache ? "full cache" : "SnapStream, C = 512"));
  const auto model = load_model((*models / file).string());
  kernels::ThreadPool pool(2);
  for (const auto& c : golden.at("cases")) {
    const auto prompt = c.at("prompt").get<std::string>();
    INFO(file << ", prompt '" << prompt << "'");
    const auto prompt_ids = model->tokenizer.encode(prompt, true);
    REQUIRE(prompt_ids == c.at("prompt_ids").get<std::vector<int32_t>>());

    GenerationOptions options;
    options.max_tokens = c.at("max_tokens").get<int64_t>();
    options.cache.full_cache = full_cache;
    options.cache.capacity = 512;
    const GenerationResult result = generate(*model, pool, prompt_ids, options);
    CHECK(result.ids == c.at("greedy_ids").get<std::vector<int32_t>>());
    CHECK(result.finish_reason == c.at("finish_reason").get<std::string>());
    std::vector<int32_t> all = prompt_ids;
    all.insert(all.end(), result.ids.begin(), result.ids.end());
    CHECK(model->tokenizer.decode(all) == c.at("text").get<std::string>());

    const auto expected_logits = c.at("first_logits").get<std::vector<float>>();
    REQUIRE(result.first_logits.size() == expected_logits.size());
    float worst = 0.0f;
    for (size_t i = 0; i < expected_logits.size(); ++i)
      worst = std::max(worst, std::fabs(result.first_logits[i] - expected_logits[i]));
    INFO("largest first-logit difference " << worst);
    CHECK(worst <= 1e-4f);
  }
}

TEST_CASE("generation respects the context length", "[generate]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  const int64_t context = model->shape.context_length;

  GenerationOptions options;
  options.max_tokens = 100000;
  const auto prompt = model->tokenizer.encode("Once upon a time", true);
  const auto result = generate(*model, pool, prompt, options);
  CHECK(static_cast<int64_t>(prompt.size() + result.ids.size()) <= context);

  std::vector<int32_t> too_long(static_cast<size_t>(context), 300);
  CHECK_THROWS_AS(generate(*model, pool, too_long, options), InvalidRequestError);
  CHECK_THROWS_AS(generate(*model, pool, std::vector<int32_t>{1, 9999}, options), InvalidRequestError);
  CHECK_THROWS_AS(generate(*model, pool, std::vector<int32_t>{}, options), InvalidRequestError);
}
