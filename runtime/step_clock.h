// The price of engine steps on an emulated accelerator. The engine charges every step it runs to
// an emulated clock by asking a StepClock what the step's graph costs; what does the pricing is
// plugged in from outside (the app plugs in the SN40L model), so the runtime never sees the
// simulator and the two stay siblings over graph/.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "graph/graph_cache.h"

namespace snapstream::runtime {

// What the emulated deployment is, and what it holds per device with every slot busy: what
// responses and metrics report beside the real timings.
struct EmulatedFootprint {
  std::string description;  // one line: what is priced on what, proxy or not
  std::string model;        // the model whose graphs are priced
  std::string system;       // the hardware config
  bool proxy = false;       // priced as another model while the served one computes the tokens
  int32_t tp = 1;           // devices each graph splits over
  double weight_hbm_bytes = 0;       // the weights' share of one device's HBM
  double kv_bytes_per_sequence = 0;  // per device
  double sram_bytes = 0;             // the largest kernel's placed buffers
  double pcu_utilisation = 0;        // achieved over peak FLOPs in a full-batch decode step
  double pmu_utilisation = 0;        // share of PMU SRAM the largest kernel places
};

class StepClock {
 public:
  virtual ~StepClock() = default;
  // Device seconds of one run of the compiled graph with this key; for a prefill chunk,
  // `first_position` is where the chunk starts (its attention reads what came before).
  virtual double seconds(const graph::GraphKey& key, int64_t first_position) const = 0;
  virtual const EmulatedFootprint& footprint() const = 0;
};

// Builds the clock once the engine's graphs are compiled: `graphs` are every graph the engine
// will run, `max_context` the longest sequence. Throws ConfigError when the emulated device
// cannot hold or place them.
using StepClockFactory = std::function<std::unique_ptr<StepClock>(const graph::GraphCache& graphs, int64_t max_context)>;

}  // namespace snapstream::runtime
