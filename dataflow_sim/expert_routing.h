// Where a mixture of experts' work lands: how the routed experts are placed on the devices and
// how unevenly the router spreads tokens over them, reduced to the load of the busiest device
// (a step waits for it).
#pragma once

#include <cstdint>
#include <string>

#include "dataflow_sim/hardware_spec.h"
#include "graph/model_shape.h"

namespace snapstream::dataflow_sim {

enum class ExpertPlacement : uint8_t {
  ColumnSplit,     // every device holds a column slice of every expert: any routing is balanced
  ExpertParallel,  // whole experts per device: a device serves only the tokens routed to its own
};

const char* expert_placement_name(ExpertPlacement placement);
// "column" or "expert"; throws SimulationError otherwise.
ExpertPlacement parse_expert_placement(const std::string& name);

struct ExpertRouting {
  ExpertPlacement placement = ExpertPlacement::ColumnSplit;
  // Expert popularity: the expert of rank r is picked in proportion to 1 / r^skew (a Zipf law;
  // 0 is the uniform router), the ranks shuffled over the experts by `seed`.
  double router_skew = 0;
  // With expert parallelism, the most popular experts held by every device; their tokens are
  // shared evenly, and each device that serves some reads the whole expert.
  int64_t replicated_experts = 0;
  uint64_t seed = 1;
  int64_t samples = 64;      // routings drawn per priced batch
};

// Per MoE layer, averaged over the sampled routings: the most any device reads and the most any
// computes (one device or two: an upper bound on the busiest device, which a pipelined kernel
// waits for on its slower side). Experts are counted in whole experts' weights, token-expert
// pairs at an expert's full width.
struct ExpertLoad {
  double experts_read = 0;   // experts' weights read per step
  double token_experts = 0;  // token-expert pairs computed per step
  double experts_held = 0;   // experts' weights each device holds
  bool whole_experts = false;  // a device streams whole experts (expert parallelism), not column slices
};

// Bytes of one routed expert's gate, up and down matrices, `width` of its columns.
double expert_weight_bytes(const graph::ModelShape& model, int64_t width);

// Throws SimulationError for a negative or non-finite skew, more replicated experts than
// experts, replication without expert parallelism, or fewer than one sample.
void validate_expert_routing(const ExpertRouting& routing, const graph::ExpertShape& moe);

// The load of `tokens` routed tokens over `devices` devices. `device` rates the loads when a
// replicated expert's tokens go to the least loaded devices.
ExpertLoad busiest_device_load(const graph::ModelShape& model, int64_t tokens, int32_t devices, const ExpertRouting& routing,
                               const DeviceSpec& device);

}  // namespace snapstream::dataflow_sim
