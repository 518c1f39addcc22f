// The emulated accelerator behind the engine: every compiled graph the engine will run is
// priced once at start-up on a system of SN40L sockets (or a GPU node), so each engine step
// can charge its device time to an emulated clock. With a proxy model the prices are those
// of a larger model's graphs of the same buckets, while the tokens still come from the
// served model.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "dataflow_sim/hardware_spec.h"
#include "dataflow_sim/model_spec.h"
#include "graph/graph_cache.h"

namespace snapstream::dataflow_sim {

struct EmulationOptions {
  SystemSpec system;
  std::optional<ModelSpec> proxy;  // price this model's graphs instead of the served model's
  int32_t tp = 0;                  // devices the graphs split over; 0: as many as the shape allows
  bool kernel_looping = true;
};

// What the emulated deployment holds per device, with every slot busy.
struct DeviceFootprint {
  std::string model;               // the model whose graphs are priced
  std::string system;
  bool proxy = false;
  int32_t tp = 1;
  double weight_bytes = 0;
  double weight_hbm_bytes = 0;      // the weights' share of HBM (the rest spills to DDR)
  double kv_bytes_per_sequence = 0;
  double hbm_bytes = 0;
  double ddr_bytes = 0;
  double sram_bytes = 0;           // the largest kernel's placed buffers
  double pcu_utilisation = 0;      // of the largest decode graph's step
  double pmu_utilisation = 0;
  double full_batch_step_seconds = 0;
};

class EmulatedDevice {
 public:
  // `served`: the engine's compiled graphs (their keys and the served shape, with the cache
  // capacity); `max_context`: the longest sequence. Throws SimulationError (CapacityError,
  // PlacementError) when the emulated deployment cannot hold or place them.
  EmulatedDevice(const EmulationOptions& options, const graph::GraphCache& served, int64_t max_context);

  // Device seconds of one run of the graph with this key; for a prefill chunk,
  // `first_position` is where the chunk starts (its attention reads what came before).
  double seconds(const graph::GraphKey& key, int64_t first_position = 0) const;

  const DeviceFootprint& footprint() const { return footprint_; }
  // One line for the start-up log and the responses: model, system, proxy or not.
  std::string description() const;

 private:
  struct Priced {
    double at_start = 0;   // seconds with nothing before (prefill) or at capacity (decode)
    double at_end = 0;     // prefill: with the longest history before the chunk
    int64_t span = 0;      // prefill: positions between the two
  };
  std::map<std::pair<int, int64_t>, Priced> prices_;  // (phase, bucket) -> price
  DeviceFootprint footprint_;
};

}  // namespace snapstream::dataflow_sim
