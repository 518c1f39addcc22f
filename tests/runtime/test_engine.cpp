// Continuous batching is invisible: requests run through a few shared slots produce exactly
// the tokens each produces alone, slots are reused without leaking one request's cache into
// the next, and cancellation, queue limits and bad requests behave.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "runtime/engine.h"
#include "runtime/generator.h"
#include "runtime/synthetic_model.h"
#include "tests/support/stories_model.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {
// 24 prompts of mixed lengths (1 to ~300 tokens) cut from the golden stories.
std::vector<RequestSpec> mixed_requests(const Model& model, const std::filesystem::path& models) {
  const auto ids = test::golden_story_ids(model, models);
  std::vector<RequestSpec> specs;
  for (int i = 0; i < 24; ++i) {
    RequestSpec spec;
    const size_t length = 1 + static_cast<size_t>((i * 37) % 300);
    spec.prompt_ids.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(length));
    spec.max_tokens = 10 + (i * 53) % 150;
    specs.push_back(spec);
  }
  return specs;
}
}  // namespace

TEST_CASE("24 requests through 8 slots give each request's solo tokens", "[engine]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto model = load_model((*models / "stories260K.gguf").string());
  kernels::ThreadPool pool(2);
  const bool full_cache = GENERATE(true, false);
  // Prefill buckets of at most 128 tokens: prompts past 128 prefill in chunks across steps,
  // interleaved with the decoding of the others.
  const bool chunked = GENERATE(false, true);
  INFO((full_cache ? "full cache" : "SnapStream C = 128") << (chunked ? ", chunked prefill" : ""));
  SnapStreamConfig cache;
  cache.full_cache = full_cache;
  cache.capacity = 128;
  GraphPlan graphs;
  if (chunked) graphs.prefill_lengths = {64, 128};
  const auto specs = mixed_requests(*model, *models);

  std::vector<GenerationResult> solo;
  for (const auto& spec : specs) {
    GenerationOptions options;
    options.max_tokens = spec.max_tokens;
    options.cache = cache;
    options.graphs = graphs;
    solo.push_back(generate(*model, pool, spec.prompt_ids, options));
  }

  EngineOptions options;
  options.slots = 8;
  options.cache = cache;
  options.graphs = graphs;
  options.prefill_token_budget = 160;
  Engine engine(*model, pool, options);
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const auto& spec : specs) streams.push_back(engine.submit(spec));
  for (size_t i = 0; i < specs.size(); ++i) {
    INFO("request " << i << ", prompt " << specs[i].prompt_ids.size() << " tokens");
    CHECK(streams[i]->collect() == solo[i].ids);
    CHECK(finish_reason_name(streams[i]->finish_reason()) == solo[i].finish_reason);
  }
  const EngineStats stats = engine.stats();
  CHECK(stats.running == 0);
  CHECK(stats.waiting == 0);
  CHECK(stats.free_slots == 8);
}

TEST_CASE("16 seeded sampling requests through 16 slots give each request's solo tokens", "[engine]") {
  // A vocabulary large enough that a step's sampling is shared between the pool's threads
  // (16 rows of 16384 logits), so each sequence's sampler runs on whichever thread takes it.
  graph::ModelShape shape = test::tiny_model_shape();
  shape.vocab = 16384;
  shape.finalise();
  test::TempDir dir;
  write_synthetic_model({shape, kernels::DType::F32, 3}, (dir / "wide.gguf").string());
  const auto model = load_model((dir / "wide.gguf").string());
  kernels::ThreadPool pool(2);
  std::vector<RequestSpec> specs;
  for (int i = 0; i < 16; ++i) {
    RequestSpec spec;
    spec.prompt_ids = {1, static_cast<int32_t>(300 + i * 7), static_cast<int32_t>(5000 + i * 311)};
    spec.max_tokens = 24;
    spec.sampling.temperature = 1.5f;  // nearly uniform over the random model's logits
    spec.sampling.top_p = 0.9f;
    spec.sampling.seed = static_cast<uint64_t>(100 + i);
    specs.push_back(spec);
  }
  std::vector<GenerationResult> solo;
  for (const auto& spec : specs) {
    GenerationOptions options;
    options.max_tokens = spec.max_tokens;
    options.sampling = spec.sampling;
    solo.push_back(generate(*model, pool, spec.prompt_ids, options));
  }
  EngineOptions options;
  options.slots = 16;
  Engine engine(*model, pool, options);
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const auto& spec : specs) streams.push_back(engine.submit(spec));
  for (size_t i = 0; i < specs.size(); ++i) {
    INFO("request " << i);
    CHECK(streams[i]->collect() == solo[i].ids);
  }
}

TEST_CASE("a cancelled request frees its slot and the next request starts clean", "[engine]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  SnapStreamConfig cache;
  RequestSpec spec;
  spec.prompt_ids = model->tokenizer.encode("Once upon a time", true);
  spec.max_tokens = 400;
  GenerationOptions options;
  options.max_tokens = spec.max_tokens;
  options.cache = cache;
  const auto alone = generate(*model, pool, spec.prompt_ids, options).ids;  // before the engine shares the pool

  EngineOptions engine_options;
  engine_options.slots = 1;
  engine_options.max_waiting = 4;
  engine_options.cache = cache;
  Engine engine(*model, pool, engine_options);
  const auto first = engine.submit(spec);
  const auto queued = engine.submit(spec);  // waits: the only slot is busy
  REQUIRE(first->next().has_value());
  first->cancel();
  while (first->next()) {
  }
  CHECK(first->finish_reason() == FinishReason::Cancelled);
  // The slot's next user gets exactly what it would get alone.
  CHECK(queued->collect() == alone);

  queued->cancel();  // cancelling a finished request changes nothing
  CHECK(queued->finish_reason() != FinishReason::Cancelled);
}

TEST_CASE("ignore_eos generates through the end-of-text token up to max_tokens", "[engine]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  GenerationOptions options;
  options.max_tokens = 400;
  RequestSpec spec;
  spec.prompt_ids = model->tokenizer.encode("Once upon a time", true);
  const auto alone = generate(*model, pool, spec.prompt_ids, options);
  // The greedy story ends itself well before the limit; the rest of the test needs that.
  REQUIRE(alone.finish_reason == "stop");
  const auto ended_at = static_cast<int64_t>(alone.ids.size());

  Engine engine(*model, pool, EngineOptions{});
  spec.max_tokens = ended_at + 20;
  const auto plain = engine.submit(spec);
  CHECK(plain->collect() == alone.ids);
  CHECK(plain->finish_reason() == FinishReason::Stop);

  spec.ignore_eos = true;
  const auto through = engine.submit(spec);
  const auto ids = through->collect();
  CHECK(through->finish_reason() == FinishReason::Length);
  REQUIRE(static_cast<int64_t>(ids.size()) == spec.max_tokens);
  CHECK(std::equal(alone.ids.begin(), alone.ids.end(), ids.begin()));
  CHECK(model->tokenizer.ends_generation(ids[static_cast<size_t>(ended_at)]));
}

TEST_CASE("the engine rejects bad requests and a full queue", "[engine]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(1);
  EngineOptions options;
  options.slots = 1;
  options.max_waiting = 1;
  Engine engine(*model, pool, options);
  RequestSpec empty;
  CHECK_THROWS_AS(engine.submit(empty), InvalidRequestError);
  RequestSpec unknown;
  unknown.prompt_ids = {1, 100000};
  CHECK_THROWS_AS(engine.submit(unknown), InvalidRequestError);
  RequestSpec too_long;
  too_long.prompt_ids.assign(static_cast<size_t>(model->shape.context_length), 300);
  CHECK_THROWS_AS(engine.submit(too_long), InvalidRequestError);
  RequestSpec bad_sampling;
  bad_sampling.prompt_ids = {1};
  bad_sampling.sampling.top_p = 2.0f;
  CHECK_THROWS_AS(engine.submit(bad_sampling), InvalidRequestError);

  RequestSpec ok;
  ok.prompt_ids = {1};
  ok.max_tokens = 300;
  std::vector<std::shared_ptr<RequestStream>> accepted;
  bool refused = false;
  for (int i = 0; i < 10 && !refused; ++i) {
    try {
      accepted.push_back(engine.submit(ok));
    } catch (const QueueFullError&) {
      refused = true;
    }
  }
  CHECK(refused);
  for (auto& stream : accepted) {
    stream->collect();
    CHECK(stream->finish_reason() != FinishReason::Error);
  }
  RequestSpec zero;
  zero.prompt_ids = {1};
  zero.max_tokens = 0;
  const auto none = engine.submit(zero);
  CHECK(none->collect().empty());
  CHECK(none->finish_reason() == FinishReason::Length);
}

TEST_CASE("a request cancelled while its prompt prefills in chunks frees the prompt history", "[engine][chunked]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto model = load_model((*models / "stories260K.gguf").string());
  kernels::ThreadPool pool(2);
  auto specs = mixed_requests(*model, *models);
  RequestSpec long_prompt = specs[8];  // 297 tokens: three chunks of the 128 bucket
  REQUIRE(long_prompt.prompt_ids.size() > 256);
  GenerationOptions solo_options;
  solo_options.max_tokens = long_prompt.max_tokens;
  solo_options.graphs.prefill_lengths = {128};
  const auto alone = generate(*model, pool, long_prompt.prompt_ids, solo_options).ids;

  EngineOptions options;
  options.slots = 2;
  options.graphs.prefill_lengths = {128};
  Engine engine(*model, pool, options);
  for (int i = 0; i < 5; ++i) {
    // Cancelled once it holds a slot: usually between two of its chunks. A thread held off the
    // CPU may see it only after it ran to its end, its slot free again and its tokens unread
    // (finished() false until they are), so admission is what is waited for.
    const auto cancelled = engine.submit(long_prompt);
    while (!cancelled->admitted_at() && !cancelled->finished()) std::this_thread::yield();
    cancelled->cancel();
    cancelled->collect();
    CHECK(cancelled->finish_reason() != FinishReason::Error);
  }
  const auto next = engine.submit(long_prompt);
  CHECK(next->collect() == alone);
  CHECK(next->finish_reason() != FinishReason::Error);
  CHECK(engine.stats().free_slots == 2);
}
