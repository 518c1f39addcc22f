// Mixture-of-experts placement and router skew in the pricing: the sampled routing against the
// closed form, expert parallelism's imbalance at small batches, what a skewed router does to
// the busiest socket, replicated experts, and the refusals.
#include <catch2/catch.hpp>

#include <cmath>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/expert_routing.h"
#include "dataflow_sim/simulation.h"
#include "tests/dataflow_sim/sim_fixtures.h"

using namespace snapstream;
using namespace snapstream::dataflow_sim;

namespace {

ExpertRouting routing(ExpertPlacement placement, double skew, int64_t replicated = 0) {
  ExpertRouting r;
  r.placement = placement;
  r.router_skew = skew;
  r.replicated_experts = replicated;
  return r;
}

SimulationResult deepseek(int64_t batch, const ExpertRouting& experts) {
  SimulationOptions o;
  o.context = 4096;
  o.batch = batch;
  o.experts = experts;
  return simulate(test::model_config("deepseek-r1-671b"), test::system_config("sn40l-16"), o);
}

}  // namespace

TEST_CASE("sampled routings of a nearly uniform router match the closed form of distinct experts touched", "[dataflow_sim][experts]") {
  const graph::ModelShape model = test::model_config("deepseek-r1-671b");
  const DeviceSpec device = test::system_config("sn40l-16").device;
  for (const int64_t tokens : {1, 8, 64, 512}) {
    const ExpertLoad closed = busiest_device_load(model, tokens, 16, routing(ExpertPlacement::ColumnSplit, 0), device);
    const double experts = 256, top = 8;
    CHECK(closed.experts_read == Approx(experts * (1 - std::pow(1 - top / experts, static_cast<double>(tokens))) / 16));
    CHECK(closed.token_experts == Approx(static_cast<double>(tokens) * top / 16));
    CHECK(closed.experts_held == Approx(16));
    // A skew of 1e-9 is uniform to nine digits but goes through the sampler.
    const ExpertLoad sampled = busiest_device_load(model, tokens, 16, routing(ExpertPlacement::ColumnSplit, 1e-9), device);
    INFO(tokens << " tokens: closed " << closed.experts_read << ", sampled " << sampled.experts_read);
    CHECK(sampled.experts_read == Approx(closed.experts_read).epsilon(0.02));
  }
}

TEST_CASE("whole experts per socket leave batch-1 decode waiting for the socket that drew most of a token's experts",
          "[dataflow_sim][experts]") {
  const SimulationResult column = deepseek(1, routing(ExpertPlacement::ColumnSplit, 0));
  const SimulationResult parallel = deepseek(1, routing(ExpertPlacement::ExpertParallel, 0));
  INFO("column split " << column.tokens_per_s_per_user << " tokens/s, expert parallel " << parallel.tokens_per_s_per_user);
  CHECK(column.busiest_experts_read == Approx(0.5));
  // Eight experts over sixteen sockets: some socket almost always draws two or more.
  CHECK(parallel.busiest_experts_read > 1.5);
  CHECK(parallel.step_seconds > column.step_seconds);
  // Same bytes held: 256 experts whole over 16 sockets, or a sixteenth of each.
  CHECK(parallel.weight_bytes_per_socket == Approx(column.weight_bytes_per_socket));
}

TEST_CASE("whole experts per socket are never faster than the same routings spread over every socket", "[dataflow_sim][experts]") {
  for (const int64_t batch : {1, 4, 16, 64, 256, 985}) {
    for (const double skew : {0.0, 0.5, 1.0, 1.5}) {
      const SimulationResult column = deepseek(batch, routing(ExpertPlacement::ColumnSplit, skew));
      const SimulationResult parallel = deepseek(batch, routing(ExpertPlacement::ExpertParallel, skew));
      INFO("batch " << batch << ", skew " << skew << ": column " << column.step_seconds << " s, expert parallel " << parallel.step_seconds);
      CHECK(parallel.step_seconds >= column.step_seconds);
      CHECK(parallel.busiest_experts_read >= column.busiest_experts_read);
      CHECK(parallel.busiest_token_experts >= column.busiest_token_experts);
    }
  }
}

TEST_CASE("a skewed router piles more token-expert pairs on the busiest socket, and is never faster once every expert is read",
          "[dataflow_sim][experts]") {
  const graph::ModelShape model = test::model_config("deepseek-r1-671b");
  const DeviceSpec device = test::system_config("sn40l-16").device;
  for (const int64_t tokens : {16, 64, 256, 1024}) {
    double previous = 0;
    for (const double skew : {0.0, 0.5, 1.0, 1.5}) {
      const ExpertLoad load = busiest_device_load(model, tokens, 16, routing(ExpertPlacement::ExpertParallel, skew), device);
      INFO(tokens << " tokens, skew " << skew << ": busiest computes " << load.token_experts << " pairs");
      CHECK(load.token_experts >= previous);
      previous = load.token_experts;
    }
  }
  // At 985 sequences every socket reads all its experts whatever the router, so the extra
  // tokens on the busiest socket can only add time. (At middle batches a skewed router touches
  // fewer distinct experts, and memory-bound decode is then faster: that is priced too.)
  const double uniform = deepseek(985, routing(ExpertPlacement::ExpertParallel, 0)).step_seconds;
  for (const double skew : {0.5, 1.0, 1.5}) CHECK(deepseek(985, routing(ExpertPlacement::ExpertParallel, skew)).step_seconds >= uniform);
}

TEST_CASE("replicating the hottest experts costs memory on every socket and relieves the busiest one", "[dataflow_sim][experts]") {
  const SimulationResult plain = deepseek(64, routing(ExpertPlacement::ExpertParallel, 1.0));
  const SimulationResult replicated = deepseek(64, routing(ExpertPlacement::ExpertParallel, 1.0, 8));
  INFO("busiest pairs " << plain.busiest_token_experts << " -> " << replicated.busiest_token_experts);
  CHECK(replicated.weight_bytes_per_socket > plain.weight_bytes_per_socket);
  CHECK(replicated.busiest_token_experts < plain.busiest_token_experts);
}

TEST_CASE("the same seed prices the same routing", "[dataflow_sim][experts]") {
  const SimulationResult a = deepseek(32, routing(ExpertPlacement::ExpertParallel, 1.0));
  const SimulationResult b = deepseek(32, routing(ExpertPlacement::ExpertParallel, 1.0));
  CHECK(a.step_seconds == b.step_seconds);
  CHECK(a.busiest_experts_read == b.busiest_experts_read);
}

TEST_CASE("expert routings that cannot be priced are refused with their reason", "[dataflow_sim][experts]") {
  CHECK_THROWS_WITH(deepseek(1, routing(ExpertPlacement::ColumnSplit, 0, 4)), Catch::Contains("need expert parallelism"));
  CHECK_THROWS_WITH(deepseek(1, routing(ExpertPlacement::ExpertParallel, -1)), Catch::Contains("Zipf exponent"));
  CHECK_THROWS_WITH(deepseek(1, routing(ExpertPlacement::ExpertParallel, 0, 257)), Catch::Contains("between 0 and 256"));
  CHECK_THROWS_WITH(parse_expert_placement("rows"), Catch::Contains("'column'"));
}
