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

graph::Graph step_graph(const graph::ModelShape& model, int64_t capacity, const graph::GraphKey& key, const graph::CompileOptions& compile) {
  graph::ModelShape shape = model;
  shape.kv_capacity = capacity;
  try {
    return graph::compile(shape, key, compile);
  } catch (const graph::GraphError& e) {
    throw SimulationError(model.name + " cannot be built for " + std::to_string(compile.shards) + " devices: " + e.what());
  }
}

// How a model's graphs are compiled: data-parallel attention applies to latent attention only,
// so a draft with grouped attention keeps the heads split.
graph::CompileOptions compile_options(const graph::ModelShape& model, int32_t tp, const SimulationOptions& options) {
  const bool by_sequence = options.attention_split == graph::AttentionSplit::Sequences && model.attention == graph::AttentionKind::Latent;
  return {tp, options.kernel_looping, by_sequence ? graph::AttentionSplit::Sequences : graph::AttentionSplit::Heads};
}

// The target's step: one decode position per sequence, or with speculation the k+1 positions a
// verify step checks.
graph::GraphKey target_key(const SimulationOptions& options, int64_t batch) {
  if (!options.speculative) return {graph::Phase::Decode, batch, 1};
  return {graph::Phase::Verify, batch, options.speculative->draft_tokens + 1};
}

// The largest batch whose kernels still place: a kernel's SRAM is its tiles, which do not
// depend on the batch, plus activations, which grow by the same bytes with every sequence.
// `one` and `two` are the same step at batch 1 and 2.
int64_t sram_batch_limit(const SystemSpec& system, const graph::Graph& one, const graph::Graph& two, int64_t capacity,
                         const std::optional<ExpertLoad>& experts) {
  if (system.device.execution != ExecutionModel::FusedLayers) return std::numeric_limits<int64_t>::max();
  const StepPricer sizing(system, 0, false, experts);
  const StepPrice p1 = sizing.price(one, capacity, capacity);
  const StepPrice p2 = sizing.price(two, capacity, capacity);
  int64_t limit = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < p1.kernels.size() && i < p2.kernels.size(); ++i) {
    const double per_row = p2.kernels[i].sram_bytes - p1.kernels[i].sram_bytes;
    const double fixed = p1.kernels[i].sram_bytes - per_row;
    if (per_row > 0) limit = std::min(limit, static_cast<int64_t>(std::floor((system.device.sram_bytes() - fixed) / per_row)));
  }
  return limit;
}

// The routed-expert load of a step of `tokens` new positions, or none for a dense model.
std::optional<ExpertLoad> expert_load(const graph::ModelShape& model, int64_t tokens, int32_t tp, const SimulationOptions& options,
                                      const SystemSpec& system) {
  if (!model.moe.enabled()) return std::nullopt;
  return busiest_device_load(model, tokens, tp, options.experts, system.device);
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

  const int64_t capacity = r.kv_capacity;
  if (options.speculative) validate_speculative(*options.speculative, model);
  if (model.moe.enabled()) {
    validate_expert_routing(options.experts, model.moe);
    r.expert_placement = expert_placement_name(options.experts.placement);
    r.router_skew = options.experts.router_skew;
    r.replicated_experts = options.experts.replicated_experts;
  }
  // New positions per sequence in the target's step, and the experts they load (at batch 1
  // for sizing: what a device holds does not depend on the batch).
  const int64_t length = options.speculative ? options.speculative->draft_tokens + 1 : 1;
  experts_ = expert_load(model, length, tp, options, system);
  if (options.attention_split == graph::AttentionSplit::Sequences && model.attention != graph::AttentionKind::Latent)
    throw SimulationError("data-parallel attention is priced for latent attention (DeepSeek) only; " + model.name +
                          " splits its attention heads");
  r.attention_split = options.attention_split == graph::AttentionSplit::Sequences ? "data" : "tensor";
  const graph::CompileOptions target_compile = compile_options(model, tp, options);
  model_ = model;
  compile_ = target_compile;
  routing_ = options.experts;
  auto target_step = [&](int64_t batch) { return step_graph(model, capacity, target_key(options, batch), target_compile); };
  graph_ = target_step(1);
  Coresident draft_memory;
  if (options.speculative) {
    const SpeculativeSpec& spec = *options.speculative;
    speculative_ = spec;
    r.draft_model = spec.draft.name;
    r.draft_tokens = spec.draft_tokens;
    r.tokens_per_round = expected_tokens_per_round(spec);
    draft_ = step_graph(spec.draft, capacity, {graph::Phase::Decode, 1, 1}, compile_options(spec.draft, tp, options));
    draft_experts_ = expert_load(spec.draft, 1, tp, options, system);
    const MemoryPlan draft_plan = plan_device_memory(*draft_, system.device, capacity, 0, {}, draft_experts_ ? &*draft_experts_ : nullptr);
    draft_memory = {draft_plan.weight_bytes, draft_plan.kv_bytes_per_sequence};
  }
  // The decode graph sizes memory: weights and KV per sequence are the same in every step.
  const graph::Graph sizing = step_graph(model, capacity, {graph::Phase::Decode, 1, 1}, target_compile);
  const ExpertLoad* held = experts_ ? &*experts_ : nullptr;
  const MemoryPlan fit = plan_device_memory(sizing, system.device, capacity, 0, draft_memory, held);
  if (fit.max_batch < 1)
    throw CapacityError("not one sequence of " + std::to_string(capacity) + " cached positions fits in " + system.name +
                        "'s HBM beside the weights");
  r.max_batch_memory = fit.max_batch;
  // Split by sequence, a device holds whole caches of ceil(batch / tp) sequences; the plan
  // counts a tp-th of a cache per sequence, so whole caches come in multiples of tp.
  if (target_compile.attention_split == graph::AttentionSplit::Sequences) {
    r.max_batch_memory -= r.max_batch_memory % tp;
    if (!options.max_batch && options.batch > r.max_batch_memory)
      throw CapacityError(std::to_string(options.batch) + " sequences split over " + std::to_string(tp) + " devices need whole caches of " +
                          std::to_string((options.batch + tp - 1) / tp) + " sequences per device; only " +
                          std::to_string(r.max_batch_memory / tp) + " fit beside the weights");
  }
  r.max_batch_sram = sram_batch_limit(system, graph_, target_step(2), capacity, experts_);
  if (draft_) {
    const graph::Graph draft_two =
        step_graph(options.speculative->draft, capacity, {graph::Phase::Decode, 2, 1}, compile_options(options.speculative->draft, tp, options));
    r.max_batch_sram = std::min(r.max_batch_sram, sram_batch_limit(system, *draft_, draft_two, capacity, draft_experts_));
  }
  r.max_batch = std::max<int64_t>(0, std::min(r.max_batch_memory, r.max_batch_sram));
  // Not even one sequence places: pricing it says which kernel and op overflow, and by how much.
  if (options.max_batch && r.max_batch < 1) {
    StepPricer(system, 0, true, experts_).price(graph_, capacity, capacity);
    if (draft_) StepPricer(system, 0, true, draft_experts_).price(*draft_, capacity, capacity);
  }
  r.batch = options.max_batch ? r.max_batch : options.batch;
  plan_ = plan_device_memory(sizing, system.device, capacity, r.batch, draft_memory, held);
  if (r.batch > 1) {
    graph_ = target_step(r.batch);
    experts_ = expert_load(model, r.batch * length, tp, options, system);
    if (draft_) {
      draft_ = step_graph(options.speculative->draft, capacity, {graph::Phase::Decode, r.batch, 1},
                          compile_options(options.speculative->draft, tp, options));
      draft_experts_ = expert_load(options.speculative->draft, r.batch, tp, options, system);
    }
  }
  if (experts_) {
    r.busiest_experts_read = experts_->experts_read;
    r.busiest_token_experts = experts_->token_experts;
  }

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

SimulationResult Deployment::price(const SystemSpec& system, std::optional<double> acceptance) const {
  SimulationResult r = base_;
  if (speculative_ && acceptance) {
    SpeculativeSpec spec = *speculative_;
    spec.acceptance = {*acceptance};
    validate_acceptance(spec);
    r.tokens_per_round = expected_tokens_per_round(spec);
  }
  // The attended positions: the whole context, or the C slots SnapStream keeps.
  r.step = StepPricer(system, plan_.expert_ddr_fraction, true, experts_).price(graph_, r.kv_capacity, r.kv_capacity);
  double seconds = r.step.seconds(), flops = r.step.flops, dense_flops = r.step.dense_accounting_flops;
  double hbm_bytes = r.step.hbm_bytes, ddr_bytes = r.step.ddr_bytes, sram_bytes = r.step.sram_bytes;
  if (draft_) {
    // The draft's weights are all in HBM (Coresident), so none of its experts stream from DDR.
    const StepPrice draft = StepPricer(system, 0, true, draft_experts_).price(*draft_, r.kv_capacity, r.kv_capacity);
    const double k = static_cast<double>(r.draft_tokens);
    r.draft_step_seconds = draft.seconds();
    r.verify_step_seconds = r.step.seconds();
    seconds += k * draft.seconds();
    flops += k * draft.flops;
    dense_flops += k * draft.dense_accounting_flops;
    hbm_bytes += k * draft.hbm_bytes;
    ddr_bytes += k * draft.ddr_bytes;
    sram_bytes = std::max(sram_bytes, draft.sram_bytes);
  }
  r.step_seconds = seconds;
  r.tokens_per_s_per_user = r.tokens_per_round / seconds;
  r.tokens_per_s_aggregate = static_cast<double>(r.batch) * r.tokens_per_round / seconds;
  r.sram_bytes_per_socket = sram_bytes;
  r.flops_per_step = flops;
  r.flops_per_step_dense_accounting = dense_flops;
  r.hbm_read_bytes_per_step = hbm_bytes;
  r.ddr_read_bytes_per_step = ddr_bytes;
  r.pcu_utilisation = flops / (system.device.peak_flops * seconds);
  r.pmu_utilisation = system.device.sram_bytes() > 0 ? sram_bytes / system.device.sram_bytes() : 0;
  r.hbm_bandwidth_utilisation = hbm_bytes / (system.device.hbm_bytes_per_s * seconds);
  return r;
}

double Deployment::prefill_seconds(const SystemSpec& system, int64_t chunk) const {
  if (chunk < 1) throw SimulationError("a prefill chunk holds at least one position");
  const int64_t context = base_.context;
  double seconds = 0;
  std::optional<graph::Graph> graph;
  std::optional<ExpertLoad> experts;
  for (int64_t start = 0; start < context; start += chunk) {
    const int64_t length = std::min(chunk, context - start);
    if (!graph || graph->key.length != length) {
      graph = step_graph(model_, context, {graph::Phase::Prefill, 1, length}, compile_);
      if (model_.moe.enabled()) experts = busiest_device_load(model_, length, compile_.shards, routing_, system.device);
    }
    seconds += StepPricer(system, plan_.expert_ddr_fraction, true, experts).price(*graph, start, context).seconds();
  }
  return seconds;
}

SimulationResult simulate(const graph::ModelShape& model, const SystemSpec& system, const SimulationOptions& options) {
  return Deployment(model, system, options).price(system);
}

}  // namespace snapstream::dataflow_sim
