// Mapping one fused kernel onto a socket's PCUs and PMUs: compute units shared among its ops
// by their work, memory units by the buffers each holds (weight tiles, KV tiles and the
// activations that stay on chip between ops).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataflow_sim/hardware_spec.h"
#include "dataflow_sim/op_cost.h"
#include "graph/ir.h"

namespace snapstream::dataflow_sim {

struct OpPlacement {
  std::string op;  // the op's first output tensor, e.g. "l0.s0.gate"
  graph::OpKind kind = graph::OpKind::MatMul;
  int64_t pcus = 0;
  int64_t pmus = 0;
  double sram_bytes = 0;
};

struct Placement {
  std::vector<OpPlacement> ops;
  double sram_bytes = 0;  // tiles plus on-chip activations
  int64_t pcus = 0;
  int64_t pmus = 0;
};

// Throws PlacementError, naming the kernel, its largest op and the bytes missing, when the
// buffers exceed the socket's SRAM (unless enforce_budget is false: sizing only).
Placement place_kernel(const graph::Graph& graph, const std::vector<const graph::Op*>& ops, const std::vector<OpCost>& costs,
                       const DeviceSpec& device, const std::string& kernel, bool enforce_budget = true);

}  // namespace snapstream::dataflow_sim
