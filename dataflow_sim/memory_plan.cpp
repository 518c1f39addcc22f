// Summing what shard 0 holds: it is the busiest shard (it also keeps the replicated norms).
#include "dataflow_sim/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/op_cost.h"

namespace snapstream::dataflow_sim {
namespace {

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace

MemoryPlan plan_device_memory(const graph::Graph& graph, const DeviceSpec& device, int64_t capacity, int64_t batch,
                              const Coresident& also, const ExpertLoad* experts) {
  MemoryPlan plan;
  for (const graph::Op& op : graph.flattened()) {
    if (op.shard != 0) continue;
    const OpCost c = op_cost(graph, op, device, 0, capacity, experts);
    plan.weight_bytes += c.resident_bytes;
    if (op.kind == graph::OpKind::MoeExperts) plan.expert_bytes += c.resident_bytes;
    plan.kv_bytes_per_sequence += c.kv_held_per_sequence;
  }
  const double every_step = plan.weight_bytes - plan.expert_bytes + also.weight_bytes;
  if (every_step >= device.hbm_bytes)
    throw CapacityError("the weights read every step need " + gib(every_step) + " per device, more than its " +
                        gib(device.hbm_bytes) + " of HBM: use more devices (--tp) or a smaller weight dtype");
  const double all_weights = plan.weight_bytes + also.weight_bytes;
  const double resident = all_weights <= device.hbm_bytes ? all_weights : every_step;
  const double kv_per_sequence = plan.kv_bytes_per_sequence + also.kv_bytes_per_sequence;
  plan.max_batch = kv_per_sequence > 0 ? static_cast<int64_t>(std::floor((device.hbm_bytes - resident) / kv_per_sequence)) : 0;
  plan.batch = batch;
  if (batch > plan.max_batch)
    throw CapacityError(std::to_string(batch) + " sequences need " + gib(kv_per_sequence * static_cast<double>(batch)) +
                        " of KV per device; only " + std::to_string(plan.max_batch) + " fit beside " + gib(resident) +
                        " of weights in " + gib(device.hbm_bytes) + " of HBM");
  const double kv = kv_per_sequence * static_cast<double>(batch);
  const double experts_in_hbm = std::clamp(device.hbm_bytes - kv - every_step, 0.0, plan.expert_bytes);
  const double spilled = plan.expert_bytes - experts_in_hbm;
  if (spilled > device.ddr_bytes)
    throw CapacityError("the routed experts spill " + gib(spilled) + " per device out of HBM, more than its " +
                        gib(device.ddr_bytes) + " of DDR");
  plan.expert_ddr_fraction = plan.expert_bytes > 0 ? spilled / plan.expert_bytes : 0;
  plan.hbm_bytes = kv + every_step + experts_in_hbm;
  plan.ddr_bytes = spilled;
  return plan;
}

}  // namespace snapstream::dataflow_sim
