// A runner that holds one tensor-parallel shard (an MPI rank's): its share of the KV cache, its
// own copies of the column slices it reads, and no running before it joins the other ranks.
#include <catch2/catch.hpp>

#include <vector>

#include "kernels/activation_rounding.h"
#include "kernels/dequantize.h"
#include "runtime/errors.h"
#include "runtime/graph_runner.h"
#include "runtime/held_weight_slices.h"
#include "runtime/model.h"
#include "runtime/model_weight_kinds.h"
#include "tests/support/stories_model.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

std::vector<float> dequantized(const kernels::WeightView& w) {
  std::vector<float> out(static_cast<size_t>(w.rows * w.cols));
  kernels::dequantize_rows(w, 0, w.rows, out.data());
  return out;
}

}  // namespace

TEST_CASE("a held shard's KV heads are its share of every head, or the one it shares", "[runtime][tp]") {
  graph::ModelShape shape;
  shape.kv_heads = 4;
  GraphPlan plan;
  plan.shards = 2;
  CHECK(held_kv_heads(shape, plan).count == 0);  // every head
  plan.held_shard = 1;
  CHECK(held_kv_heads(shape, plan).first == 2);
  CHECK(held_kv_heads(shape, plan).count == 2);
  plan.held_shard = 2;
  CHECK_THROWS_AS(held_kv_heads(shape, plan), ConfigError);
  plan.shards = 3;
  plan.held_shard = 0;
  CHECK_THROWS_AS(held_kv_heads(shape, plan), ConfigError);
  // More shards than KV heads: shards 4 and 5 share KV head 2.
  plan.shards = 8;
  for (const int32_t shard : {4, 5}) {
    plan.held_shard = shard;
    CHECK(held_kv_heads(shape, plan).first == 2);
    CHECK(held_kv_heads(shape, plan).count == 1);
  }
  plan.shards = 6;
  CHECK_THROWS_AS(held_kv_heads(shape, plan), ConfigError);
}

TEST_CASE("held column slices hold the same weights as the file's", "[runtime][tp]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  // f32 (stories260K), and Q4_K, whose weights round their input and so are split by rows.
  for (const auto& file : {*models / "stories260K.gguf", *models / "parity" / "llama-spm-q4_k_m.gguf"}) {
    INFO(file.filename().string());
    const auto model = load_model(file.string());
    kernels::ThreadPool pool(1);
    for (int32_t shard = 0; shard < 2; ++shard) {
      SnapStreamConfig config;
      GraphPlan plan{{1, 2}, {64}, 2, true, shard};
      SlotKvCache cache(model->shape, config.resolved(model->shape.context_length), 2, held_kv_heads(model->shape, plan));
      GraphRunner runner(*model, pool, cache, plan);
      const HeldWeightSlices held(*model, runner.graphs(), shard);
      // f32: each layer's attention output and MLP down projection are split by columns. Q4_K
      // splits them by rows over gathered inputs, all read in place.
      const bool rounds = kernels::activation_block(model->weights.wq_dtype()) != 0;
      CHECK(held.count() == (rounds ? 0 : 2 * model->shape.layers));
      int64_t compared = 0;
      for (const graph::Graph& g : runner.graphs().graphs())
        for (const graph::Op& op : g.flattened()) {
          const kernels::WeightView* copy = held.find(op.weight, op.layer);
          if (copy == nullptr) continue;
          CHECK(op.shard == shard);
          const kernels::WeightView in_place = graph::slice_of(model_matrix(*model, op.weight.kind, op.layer), op.weight);
          CHECK(copy->data != in_place.data);
          CHECK(dequantized(*copy) == dequantized(in_place));
          ++compared;
        }
      CHECK(compared == held.count() * static_cast<int64_t>(runner.graphs().graphs().size()));
      // Half the heads: half the cache.
      CHECK(cache.bytes_per_slot() * 2 == SlotKvCache(model->shape, config.resolved(model->shape.context_length), 2).bytes_per_slot());
    }
  }
}

TEST_CASE("a runner holding one shard runs only once joined to the other ranks", "[runtime][tp]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(1);
  SnapStreamConfig config;
  GraphPlan plan{{1}, {64}, 2, true, 1};
  SlotKvCache cache(model->shape, config.resolved(model->shape.context_length), 1, held_kv_heads(model->shape, plan));
  GraphRunner runner(*model, pool, cache, plan);
  std::vector<float> logits(static_cast<size_t>(model->shape.vocab));
  const std::vector<int32_t> prompt = {1, 403, 407};
  CHECK_THROWS_AS(runner.prefill(prompt, 0, logits.data()), ContractError);
  // A cache of every head does not fit a runner holding one shard.
  SlotKvCache whole(model->shape, config.resolved(model->shape.context_length), 1);
  CHECK_THROWS_AS(GraphRunner(*model, pool, whole, plan), ContractError);
}
