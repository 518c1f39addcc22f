// What one op of a graph costs on one device: FLOPs, bytes streamed from memory, bytes sent
// over the links, and the on-chip buffers it needs. Counted from the op's tensors and weight
// slice, so every model the graph builder knows is priced by the same rules.
#pragma once

#include <cstdint>

#include "dataflow_sim/expert_routing.h"
#include "dataflow_sim/hardware_spec.h"
#include "graph/ir.h"

namespace snapstream::dataflow_sim {

struct OpCost {
  double flops = 0;              // executed: what the compute units run, and what is priced
  // The same work counted as Hoffmann et al. (2022, Table A4) count it, the convention of
  // published per-token figures: the embedding as a matmul, K and V projections as wide as
  // the queries, softmax at 3 FLOPs per score, norms and elementwise ops free. Latent
  // attention and experts, which that table does not cover, count as executed.
  double dense_accounting_flops = 0;
  double weight_bytes = 0;       // weights streamed per call (routed experts excluded)
  double expert_bytes = 0;       // routed experts' weights the batch touches
  double kv_bytes = 0;           // cache read and written
  double activation_bytes = 0;   // inputs and outputs, when they go through memory (GPU)
  double collective_payload = 0; // bytes of the tensor a collective reduces or gathers (0: not one)
  int64_t collective_parts = 0;  // devices taking part
  double resident_bytes = 0;     // weights the device holds for this op
  double kv_held_per_sequence = 0;  // cache bytes the device holds per sequence for this op
  double tile_bytes = 0;         // SRAM for streamed weight and KV tiles (double-buffered)
};

// `extent`: cached positions each sequence attends (decode), or positions before the chunk
// (prefill). `capacity`: positions a sequence's cache holds. `experts`, when given, is the
// busiest device's share of a routed-expert op (placement and router skew); without it the
// op's column slice of every expert is priced under a uniform router.
OpCost op_cost(const graph::Graph& graph, const graph::Op& op, const DeviceSpec& device, int64_t extent, int64_t capacity,
               const ExpertLoad* experts = nullptr);

}  // namespace snapstream::dataflow_sim
