// Builds the decode graph with graph/ (the same IR the engine runs), plans memory, prices it.
#include "dataflow_sim/simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dataflow_sim/errors.h"
#include "graph/errors.h"
#include "graph/passes.h"

namespace snapstream::dataflow_sim {
namespace {

graph::Graph decode_graph(const graph::ModelShape& model, int64_t capacity, int64_t batch, int32_t tp, bool looping) {
  graph::ModelShape shape = model;
  shape.kv_capacity = capacity;
  try {
    return graph::compile(shape, {graph::Phase::Decode, batch, 1}, {tp, looping});
  } catch (const graph::GraphError& e) {
    throw SimulationError(model.name + " cannot be built for " + std::to_string(tp) + " devices: " + e.what());
  }
}

// The largest batch whose kernels still place: a kernel's SRAM is its tiles, which do not
// depend on the batch, plus activations, which grow by the same bytes with every row.
int64_t sram_batch_limit(const graph::ModelShape& model, const SystemSpec& system, const graph::Graph& one, int64_t capacity, int32_t tp,
                         bool looping) {
  if (system.device.execution != ExecutionModel::FusedLayers) return std::numeric_limits<int64_t>::max();
  const StepPricer sizing(system, 0, false);
  const StepPrice p1 = sizing.price(one, capacity, capacity);
  const StepPrice p2 = sizing.price(decode_graph(model, capacity, 2, tp, looping), capacity, capacity);
  int64_t limit = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < p1.kernels.size() && i < p2.kernels.size(); ++i) {
    const double per_row = p2.kernels[i].sram_bytes - p1.kernels[i].sram_bytes;
    const double fixed = p1.kernels[i].sram_bytes - per_row;
    if (per_row > 0) limit = std::min(limit, static_cast<int64_t>(std::floor((system.device.sram_bytes() - fixed) / per_row)));
  }
  return limit;
}

}  // namespace

Deployment::Deployment(const graph::ModelShape& model, const SystemSpec& system, const SimulationOptions& options) {
  if (options.context < 1) throw SimulationError("the context must be at least one token");
  if (options.context > model.context_length)
    throw SimulationError("a context of " + std::to_string(options.context) + " exceeds " + model.name + "'s " +
                          std::to_string(model.context_length));
  if (options.kv_capacity < 0) throw SimulationError("the KV capacity cannot be negative");
  if (!options.max_batch && options.batch < 1) throw SimulationError("the batch must be at least one sequence");
  const int32_t tp = options.tp == 0 ? system.devices : options.tp;
  if (tp < 1 || tp > system.devices)
    throw SimulationError("tensor parallelism of " + std::to_string(tp) + " needs 1 to " + std::to_string(system.devices) +
                          " devices on " + system.name);
  SimulationResult& r = base_;
  r.model = model.name;
  r.system = system.name;
  r.context = options.context;
  r.kv_capacity = options.kv_capacity > 0 ? std::min(options.kv_capacity, options.context) : options.context;
  r.tp = tp;
  r.kernel_looping = options.kernel_looping;

  graph_ = decode_graph(model, r.kv_capacity, 1, tp, options.kernel_looping);
  const MemoryPlan fit = plan_device_memory(graph_, system.device, r.kv_capacity, 0);
  if (fit.max_batch < 1)
    throw CapacityError("not one sequence of " + std::to_string(r.kv_capacity) + " cached positions fits in " + system.name +
                        "'s HBM beside the weights");
  r.max_batch_memory = fit.max_batch;
  r.max_batch_sram = sram_batch_limit(model, system, graph_, r.kv_capacity, tp, options.kernel_looping);
  r.max_batch = std::max<int64_t>(0, std::min(r.max_batch_memory, r.max_batch_sram));
  // Not even one sequence places: pricing it says which kernel and op overflow, and by how much.
  if (options.max_batch && r.max_batch < 1) StepPricer(system).price(graph_, r.kv_capacity, r.kv_capacity);
  r.batch = options.max_batch ? r.max_batch : options.batch;
  plan_ = plan_device_memory(graph_, system.device, r.kv_capacity, r.batch);
  if (r.batch > 1) graph_ = decode_graph(model, r.kv_capacity, r.batch, tp, options.kernel_looping);

  // The whole model's cache per sequence: position-split latents add up over the devices;
  // KV heads are held once each, however many devices replicate them.
  const double holders = model.attention == graph::AttentionKind::Latent
                             ? static_cast<double>(tp)
                             : std::min<double>(tp, static_cast<double>(model.kv_heads));
  r.kv_bytes_per_sequence = plan_.kv_bytes_per_sequence * holders;
  r.kv_bytes_per_token = r.kv_bytes_per_sequence / static_cast<double>(r.kv_capacity);
  r.weight_bytes_per_socket = plan_.weight_bytes;
  r.hbm_bytes_per_socket = plan_.hbm_bytes;
  r.ddr_bytes_per_socket = plan_.ddr_bytes;
  r.expert_ddr_fraction = plan_.expert_ddr_fraction;
}

SimulationResult Deployment::price(const SystemSpec& system) const {
  SimulationResult r = base_;
  // The attended positions: the whole context, or the C slots SnapStream keeps.
  r.step = StepPricer(system, plan_.expert_ddr_fraction).price(graph_, r.kv_capacity, r.kv_capacity);
  r.step_seconds = r.step.seconds();
  r.tokens_per_s_per_user = 1.0 / r.step_seconds;
  r.tokens_per_s_aggregate = static_cast<double>(r.batch) / r.step_seconds;
  r.sram_bytes_per_socket = r.step.sram_bytes;
  r.flops_per_step = r.step.flops;
  r.flops_per_step_dense_accounting = r.step.dense_accounting_flops;
  r.hbm_read_bytes_per_step = r.step.hbm_bytes;
  r.ddr_read_bytes_per_step = r.step.ddr_bytes;
  r.pcu_utilisation = r.step.flops / (system.device.peak_flops * r.step_seconds);
  r.pmu_utilisation = system.device.sram_bytes() > 0 ? r.step.sram_bytes / system.device.sram_bytes() : 0;
  r.hbm_bandwidth_utilisation = r.step.hbm_bytes / (system.device.hbm_bytes_per_s * r.step_seconds);
  return r;
}

SimulationResult simulate(const graph::ModelShape& model, const SystemSpec& system, const SimulationOptions& options) {
  return Deployment(model, system, options).price(system);
}

}  // namespace snapstream::dataflow_sim
