// Placement of fused kernels onto PCUs and PMUs, and the error when SRAM runs out.
#include <catch2/catch.hpp>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/placement.h"
#include "dataflow_sim/simulation.h"
#include "graph/passes.h"
#include "tests/dataflow_sim/sim_fixtures.h"

using namespace snapstream;
using namespace snapstream::dataflow_sim;

TEST_CASE("a decode layer is placed within the socket's PCUs and PMUs", "[dataflow_sim]") {
  SimulationOptions o;
  o.context = 8192;
  o.batch = 16;
  const SimulationResult r = simulate(test::model_config("llama-3.1-70b"), test::system_config("sn40l-8"), o);
  const SystemSpec system = test::system_config("sn40l-8");
  for (const KernelPrice& k : r.step.kernels) {
    INFO(k.name);
    CHECK(k.pcus <= system.device.pcus);
    CHECK(k.pmus <= system.device.pmus);
    CHECK(k.sram_bytes <= system.device.sram_bytes());
  }
  CHECK(r.sram_bytes_per_socket > 0);
  CHECK(r.pmu_utilisation > 0);
  CHECK(r.pmu_utilisation <= 1);
}

TEST_CASE("a kernel over the SRAM budget fails placement naming the op and the bytes missing", "[dataflow_sim]") {
  SystemSpec small = test::system_config("sn40l");
  small.device.pmus = 8;  // 4 MiB of SRAM: a batch of 512 rows of 8B activations cannot stay on chip
  SimulationOptions o;
  o.context = 128;
  o.batch = 512;
  o.tp = 1;
  try {
    simulate(test::model_config("llama-3.1-8b"), small, o);
    FAIL("placement should have failed");
  } catch (const PlacementError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("does not fit on-chip SRAM") != std::string::npos);
    CHECK(message.find("more than the 4194304 bytes of 8 PMUs") != std::string::npos);
    CHECK(message.find("largest op 'l0.") != std::string::npos);
    CHECK(message.find("layers 0-31 (looped)") != std::string::npos);
  }
}
