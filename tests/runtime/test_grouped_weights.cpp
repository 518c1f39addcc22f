// A runner reading Q4_K or Q8_0 weights from row groups (a regrouped copy made at start-up) gives the
// logits, bit for bit, of one reading them as stored, in prefill and batched decode, and with
// tensor-parallel shards that split the rows.
#include <catch2/catch.hpp>

#include <vector>

#include "kernels/row_groups.h"
#include "runtime/graph_runner.h"
#include "runtime/grouped_weights.h"
#include "runtime/model.h"
#include "runtime/model_weight_kinds.h"
#include "tests/support/stories_model.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

// The logits of prefilling two prompts into slots 0 and 1, then of three decode steps of both.
std::vector<float> run(const Model& model, const GraphPlan& plan) {
  kernels::ThreadPool pool(2);
  SnapStreamConfig config;
  SlotKvCache cache(model.shape, config.resolved(model.shape.context_length), 2, held_kv_heads(model.shape, plan));
  GraphRunner runner(model, pool, cache, plan);
  const auto vocab = static_cast<size_t>(model.shape.vocab);
  std::vector<float> all, logits(2 * vocab);
  const std::vector<int32_t> prompts[2] = {{1, 450, 4996, 17354, 1701, 432}, {1, 9038, 2501, 263}};
  for (int64_t slot = 0; slot < 2; ++slot) {
    runner.prefill(prompts[slot], slot, logits.data());
    all.insert(all.end(), logits.begin(), logits.begin() + static_cast<std::ptrdiff_t>(vocab));
  }
  for (int32_t step = 0; step < 3; ++step) {
    const DecodeInput batch[2] = {{29871 + step, 0}, {338 + step, 1}};
    runner.decode(batch, logits.data());
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

}  // namespace

TEST_CASE("row groups change no logit of a Q4_K or a Q8_0 model", "[runtime][row_groups]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const char* file = GENERATE("llama-spm-q4_k_m.gguf", "llama-starcoder-q8_0.gguf");
  INFO(file);
  const auto model = load_model((*models / "parity" / file).string());
  if (!kernels::row_groups_supported(model_matrix(*model, graph::WeightKind::Wq, 0))) {
    WARN("this CPU's integer kernels read no row groups");
    return;
  }
  for (const int32_t shards : {1, 2}) {
    INFO(shards << " tensor-parallel shards");
    GraphPlan grouped{{1, 2}, {64}, shards}, as_stored = grouped;
    as_stored.row_groups = false;
    kernels::ThreadPool pool(1);
    SnapStreamConfig config;
    SlotKvCache cache(model->shape, config.resolved(model->shape.context_length), 2);
    GraphRunner runner(*model, pool, cache, grouped);
    const GroupedWeights regrouped(*model, runner.graphs(), -1, pool);
    CHECK(regrouped.count() > 0);
    CHECK(run(*model, grouped) == run(*model, as_stored));
  }
}
