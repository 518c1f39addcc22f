// Hardware configs: every shipped one loads, and bad ones are refused by name; a deployment
// that does not fit is refused with its numbers.
#include <catch2/catch.hpp>
#include <fstream>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/simulation.h"
#include "tests/dataflow_sim/sim_fixtures.h"

using namespace snapstream;
using namespace snapstream::dataflow_sim;

TEST_CASE("every hardware config loads, and systems take their socket's values", "[dataflow_sim]") {
  for (const char* name : {"sn40l", "sn40l-8", "sn40l-16", "dgx-h100"}) {
    INFO(name);
    const SystemSpec s = test::system_config(name);
    CHECK(s.device.peak_flops > 0);
    CHECK(s.device.hbm_bytes_per_s > 0);
  }
  const SystemSpec rack = test::system_config("sn40l-16");
  CHECK(rack.devices == 16);
  CHECK(rack.device.pcus == 1040);
  CHECK(rack.collective_hops() == 2);
  CHECK(test::system_config("dgx-h100").device.execution == ExecutionModel::KernelPerOp);
}

TEST_CASE("a hardware config missing a value is refused naming the value", "[dataflow_sim]") {
  test::TempDir dir;
  std::ofstream(dir / "broken.json") << R"({"name": "broken", "published": {"peak_bf16_flops": {"value": 1e15}}})";
  REQUIRE_THROWS_AS(load_system(dir / "broken.json"), SpecError);
  try {
    load_system(dir / "broken.json");
  } catch (const SpecError& e) {
    CHECK(std::string(e.what()).find("missing 'hbm_bytes'") != std::string::npos);
  }
}

TEST_CASE("a batch that does not fit, or a context beyond the model's, is refused with the numbers", "[dataflow_sim]") {
  SimulationOptions o;
  o.context = 131072;
  o.batch = 100000;
  CHECK_THROWS_AS(simulate(test::model_config("llama-3.1-8b"), test::system_config("sn40l-16"), o), CapacityError);
  o.context = 1 << 20;
  o.batch = 1;
  CHECK_THROWS_WITH(simulate(test::model_config("llama-3.1-8b"), test::system_config("sn40l-16"), o),
                    Catch::Contains("exceeds llama-3.1-8b's 131072"));
}
