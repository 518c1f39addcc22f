// Tensor-parallel shards as MPI ranks: each rank runs only its shard's ops and joins the others
// over MPI, and the logits equal one process running every shard (bit for bit) and the unsplit
// model (within 1e-4 for f32 weights, bit for bit for quantised ones), through prefill (whole and
// in chunks), SnapKV compaction, batched decode and ring eviction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "distributed/mpi_collectives.h"
#include "runtime/errors.h"
#include "runtime/graph_runner.h"
#include "runtime/model.h"
#include "tests/support/code_prompt.h"
#include "tests/support/stories_model.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

int32_t argmax(const std::vector<float>& logits, size_t row, int64_t vocab) {
  const auto begin = logits.begin() + static_cast<std::ptrdiff_t>(row * static_cast<size_t>(vocab));
  return static_cast<int32_t>(std::max_element(begin, begin + vocab) - begin);
}

float max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// One runner and the cache it owns: of every shard, or holding only shard `held`. Prompts
// longer than the longest prefill bucket are prefilled in chunks.
struct Served {
  GraphPlan plan;
  SlotKvCache cache;
  GraphRunner runner;
  Served(const Model& model, kernels::ThreadPool& pool, const SnapStreamConfig& config, int32_t shards, int32_t held = -1,
         std::vector<int64_t> prefill_lengths = {64, 256})
      : plan{{1, 2, 4}, std::move(prefill_lengths), shards, true, held},
        cache(model.shape, config.resolved(model.shape.context_length), 3, held_kv_heads(model.shape, plan)),
        runner(model, pool, cache, plan) {}
};

}  // namespace

TEST_CASE("shards on separate ranks give the logits of one process running every shard", "[distributed]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  distributed::MpiCollectives mpi;
  const int32_t ranks = mpi.size();
  const auto model = load_model((*models / "stories260K.gguf").string());
  const std::vector<int32_t> ids = test::golden_story_ids(*model, *models);
  const int64_t vocab = model->shape.vocab;
  REQUIRE(model->shape.kv_heads % ranks == 0);
  REQUIRE(ids.size() > 200);

  // A capacity of 64: the two longer prompts are compacted by SnapKV, and decode overwrites
  // their rings.
  // An f32 cache: the gathered sums leave keys a last bit apart from the unsplit model's, which
  // an f16 cache could round to neighbouring values.
  SnapStreamConfig config;
  config.capacity = 64;
  config.kv_dtype = kernels::DType::F32;
  kernels::ThreadPool pool(1);
  Served whole(*model, pool, config, 1);      // the unsplit model
  Served every(*model, pool, config, ranks);  // every shard in this process, in turn
  Served mine(*model, pool, config, ranks, mpi.rank());  // this rank's shard, the others over MPI
  mine.runner.set_collectives(&mpi);
  // Each rank holds its share of the cache only.
  CHECK(mine.cache.bytes_per_slot() * ranks == every.cache.bytes_per_slot());

  const std::vector<int64_t> lengths = {30, 100, 180};
  std::vector<DecodeInput> batch;
  for (size_t slot = 0; slot < lengths.size(); ++slot) {
    const std::span<const int32_t> prompt(ids.data() + 7 * slot, static_cast<size_t>(lengths[slot]));
    std::vector<float> a(static_cast<size_t>(vocab)), b(a.size()), c(a.size());
    whole.runner.prefill(prompt, static_cast<int64_t>(slot), a.data());
    every.runner.prefill(prompt, static_cast<int64_t>(slot), b.data());
    mine.runner.prefill(prompt, static_cast<int64_t>(slot), c.data());
    INFO("rank " << mpi.rank() << " of " << ranks << ", prompt of " << lengths[slot]);
    CHECK(max_difference(c, b) == 0.0f);
    CHECK(max_difference(c, a) < 1e-4f);
    batch.push_back({argmax(c, 0, vocab), static_cast<int64_t>(slot)});
  }
  // 80 steps take every sequence past its capacity: the ring overwrites its oldest entries.
  int mismatched_steps = 0;
  float worst_against_whole = 0;
  for (int step = 0; step < 80; ++step) {
    std::vector<float> a(batch.size() * static_cast<size_t>(vocab)), b(a.size()), c(a.size());
    whole.runner.decode(batch, a.data());
    every.runner.decode(batch, b.data());
    mine.runner.decode(batch, c.data());
    if (max_difference(c, b) != 0.0f) ++mismatched_steps;
    worst_against_whole = std::max(worst_against_whole, max_difference(c, a));
    for (size_t row = 0; row < batch.size(); ++row) batch[row].token = argmax(c, row, vocab);
  }
  INFO("rank " << mpi.rank() << " of " << ranks << ": worst logit difference against the unsplit model " << worst_against_whole);
  CHECK(mismatched_steps == 0);
  CHECK(worst_against_whole < 1e-4f);
  CHECK(mine.runner.evicted_tokens() == every.runner.evicted_tokens());
  CHECK(mine.runner.evicted_tokens() > 0);
}

TEST_CASE("quantised parity models split over ranks decode as one process does", "[distributed]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  distributed::MpiCollectives mpi;
  // Q4_K_M (activations rounded over whole 256-blocks across the ranks), Qwen2 with its q/k/v
  // biases, and Q8_0.
  // Their 2 KV heads split over 2 ranks and are replicated over 4, where two ranks compact
  // each head alike from the whole query group; the prompt is longer than the 32-entry cache.
  for (const char* name : {"llama-spm-q4_k_m", "qwen2-gpt2-q4_k_m", "llama-starcoder-q8_0"})
    for (const std::vector<int64_t>& prefill : {std::vector<int64_t>{64, 256}, std::vector<int64_t>{32}}) {
      INFO(name << ", rank " << mpi.rank() << " of " << mpi.size() << ", longest prefill bucket " << prefill.back());
      const auto model = load_model((*models / "parity" / (std::string(name) + ".gguf")).string());
      kernels::ThreadPool pool(1);
      SnapStreamConfig config;
      config.capacity = 32;
      const std::vector<int32_t> prompt = model->tokenizer.encode(test::repeated_function_prompt(), true, true);
      REQUIRE(static_cast<int64_t>(prompt.size()) > config.capacity + config.window);
      Served whole(*model, pool, config, 1, -1, prefill);
      Served every(*model, pool, config, mpi.size(), -1, prefill);
      Served mine(*model, pool, config, mpi.size(), mpi.rank(), prefill);
      mine.runner.set_collectives(&mpi);
      CHECK(mine.cache.bytes_per_slot() * std::min<int64_t>(mpi.size(), model->shape.kv_heads) == whole.cache.bytes_per_slot());
      const int64_t vocab = model->shape.vocab;
      std::vector<float> a(static_cast<size_t>(vocab)), b(a.size()), c(a.size());
      whole.runner.prefill(prompt, 0, a.data());
      every.runner.prefill(prompt, 0, b.data());
      mine.runner.prefill(prompt, 0, c.data());
      CHECK(max_difference(c, b) == 0.0f);
      CHECK(max_difference(c, a) == 0.0f);
      std::vector<DecodeInput> batch = {{argmax(c, 0, vocab), 0}};
      // Weights that round their input split so that every dot product stays whole: the ranks
      // give the unsplit model's logits bit for bit, and so its greedy tokens.
      int mismatched_steps = 0, steps_unlike_whole = 0;
      for (int step = 0; step < 40; ++step) {
        whole.runner.decode(batch, a.data());
        every.runner.decode(batch, b.data());
        mine.runner.decode(batch, c.data());
        if (max_difference(c, b) != 0.0f) ++mismatched_steps;
        if (max_difference(c, a) != 0.0f) ++steps_unlike_whole;
        batch[0].token = argmax(c, 0, vocab);
      }
      CHECK(mismatched_steps == 0);
      CHECK(steps_unlike_whole == 0);
      CHECK(mine.runner.evicted_tokens() == whole.runner.evicted_tokens());
      CHECK(mine.runner.evicted_tokens() > 0);
    }
}

TEST_CASE("graphs split for another number of shards are refused before they run", "[distributed]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  distributed::MpiCollectives mpi;
  kernels::ThreadPool pool(1);
  SnapStreamConfig config;
  Served other(*model, pool, config, mpi.size() == 1 ? 2 : 1);
  CHECK_THROWS_AS(other.runner.set_collectives(&mpi), ConfigError);
}
