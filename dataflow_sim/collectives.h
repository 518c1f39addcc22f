// Time of the tensor-parallel collectives over the socket links. Small messages are bound by
// link latency, large ones by bandwidth, so an all-reduce picks the faster of two algorithms.
#pragma once

#include <cstdint>

#include "dataflow_sim/hardware_spec.h"
#include "graph/ir.h"

namespace snapstream::dataflow_sim {

struct CollectiveCost {
  double seconds = 0;
  double bytes_sent = 0;  // by each device
};

// `payload`: bytes of the whole tensor being reduced or gathered; `parts`: devices taking part.
// AllReduce: reduce-scatter then all-gather (two latency phases, 2(P-1)/P of the payload sent),
// or one shot where every device sends its whole partial to every other (one phase, (P-1)x).
// AllGather and ReduceScatter: one phase, (P-1)/P of the payload.
CollectiveCost collective_cost(graph::OpKind kind, double payload, int64_t parts, const SystemSpec& system);

}  // namespace snapstream::dataflow_sim
