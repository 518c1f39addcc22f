// `snapstream plan`'s search on a small model: every plan it reports meets its objectives when
// simulated again from scratch, and no configuration of the search space that is cheaper meets
// them (checked by enumerating the space independently).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/planner.h"
#include "tests/dataflow_sim/sim_fixtures.h"

using namespace snapstream;
using namespace snapstream::dataflow_sim;

namespace {

constexpr int64_t kContext = 2048;
constexpr int64_t kConcurrency = 64;
constexpr double kMinPerUser = 1200;
constexpr double kMaxTtft = 0.05;

PlanSpace small_space() {
  PlanSpace space;
  space.systems = {test::system_config("sn40l-8"), test::system_config("sn40l-16")};
  space.capacities = {0, 512};
  return space;
}

SimulationOptions at(int32_t tp, int64_t capacity, int64_t batch) {
  SimulationOptions o;
  o.context = kContext;
  o.kv_capacity = capacity;
  o.tp = tp;
  o.batch = batch;
  return o;
}

}  // namespace

TEST_CASE("every plan meets its objectives when simulated again, and nothing cheaper in the space does", "[dataflow_sim][plan]") {
  const graph::ModelShape model = test::model_config("llama-1b");
  const PlanSpace space = small_space();
  PlanObjectives objectives;
  objectives.min_tokens_per_user = kMinPerUser;
  objectives.max_ttft_seconds = kMaxTtft;
  const PlanResult result = plan_deployments(model, space, {kContext, kConcurrency, 0, 0}, objectives);
  REQUIRE_FALSE(result.plans.empty());
  for (const PlanPoint& p : result.plans) {
    INFO(p.system << " TP " << p.tp << " capacity " << p.capacity << " batch " << p.batch);
    const SystemSpec system = test::system_config(p.system);
    const Deployment again(model, system, at(p.tp, p.full_cache ? 0 : p.capacity, p.batch));
    const SimulationResult r = again.price(system);
    CHECK(r.tokens_per_s_per_user >= kMinPerUser);
    CHECK(r.tokens_per_s_per_user == Approx(p.tokens_per_s_per_user));
    CHECK(again.prefill_seconds(system, space.prefill_chunk) <= kMaxTtft);
    CHECK(p.replicas * p.batch >= kConcurrency);
    CHECK(p.sockets == p.replicas * p.tp);
    CHECK_FALSE(p.binding.empty());
  }
  for (size_t i = 1; i < result.plans.size(); ++i) CHECK(result.plans[i - 1].sockets <= result.plans[i].sockets);

  // The space enumerated here on its own: powers-of-two TP up to each system's sockets, both
  // caches, batches of powers of two up to the largest that fits, that largest, and the load.
  int64_t cheapest = std::numeric_limits<int64_t>::max();
  for (const SystemSpec& system : space.systems) {
    for (int32_t tp = 1; tp <= system.devices; tp *= 2) {
      for (const int64_t capacity : space.capacities) {
        SimulationOptions largest = at(tp, capacity, 1);
        largest.max_batch = true;
        int64_t max_batch = 0;
        double ttft = 0;
        try {
          const Deployment probe(model, system, largest);
          max_batch = probe.price(system).max_batch;
          ttft = probe.prefill_seconds(system, space.prefill_chunk);
        } catch (const SimulationError&) {
          continue;
        }
        if (ttft > kMaxTtft) continue;
        std::vector<int64_t> batches = {max_batch, kConcurrency};
        for (int64_t b = 1; b < max_batch; b *= 2) batches.push_back(b);
        for (const int64_t batch : batches) {
          if (batch > max_batch || batch > kConcurrency) continue;
          const SimulationResult r = simulate(model, system, at(tp, capacity, batch));
          if (r.tokens_per_s_per_user < kMinPerUser) continue;
          const int64_t replicas = (kConcurrency + batch - 1) / batch;
          cheapest = std::min(cheapest, replicas * tp);
        }
      }
    }
  }
  INFO("cheapest by enumeration: " << cheapest << " sockets; the planner's: " << result.plans.front().sockets);
  CHECK(result.plans.front().sockets == cheapest);
}

TEST_CASE("a request rate becomes sequences at once by Little's law, with the prefill's share taken out", "[dataflow_sim][plan]") {
  const graph::ModelShape model = test::model_config("llama-1b");
  PlanSpace space = small_space();
  space.systems.resize(1);
  space.capacities = {0};
  const PlanResult result = plan_deployments(model, space, {kContext, 0, 20, 256}, {});
  REQUIRE_FALSE(result.points.empty());
  for (const PlanPoint& p : result.points) {
    const double raw = simulate(model, space.systems.front(), at(p.tp, 0, p.batch)).tokens_per_s_per_user;
    INFO("TP " << p.tp << " batch " << p.batch);
    CHECK(p.concurrency == static_cast<int64_t>(std::ceil(20 * (p.ttft_seconds + 256 / raw))));
    CHECK(p.tokens_per_s_per_user == Approx(raw * std::max(0.0, 1 - 20 * p.ttft_seconds / static_cast<double>(p.replicas))));
  }
}

TEST_CASE("plans that make no sense are refused with their reason", "[dataflow_sim][plan]") {
  const graph::ModelShape model = test::model_config("llama-1b");
  const PlanSpace space = small_space();
  CHECK_THROWS_WITH(plan_deployments(model, space, {kContext, 8, 5, 100}, {}), Catch::Contains("not both"));
  CHECK_THROWS_WITH(plan_deployments(model, space, {kContext, 0, 5, 0}, {}), Catch::Contains("--output-tokens"));
  CHECK_THROWS_WITH(plan_deployments(model, space, {model.context_length + 1, 8, 0, 0}, {}), Catch::Contains("context"));
  CHECK_THROWS_WITH(plan_deployments(model, PlanSpace{}, {kContext, 8, 0, 0}, {}), Catch::Contains("at least one system"));
}
