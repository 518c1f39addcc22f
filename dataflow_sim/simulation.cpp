// Builds the decode graph with graph/ (the same IR the engine runs), plans memory, prices it.
#include "dataflow_sim/simulation.h"

#include <algorithm>

#include "dataflow_sim/errors.h"
#include "graph/errors.h"
#include "graph/passes.h"

namespace snapstream::dataflow_sim {
namespace {

graph::Graph decode_graph(const ModelSpec& model, int64_t capacity, int64_t batch, int32_t tp, bool looping) {
  graph::DecoderShape shape = model.shape;
  shape.kv_capacity = capacity;
  try {
    return graph::compile(shape, {graph::Phase::Decode, batch, 1}, {tp, looping});
  } catch (const graph::GraphError& e) {
    throw SimulationError(model.name + " cannot be built for " + std::to_string(tp) + " devices: " + e.what());
  }
}

}  // namespace

SimulationResult simulate(const ModelSpec& model, const SystemSpec& system, const SimulationOptions& options) {
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
  SimulationResult r;
  r.model = model.name;
  r.system = system.name;
  r.context = options.context;
  r.kv_capacity = options.kv_capacity > 0 ? std::min(options.kv_capacity, options.context) : options.context;
  r.tp = tp;
  r.kernel_looping = options.kernel_looping;
  // The attended positions: the whole context, or the C slots SnapStream keeps.
  const int64_t extent = r.kv_capacity;

  const graph::Graph sizing = decode_graph(model, r.kv_capacity, 1, tp, options.kernel_looping);
  const MemoryPlan fit = plan_device_memory(sizing, system.device, r.kv_capacity, 0);
  if (fit.max_batch < 1)
    throw CapacityError("not one sequence of " + std::to_string(r.kv_capacity) + " cached positions fits in " + system.name +
                        "'s HBM beside the weights");
  r.batch = options.max_batch ? fit.max_batch : options.batch;
  const MemoryPlan plan = plan_device_memory(sizing, system.device, r.kv_capacity, r.batch);
  const graph::Graph graph = r.batch == 1 ? sizing : decode_graph(model, r.kv_capacity, r.batch, tp, options.kernel_looping);
  r.step = StepPricer(system, plan.expert_ddr_fraction).price(graph, extent, r.kv_capacity);

  r.max_batch = plan.max_batch;
  r.step_seconds = r.step.seconds();
  r.tokens_per_s_per_user = 1.0 / r.step_seconds;
  r.tokens_per_s_aggregate = static_cast<double>(r.batch) / r.step_seconds;
  r.kv_bytes_per_sequence = plan.kv_bytes_per_sequence * (model.shape.attention == graph::AttentionKind::Latent ? tp : 1);
  if (model.shape.attention == graph::AttentionKind::Grouped)
    r.kv_bytes_per_sequence = plan.kv_bytes_per_sequence * std::min<double>(tp, static_cast<double>(model.shape.kv_heads));
  r.kv_bytes_per_token = r.kv_bytes_per_sequence / static_cast<double>(r.kv_capacity);
  r.weight_bytes_per_socket = plan.weight_bytes;
  r.hbm_bytes_per_socket = plan.hbm_bytes;
  r.ddr_bytes_per_socket = plan.ddr_bytes;
  r.sram_bytes_per_socket = r.step.sram_bytes;
  r.expert_ddr_fraction = plan.expert_ddr_fraction;
  r.flops_per_step = r.step.flops;
  r.hbm_read_bytes_per_step = r.step.hbm_bytes;
  r.ddr_read_bytes_per_step = r.step.ddr_bytes;
  r.pcu_utilisation = r.step.flops / (system.device.peak_flops * r.step_seconds);
  r.pmu_utilisation = system.device.sram_bytes() > 0 ? r.step.sram_bytes / system.device.sram_bytes() : 0;
  r.hbm_bandwidth_utilisation = r.step.hbm_bytes / (system.device.hbm_bytes_per_s * r.step_seconds);
  return r;
}

}  // namespace snapstream::dataflow_sim
