// Where a deployment's bytes live on each device: weights and KV in HBM, routed experts
// spilling to DDR when HBM cannot hold them, and how many sequences fit at a given capacity.
#pragma once

#include <cstdint>

#include "dataflow_sim/expert_routing.h"
#include "dataflow_sim/hardware_spec.h"
#include "graph/ir.h"

namespace snapstream::dataflow_sim {

// Placement rule: the KV cache and every weight read each step (attention, dense MLPs, shared
// experts, embeddings) must sit in HBM. Routed experts go in HBM too when everything fits;
// otherwise the HBM left after the batch's KV holds what it can of them and the rest streams
// from DDR. The maximum batch keeps all weights in HBM when they fit there, and only the
// every-step weights when they do not.
struct MemoryPlan {
  double weight_bytes = 0;          // per device
  double expert_bytes = 0;          // per device, the routed experts' share of weight_bytes
  double kv_bytes_per_sequence = 0; // per device, at the cache capacity
  double hbm_bytes = 0;             // per device, at the planned batch
  double ddr_bytes = 0;             // per device, at the planned batch
  double expert_ddr_fraction = 0;   // routed-expert bytes read from DDR
  int64_t batch = 0;
  int64_t max_batch = 0;
};

// A second model held on the same devices, such as a speculative draft: it runs every round,
// so all its weights stay in HBM, and each sequence's cache of it sits beside the target's.
struct Coresident {
  double weight_bytes = 0;           // per device
  double kv_bytes_per_sequence = 0;  // per device, at its capacity
};

// `graph`: any decode graph of the deployment (weights and KV per sequence do not depend on
// its batch). Throws CapacityError when the every-step weights exceed HBM, the spilled
// experts exceed DDR, or `batch` sequences do not fit. MemoryPlan's weight and KV figures are
// the target's alone; hbm_bytes, max_batch and the expert spill count `also` too. `experts`:
// the routed experts each device holds when not a column slice of each (see op_cost).
MemoryPlan plan_device_memory(const graph::Graph& graph, const DeviceSpec& device, int64_t capacity, int64_t batch,
                              const Coresident& also = {}, const ExpertLoad* experts = nullptr);

}  // namespace snapstream::dataflow_sim
