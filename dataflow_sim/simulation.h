// One question an architect asks: this model, on this system, at this context and batch, with
// this cache — how fast is a decode step, and how much memory does it hold?
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dataflow_sim/expert_routing.h"
#include "dataflow_sim/hardware_spec.h"
#include "dataflow_sim/memory_plan.h"
#include "dataflow_sim/speculative.h"
#include "dataflow_sim/step_pricer.h"
#include "graph/ir.h"
#include "graph/passes.h"
#include "graph/model_shape.h"

namespace snapstream::dataflow_sim {

struct SimulationOptions {
  int64_t context = 0;         // tokens in each sequence when the step runs
  int64_t batch = 1;           // sequences decoding together; ignored with max_batch
  bool max_batch = false;      // use the largest batch that fits
  int64_t kv_capacity = 0;     // SnapStream's C; 0 keeps the full cache (capacity = context)
  bool kernel_looping = true;
  int32_t tp = 0;              // tensor-parallel devices; 0 uses every device of the system
  // Latent attention split by heads and cached positions, or by sequences (data parallel).
  graph::AttentionSplit attention_split = graph::AttentionSplit::Heads;
  // A draft model proposing tokens the target verifies; its cache has the target's capacity
  // and it runs on the same devices with the same tensor parallelism.
  std::optional<SpeculativeSpec> speculative;
  // A mixture of experts' placement and router (ignored for dense models).
  ExpertRouting experts;
};

struct SimulationResult {
  std::string model;
  std::string system;
  int64_t context = 0;
  int64_t kv_capacity = 0;     // positions each sequence's cache holds
  int32_t tp = 1;
  bool kernel_looping = true;
  int64_t batch = 0;
  int64_t max_batch = 0;               // the smaller of the two limits below
  int64_t max_batch_memory = 0;        // sequences whose KV fits HBM beside the weights
  int64_t max_batch_sram = 0;          // rows whose activations still fit each kernel's SRAM
  double step_seconds = 0;             // one decode step; with speculation, one round
  double tokens_per_s_per_user = 0;
  double tokens_per_s_aggregate = 0;
  double kv_bytes_per_sequence = 0;    // the whole model's, over all devices
  double kv_bytes_per_token = 0;       // per cached token, over all devices
  double weight_bytes_per_socket = 0;
  double hbm_bytes_per_socket = 0;
  double ddr_bytes_per_socket = 0;
  double sram_bytes_per_socket = 0;    // the largest kernel's placed buffers
  double expert_ddr_fraction = 0;
  double flops_per_step = 0;           // per device, executed
  double flops_per_step_dense_accounting = 0;  // per device, as published per-token tables count
  double hbm_read_bytes_per_step = 0;  // per device
  double ddr_read_bytes_per_step = 0;
  double pcu_utilisation = 0;          // achieved FLOPs over peak, during the step
  double pmu_utilisation = 0;          // SRAM placed over SRAM present
  double hbm_bandwidth_utilisation = 0;
  // Speculative decoding (draft_tokens 0 when off): a round is draft_tokens draft steps and one
  // verify step of the target over draft_tokens + 1 positions per sequence.
  std::string draft_model;
  int64_t draft_tokens = 0;
  double tokens_per_round = 1;
  double draft_step_seconds = 0;
  double verify_step_seconds = 0;
  // A mixture of experts (expert_placement empty for dense models): the busiest device's
  // share per MoE layer, in whole experts' weights read and token-expert pairs computed.
  std::string attention_split;         // "tensor" (heads, latent positions) or "data" (sequences)
  std::string expert_placement;
  double router_skew = 0;
  int64_t replicated_experts = 0;
  double busiest_experts_read = 0;
  double busiest_token_experts = 0;
  StepPrice step;                      // the target's step: the verify step with speculation
};

// A model deployed on a system: its decode graph built and its memory planned once, priced
// as often as wanted (calibration re-prices it under other calibrated values).
class Deployment {
 public:
  // Throws SimulationError (and its kinds) for a deployment that cannot be built or fit.
  Deployment(const graph::ModelShape& model, const SystemSpec& system, const SimulationOptions& options);

  // `system` must be the one the deployment was planned on, or a copy with other calibrated
  // values. `acceptance`, with speculation, replaces the draft's acceptance by one rate for
  // every position (calibration fits it). Throws PlacementError when a kernel does not fit SRAM.
  SimulationResult price(const SystemSpec& system, std::optional<double> acceptance = std::nullopt) const;

  // Seconds to prefill one sequence's whole context in chunks of `chunk` positions, each
  // attending the chunks before it (the prompt's cache is whole until SnapKV compacts it):
  // the time to its first token on an otherwise idle deployment.
  double prefill_seconds(const SystemSpec& system, int64_t chunk) const;

 private:
  SimulationResult base_;
  MemoryPlan plan_;
  graph::Graph graph_;                 // the target's decode step, or its verify step
  std::optional<graph::Graph> draft_;  // the draft's decode step
  std::optional<SpeculativeSpec> speculative_;
  std::optional<ExpertLoad> experts_;        // the target's routed-expert load at the batch
  std::optional<ExpertLoad> draft_experts_;  // the draft's, when it has experts
  graph::ModelShape model_;
  graph::CompileOptions compile_;
  ExpertRouting routing_;
};

SimulationResult simulate(const graph::ModelShape& model, const SystemSpec& system, const SimulationOptions& options);

}  // namespace snapstream::dataflow_sim
