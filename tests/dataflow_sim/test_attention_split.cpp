// Latent attention split by heads and cached positions against split by sequences: what each
// costs in weights, collectives and batch, and where each is the faster.
#include <catch2/catch.hpp>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/simulation.h"
#include "tests/dataflow_sim/sim_fixtures.h"

using namespace snapstream;
using namespace snapstream::dataflow_sim;

namespace {

SimulationResult deepseek(int64_t batch, graph::AttentionSplit split, int64_t context = 4096) {
  SimulationOptions o;
  o.context = context;
  o.batch = batch;
  o.max_batch = batch == 0;
  o.attention_split = split;
  return simulate(test::model_config("deepseek-r1-671b"), test::system_config("sn40l-16"), o);
}

}  // namespace

TEST_CASE("data-parallel attention holds every attention weight, trades the position split's collectives for weight reads",
          "[dataflow_sim][attention]") {
  using graph::AttentionSplit;
  const SimulationResult heads1 = deepseek(1, AttentionSplit::Heads), data1 = deepseek(1, AttentionSplit::Sequences);
  const SimulationResult heads256 = deepseek(256, AttentionSplit::Heads), data256 = deepseek(256, AttentionSplit::Sequences);
  CHECK(data1.weight_bytes_per_socket > heads1.weight_bytes_per_socket);
  // The cache of a sequence is the same bytes, held whole by one socket or split over all.
  CHECK(data1.kv_bytes_per_sequence == Approx(heads1.kv_bytes_per_sequence).epsilon(0.01));
  INFO("batch 1: " << heads1.tokens_per_s_aggregate << " (heads) vs " << data1.tokens_per_s_aggregate << " (sequences); batch 256: "
                   << heads256.tokens_per_s_aggregate << " vs " << data256.tokens_per_s_aggregate);
  // One sequence: every socket reads every attention weight for nothing.
  CHECK(data1.step_seconds > heads1.step_seconds);
  // Many sequences: the gathered queries and scattered results of the position split cost more.
  CHECK(data256.step.time.collective < heads256.step.time.collective);
  CHECK(data256.step_seconds < heads256.step_seconds);
  CHECK(data256.attention_split == "data");
  CHECK(heads256.attention_split == "tensor");
}

TEST_CASE("split by sequence, the largest batch is whole caches per socket", "[dataflow_sim][attention]") {
  const SimulationResult largest = deepseek(0, graph::AttentionSplit::Sequences, 131072);
  CHECK(largest.max_batch_memory % 16 == 0);
  CHECK(largest.batch == largest.max_batch);
  CHECK_THROWS_AS(deepseek(largest.max_batch_memory + 1, graph::AttentionSplit::Sequences, 131072), CapacityError);
  SimulationOptions o;
  o.context = 1024;
  o.attention_split = graph::AttentionSplit::Sequences;
  CHECK_THROWS_WITH(simulate(test::model_config("llama-3.1-8b"), test::system_config("sn40l-16"), o), Catch::Contains("latent attention"));
}
