// Properties every pricing must keep, whatever the calibrated values: SnapStream's memory
// saving, monotone cost in context, and kernel looping never hurting.
#include <catch2/catch.hpp>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/simulation.h"
#include "tests/dataflow_sim/sim_fixtures.h"

using namespace snapstream;
using namespace snapstream::dataflow_sim;

TEST_CASE("SnapStream at C = N/4 holds exactly 4x less KV and fits at least 3x the batch (DeepSeek, 16 sockets, 128k)",
          "[dataflow_sim]") {
  const graph::ModelShape model = test::model_config("deepseek-r1-671b");
  const SystemSpec system = test::system_config("sn40l-16");
  SimulationOptions full;
  full.context = 131072;
  full.max_batch = true;
  SimulationOptions snap = full;
  snap.kv_capacity = full.context / 4;
  const SimulationResult f = simulate(model, system, full), s = simulate(model, system, snap);
  CHECK(f.kv_bytes_per_sequence == 4 * s.kv_bytes_per_sequence);
  CHECK(s.max_batch >= 3 * f.max_batch);
  CHECK(f.batch == f.max_batch);
  INFO("full cache: batch " << f.max_batch << ", " << f.tokens_per_s_aggregate << " tokens/s; SnapStream: batch " << s.max_batch
                            << ", " << s.tokens_per_s_aggregate << " tokens/s");
  CHECK(s.tokens_per_s_aggregate > f.tokens_per_s_aggregate);
}

TEST_CASE("a longer context never makes full-cache decode faster", "[dataflow_sim]") {
  const auto [model_name, system_name] = GENERATE(table<std::string, std::string>(
      {{"llama-3.1-8b", "sn40l-16"}, {"llama-3.1-70b", "sn40l-8"}, {"deepseek-r1-671b", "sn40l-16"}, {"llama-3.1-8b", "dgx-h100"}}));
  const graph::ModelShape model = test::model_config(model_name);
  const SystemSpec system = test::system_config(system_name);
  const int64_t batch = GENERATE(1, 4);
  INFO(model_name << " on " << system_name << ", batch " << batch);
  double previous = 0;
  for (int64_t context = 512; context <= 131072; context *= 2) {
    SimulationOptions o;
    o.context = context;
    o.batch = batch;
    const double step = simulate(model, system, o).step_seconds;
    INFO("context " << context);
    CHECK(step >= previous);
    previous = step;
  }
}

TEST_CASE("kernel looping never makes a step slower", "[dataflow_sim]") {
  const auto [model_name, system_name] = GENERATE(table<std::string, std::string>(
      {{"llama-3.1-8b", "sn40l"}, {"llama-3.1-8b", "sn40l-16"}, {"llama-3.1-70b", "sn40l-8"}, {"deepseek-r1-671b", "sn40l-16"},
       {"llama-3.1-8b", "dgx-h100"}}));
  const graph::ModelShape model = test::model_config(model_name);
  const SystemSpec system = test::system_config(system_name);
  int compared = 0;
  for (const int64_t batch : {1, 8, 64}) {
    for (const int64_t context : {1024, 32768}) {
      SimulationOptions looped;
      looped.context = context;
      looped.batch = batch;
      looped.kv_capacity = context / 4;
      SimulationOptions unlooped = looped;
      unlooped.kernel_looping = false;
      SimulationResult a, b;
      try {
        a = simulate(model, system, looped);
        b = simulate(model, system, unlooped);
      } catch (const CapacityError&) {
        continue;  // this batch does not fit this system
      }
      INFO(model_name << " on " << system_name << ", batch " << batch << ", context " << context);
      CHECK(a.step_seconds <= b.step_seconds);
      CHECK(a.step.kernel_calls <= b.step.kernel_calls);
      ++compared;
    }
  }
  CHECK(compared >= 4);
}
