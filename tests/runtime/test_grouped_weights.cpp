// A runner reading Q4_K or Q8_0 weights from row groups (a regrouped copy made at start-up) gives the
// logits, bit for bit, of one reading them as stored, in prefill and batched decode, and with
// tensor-parallel shards that split the rows, and every matmul reading whole rows has a copy; one
// reading f32 weights so gives them within the rounding of another summation order, with the
// same greedy tokens.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "graph/executor.h"
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
  std::vector<int32_t> prompts[2] = {{1, 450, 4996, 17354, 1701, 432}, {1, 9038, 2501, 263}};
  for (auto& prompt : prompts)
    for (int32_t& id : prompt) id %= static_cast<int32_t>(vocab);
  for (int64_t slot = 0; slot < 2; ++slot) {
    runner.prefill(prompts[slot], slot, logits.data());
    all.insert(all.end(), logits.begin(), logits.begin() + static_cast<std::ptrdiff_t>(vocab));
  }
  for (int32_t step = 0; step < 3; ++step) {
    const DecodeInput batch[2] = {{static_cast<int32_t>((29871 + step) % vocab), 0}, {338 + step, 1}};
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
    // Every matmul that reads whole rows finds a copy, a column slice of every column included
    // (one shard's attention output and down projections).
    int64_t whole_column_slices = 0;
    for (const graph::Graph& g : runner.graphs().graphs())
      for (const graph::Op& op : g.flattened()) {
        if (op.kind != graph::OpKind::MatMul) continue;
        const kernels::WeightView whole = model_matrix(*model, op.weight.kind, op.layer);
        const kernels::WeightView view = graph::slice_of(whole, op.weight);
        if (view.cols != whole.cols || !kernels::row_groups_supported(view)) continue;
        INFO(graph::weight_kind_name(op.weight.kind) << " of layer " << op.layer);
        CHECK(regrouped.find(op.weight, op.layer) != nullptr);
        if (op.weight.col_end > op.weight.col_begin) ++whole_column_slices;
      }
    if (shards == 1) CHECK(whole_column_slices > 0);
    CHECK(run(*model, grouped) == run(*model, as_stored));
  }
}

TEST_CASE("row groups move an f32 model's logits by rounding only", "[runtime][row_groups]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  if (!kernels::row_groups_supported(model_matrix(*model, graph::WeightKind::Wq, 0))) {
    WARN("this CPU reads no f32 row groups");
    return;
  }
  GraphPlan grouped{{1, 2}, {64}, 1}, as_stored = grouped;
  as_stored.row_groups = false;
  const std::vector<float> a = run(*model, grouped), b = run(*model, as_stored);
  REQUIRE(a.size() == b.size());
  CHECK(a != b);  // the sums run in another order, so some bits differ
  const auto vocab = static_cast<size_t>(model->shape.vocab);
  for (size_t at = 0; at < a.size(); at += vocab) {
    const auto row_a = a.begin() + static_cast<std::ptrdiff_t>(at), row_b = b.begin() + static_cast<std::ptrdiff_t>(at);
    const auto end_a = row_a + static_cast<std::ptrdiff_t>(vocab), end_b = row_b + static_cast<std::ptrdiff_t>(vocab);
    CHECK(std::max_element(row_a, end_a) - row_a == std::max_element(row_b, end_b) - row_b);
    float largest = 0.0f, moved = 0.0f;
    for (size_t v = 0; v < vocab; ++v) {
      largest = std::max(largest, std::fabs(b[at + v]));
      moved = std::max(moved, std::fabs(a[at + v] - b[at + v]));
    }
    CHECK(moved <= 1e-4f * largest);
  }
}
