// The evaluation harness's measurements: with room for every token all policies equal the full
// cache exactly, teacher-forced log-probabilities match a naive computation, and the values a
// cache kept are found where they are.
#include <catch2/catch.hpp>

#include "eval/cache_eval.h"
#include "runtime/generator.h"
#include "runtime/token_logprobs.h"
#include "tests/support/stories_model.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;
using namespace snapstream::eval;

namespace {

std::vector<int32_t> golden_text_ids(const Model& model, size_t length) {
  auto ids = test::golden_story_ids(model, *test::models_dir_or_skip());
  REQUIRE(ids.size() >= length);
  ids.resize(length);
  return ids;
}

SnapStreamConfig policy(const std::string& name, int64_t capacity) {
  SnapStreamConfig c;
  c.kv_dtype = kernels::DType::F32;  // the naive references attend to unrounded keys
  if (name == "full") {
    c.full_cache = true;
    return c;
  }
  c.capacity = capacity;
  if (name == "streaming") c.ring = capacity - c.sink;
  if (name == "random") c.selection = Selection::Random;
  return c;
}

}  // namespace

TEST_CASE("with room for every token, every policy equals the full cache exactly", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  const auto ids = golden_text_ids(*model, 160);
  const std::span<const int32_t> all(ids);
  const EvalDocument documents[] = {{all.first(100), all.subspan(100, 60), {}}, {all.first(90), all.subspan(90, 60), {}}};
  CacheEvaluator full(*model, pool, policy("full", 0), 2);
  full.capture_attention(true);
  const auto reference = full.run(documents, 64);
  const std::string name = GENERATE("snapstream", "streaming", "random");
  INFO(name);
  CacheEvaluator evaluator(*model, pool, policy(name, 164), 2);  // 100 + 64 greedy tokens fit
  const auto runs = evaluator.run(documents, 64, reference);
  for (size_t d = 0; d < 2; ++d) {
    CHECK(runs[d].logprobs == reference[d].logprobs);
    CHECK(runs[d].argmax == reference[d].argmax);
    CHECK(runs[d].greedy == reference[d].greedy);
    CHECK(runs[d].attention_recall == Approx(1.0).margin(1e-5));  // every position held
  }
}

TEST_CASE("each document generates as far as its own prompt leaves room in the context", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  const int64_t context = model->shape.context_length;
  const auto ids = golden_text_ids(*model, static_cast<size_t>(context));
  const std::span<const int32_t> all(ids);
  const auto near_end = static_cast<size_t>(context - 12), earlier = static_cast<size_t>(context - 112);
  // Room for 12 and for 112 tokens after the prompts; 40 asked for.
  const EvalDocument documents[] = {{all.first(near_end), all.subspan(near_end, 4), {}}, {all.first(earlier), all.subspan(earlier, 4), {}}};
  CacheEvaluator evaluator(*model, pool, policy("full", 0), 2);
  const auto runs = evaluator.run(documents, 40);
  CHECK(runs[0].greedy.size() == 12);
  CHECK(runs[1].greedy.size() == 40);
  // The document with room goes on alone once the other has stopped, and generates what it
  // generates by itself.
  CacheEvaluator alone(*model, pool, policy("full", 0), 1);
  CHECK(alone.run(std::span(documents).subspan(1), 40)[0].greedy == runs[1].greedy);
  CHECK(alone.run(std::span(documents).first(1), 40)[0].greedy == runs[0].greedy);
}

TEST_CASE("a smaller budget evicts, and the policies then differ from the full cache", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  const auto ids = golden_text_ids(*model, 300);
  const std::span<const int32_t> all(ids);
  const EvalDocument documents[] = {{all.first(200), all.subspan(200, 100), {}}};
  CacheEvaluator full(*model, pool, policy("full", 0), 1);
  full.capture_attention(true);
  const auto reference = full.run(documents, 16);
  // The captured attention of each step is a distribution per layer and group.
  const auto& c = model->shape;
  const size_t stride = static_cast<size_t>(c.context_length);
  for (size_t block = stride * static_cast<size_t>(c.layers * c.kv_heads); block < reference[0].attention.size(); block += stride * 7) {
    double sum = 0;
    for (size_t p = 0; p < stride; ++p) sum += reference[0].attention[block + p];
    CHECK(sum == Approx(1.0).margin(1e-4));
  }
  for (const char* name : {"snapstream", "streaming", "random"}) {
    INFO(name);
    CacheEvaluator evaluator(*model, pool, policy(name, 48), 1);
    const auto runs = evaluator.run(documents, 16, reference);
    CHECK(runs[0].logprobs != reference[0].logprobs);
    CHECK(runs[0].attention_recall > 0.3);
    CHECK(runs[0].attention_recall < 0.999);
  }
}

TEST_CASE("whether each layer's and KV group's cache holds the tokens an answer copies", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  const auto ids = golden_text_ids(*model, 210);
  const std::span<const int32_t> all(ids);
  // StreamingLLM with 48 entries keeps the 4 sinks and the last 44 prompt positions (156-199),
  // the same in every layer and group.
  const TokenSpan kept[] = {{0, 4}, {190, 200}};
  const TokenSpan partly_dropped[] = {{190, 200}, {150, 160}};
  const EvalDocument documents[] = {{all.first(200), all.subspan(200, 10), kept},
                                    {all.first(200), all.subspan(200, 10), partly_dropped},
                                    {all.first(200), all.subspan(200, 10), {}}};
  const auto caches = static_cast<size_t>(model->shape.layers * model->shape.kv_heads);
  CacheEvaluator streaming(*model, pool, policy("streaming", 48), 3);
  const auto runs = streaming.run(documents, 0);
  CHECK(runs[0].values_held == std::vector<char>(caches, 1));
  CHECK(runs[1].values_held == std::vector<char>(caches, 0));
  CHECK(runs[2].values_held.empty());  // nothing asked about
  CacheEvaluator full(*model, pool, policy("full", 0), 3);
  CHECK(full.run(documents, 0)[1].values_held == std::vector<char>(caches, 1));
}

// Naive: each continuation token's log-probability from a prefill of everything before it.
TEST_CASE("teacher-forced log-probabilities match a prefill of every prefix", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  const auto ids = golden_text_ids(*model, 60);
  const std::span<const int32_t> all(ids);
  const EvalDocument documents[] = {{all.first(40), all.subspan(40, 20), {}}};
  CacheEvaluator evaluator(*model, pool, policy("full", 0), 1);
  const auto runs = evaluator.run(documents, 0);
  REQUIRE(runs[0].logprobs.size() == 20);
  for (size_t j = 0; j < 20; ++j) {
    GenerationOptions options;
    options.max_tokens = 1;
    options.cache.full_cache = true;
    const auto result = generate(*model, pool, all.first(40 + j), options);
    const double naive = token_logprob(result.first_logits, ids[40 + j]);
    INFO("continuation token " << j);
    CHECK(runs[0].logprobs[j] == Approx(naive).margin(1e-4));
  }
}
