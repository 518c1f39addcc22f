// Placement by proportional shares: every op gets at least one unit of what it uses.
#include "dataflow_sim/placement.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "dataflow_sim/errors.h"

namespace snapstream::dataflow_sim {

Placement place_kernel(const graph::Graph& graph, const std::vector<const graph::Op*>& ops, const std::vector<OpCost>& costs,
                       const DeviceSpec& device, const std::string& kernel, bool enforce_budget) {
  Placement p;
  std::set<int32_t> tensors;
  double flops = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const graph::Op& op = *ops[i];
    OpPlacement placed;
    placed.op = op.outputs.empty() ? std::string(graph::op_kind_name(op.kind))
                                   : graph.tensors[static_cast<size_t>(op.outputs.front())].name;
    placed.kind = op.kind;
    placed.sram_bytes = costs[i].tile_bytes;
    // An op's outputs live in SRAM until the ops after it have read them.
    for (const int32_t t : op.outputs) {
      const graph::Tensor& tensor = graph.tensors[static_cast<size_t>(t)];
      if (tensors.insert(t).second)
        placed.sram_bytes += static_cast<double>(tensor.elements()) * device.activation_bytes;
    }
    flops += costs[i].flops;
    p.sram_bytes += placed.sram_bytes;
    p.ops.push_back(std::move(placed));
  }
  const double budget = device.sram_bytes();
  if (enforce_budget && p.sram_bytes > budget) {
    const auto largest = std::max_element(p.ops.begin(), p.ops.end(),
                                          [](const OpPlacement& a, const OpPlacement& b) { return a.sram_bytes < b.sram_bytes; });
    throw PlacementError("kernel '" + kernel + "' does not fit on-chip SRAM: it needs " +
                         std::to_string(static_cast<int64_t>(p.sram_bytes)) + " bytes, " +
                         std::to_string(static_cast<int64_t>(p.sram_bytes - budget)) + " more than the " +
                         std::to_string(static_cast<int64_t>(budget)) + " bytes of " + std::to_string(device.pmus) +
                         " PMUs; its largest op '" + largest->op + "' (" + std::string(graph::op_kind_name(largest->kind)) +
                         ") holds " + std::to_string(static_cast<int64_t>(largest->sram_bytes)) + " bytes");
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    OpPlacement& placed = p.ops[i];
    placed.pmus = static_cast<int64_t>(std::ceil(placed.sram_bytes / static_cast<double>(device.sram_bytes_per_pmu)));
    if (costs[i].flops > 0)
      placed.pcus = std::max<int64_t>(1, static_cast<int64_t>(std::floor(costs[i].flops / flops * static_cast<double>(device.pcus))));
    p.pcus += placed.pcus;
    p.pmus += placed.pmus;
  }
  p.pcus = std::min(p.pcus, device.pcus);
  return p;
}

}  // namespace snapstream::dataflow_sim
