// Pricing kernel calls. A dataflow socket runs a fused layer as one pipelined kernel: one
// call's synchronisation and pipeline fill, then compute and memory overlapped, then the
// collectives the layer ends with. Kernel looping makes a run of layers one call, so the sync
// and the fill (which includes the first weight loads) are paid once for the run. A GPU
// launches one kernel per op and pays the launch and synchronisation each time.
#include "dataflow_sim/step_pricer.h"

#include <algorithm>

#include "dataflow_sim/collectives.h"
#include "dataflow_sim/errors.h"
#include "dataflow_sim/op_cost.h"
#include "dataflow_sim/placement.h"

namespace snapstream::dataflow_sim {

void TimeBreakdown::add(const TimeBreakdown& o) {
  streaming += o.streaming;
  compute += o.compute;
  memory += o.memory;
  network += o.network;
  collective += o.collective;
  sync += o.sync;
  fill += o.fill;
}

StepPricer::StepPricer(const SystemSpec& system, double expert_ddr_fraction, bool enforce_sram, std::optional<ExpertLoad> experts)
    : system_(system), expert_ddr_fraction_(expert_ddr_fraction), enforce_sram_(enforce_sram), experts_(experts) {
  if (expert_ddr_fraction_ > 0 && system_.device.ddr_bytes_per_s <= 0)
    throw CapacityError("the weights spill out of HBM but '" + system_.device.name + "' has no DDR to hold them");
}

KernelPrice StepPricer::price_kernel(const graph::Graph& graph, const std::vector<const graph::Op*>& ops, int64_t iterations,
                                     const std::string& name, int64_t extent, int64_t capacity) const {
  const DeviceSpec& d = system_.device;
  const bool fused = d.execution == ExecutionModel::FusedLayers;
  KernelPrice k;
  k.name = name;
  k.iterations = iterations;
  std::vector<OpCost> costs;
  TimeBreakdown per_iteration;
  int64_t stages = 0, launches = 0;
  for (const graph::Op* op : ops) {
    const OpCost c = op_cost(graph, *op, d, extent, capacity, experts_ ? &*experts_ : nullptr);
    costs.push_back(c);
    k.flops += c.flops;
    k.dense_accounting_flops += c.dense_accounting_flops;
    const double hbm = c.weight_bytes + c.kv_bytes + c.expert_bytes * (1 - expert_ddr_fraction_) + (fused ? 0 : c.activation_bytes);
    const double ddr = c.expert_bytes * expert_ddr_fraction_;
    k.hbm_bytes += hbm;
    k.ddr_bytes += ddr;
    if (c.collective_parts > 0) {
      const CollectiveCost sent = collective_cost(op->kind, c.collective_payload, c.collective_parts, system_);
      per_iteration.collective += sent.seconds;
      k.link_bytes += sent.bytes_sent;
      launches += fused ? 0 : 1;
      continue;
    }
    ++stages;
    const double compute = c.flops / (d.peak_flops * d.compute_efficiency);
    const double memory = std::max(hbm / (d.hbm_bytes_per_s * d.hbm_efficiency),
                                   ddr > 0 ? ddr / (d.ddr_bytes_per_s * d.ddr_efficiency) : 0.0);
    per_iteration.compute += compute;
    per_iteration.memory += memory;
    if (!fused) {  // each op is a kernel of its own: nothing overlaps across ops
      per_iteration.streaming += std::max(compute, memory);
      ++launches;
    }
  }
  if (fused) {
    // Within the pipeline all ops stream at once: the kernel takes as long as its slower side.
    const double hbm_time = k.hbm_bytes / (d.hbm_bytes_per_s * d.hbm_efficiency);
    const double ddr_time = k.ddr_bytes > 0 ? k.ddr_bytes / (d.ddr_bytes_per_s * d.ddr_efficiency) : 0.0;
    per_iteration.memory = std::max(hbm_time, ddr_time);
    // Every op's inputs and outputs cross the mesh between the units that run them.
    double activations = 0;
    for (const OpCost& c : costs) activations += c.activation_bytes;
    per_iteration.network = d.on_chip_network_bytes_per_s > 0 ? activations / d.on_chip_network_bytes_per_s : 0.0;
    per_iteration.streaming = std::max({per_iteration.compute, per_iteration.memory, per_iteration.network});
    const Placement placed = place_kernel(graph, ops, costs, d, name, enforce_sram_);
    k.sram_bytes = placed.sram_bytes;
    k.pcus = placed.pcus;
    k.pmus = placed.pmus;
    k.calls = 1;
    k.time.sync = d.kernel_call_seconds;
    k.time.fill = static_cast<double>(stages) * d.stage_fill_seconds;
  } else {
    k.calls = launches * iterations;
    k.time.sync = static_cast<double>(k.calls) * d.kernel_call_seconds;
  }
  const double n = static_cast<double>(iterations);
  k.time.streaming = per_iteration.streaming * n;
  k.time.compute = per_iteration.compute * n;
  k.time.memory = per_iteration.memory * n;
  k.time.network = per_iteration.network * n;
  k.time.collective = per_iteration.collective * n;
  k.flops *= n;
  k.dense_accounting_flops *= n;
  k.hbm_bytes *= n;
  k.ddr_bytes *= n;
  k.link_bytes *= n;
  return k;
}

StepPrice StepPricer::price(const graph::Graph& graph, int64_t extent, int64_t capacity) const {
  StepPrice step;
  std::vector<const graph::Op*> outside;  // ops outside the layers, run as one kernel
  bool seen_layer = false;
  auto add = [&](KernelPrice k) {
    step.time.add(k.time);
    step.flops += k.flops;
    step.dense_accounting_flops += k.dense_accounting_flops;
    step.hbm_bytes += k.hbm_bytes;
    step.ddr_bytes += k.ddr_bytes;
    step.link_bytes += k.link_bytes;
    step.sram_bytes = std::max(step.sram_bytes, k.sram_bytes);
    step.kernel_calls += k.calls;
    step.kernels.push_back(std::move(k));
  };
  auto flush_outside = [&] {
    if (outside.empty()) return;
    add(price_kernel(graph, outside, 1, seen_layer ? "head" : "embed", extent, capacity));
    outside.clear();
  };
  for (const graph::Op& op : graph.ops) {
    if (op.kind != graph::OpKind::FusedLayer && op.kind != graph::OpKind::LoopedLayers) {
      if (op.shard == 0) outside.push_back(&op);
      continue;
    }
    flush_outside();
    seen_layer = true;
    // Shards are symmetric; shard 0 also runs the replicated norms and residual adds.
    std::vector<const graph::Op*> body;
    for (const graph::Op& inner : op.body)
      if (inner.shard == 0) body.push_back(&inner);
    if (op.kind == graph::OpKind::LoopedLayers) {
      const std::string name = "layers " + std::to_string(op.first_layer) + "-" +
                               std::to_string(op.first_layer + op.loop_count - 1) + " (looped)";
      add(price_kernel(graph, body, op.loop_count, name, extent, capacity));
    } else {
      add(price_kernel(graph, body, 1, "layer " + std::to_string(op.layer), extent, capacity));
    }
  }
  flush_outside();
  return step;
}

}  // namespace snapstream::dataflow_sim
