// The emulated accelerator the app plugs into the engine's step clock: every compiled graph the
// engine will run is priced once at start-up on a system of SN40L sockets (or a GPU node), so
// each engine step can charge its device time to an emulated clock. With a proxy model the
// prices are those of a larger model's graphs of the same buckets, while the tokens still come
// from the served model.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "dataflow_sim/hardware_spec.h"
#include "graph/graph_cache.h"
#include "graph/model_shape.h"
#include "runtime/step_clock.h"

namespace snapstream::app {

struct EmulationOptions {
  dataflow_sim::SystemSpec system;
  std::optional<graph::ModelShape> proxy;  // price this model's graphs instead of the served model's
  int32_t tp = 0;                                // devices the graphs split over; 0: as many as the shape allows
  bool kernel_looping = true;
};

class EmulatedDevice final : public runtime::StepClock {
 public:
  // `served`: the engine's compiled graphs (their keys and the served shape, with the cache
  // capacity); `max_context`: the longest sequence. Throws SimulationError (CapacityError,
  // PlacementError) when the emulated deployment cannot hold or place them.
  EmulatedDevice(const EmulationOptions& options, const graph::GraphCache& served, int64_t max_context);

  double seconds(const graph::GraphKey& key, int64_t first_position) const override;
  const runtime::EmulatedFootprint& footprint() const override { return footprint_; }

 private:
  struct Priced {
    double at_start = 0;   // seconds with nothing before (prefill) or at capacity (decode)
    double at_end = 0;     // prefill: with the longest history before the chunk
    int64_t span = 0;      // prefill: positions between the two
  };
  std::map<std::pair<int, int64_t>, Priced> prices_;  // (phase, bucket) -> price
  runtime::EmulatedFootprint footprint_;
};

// The engine's step clock on the emulated device; the factory throws ConfigError where the
// device throws SimulationError.
runtime::StepClockFactory emulated_step_clock(const EmulationOptions& options);

}  // namespace snapstream::app
