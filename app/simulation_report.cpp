// Formatting of simulation results; the JSON keys are the contract scripts rely on.
#include "app/simulation_report.h"

#include <fmt/format.h>

namespace snapstream::app {
namespace {

using dataflow_sim::SimulationResult;
using dataflow_sim::TimeBreakdown;

nlohmann::json breakdown_json(const TimeBreakdown& t) {
  return {{"streaming", t.streaming}, {"compute", t.compute}, {"memory", t.memory}, {"network", t.network},
          {"collective", t.collective}, {"sync", t.sync},       {"fill", t.fill}};
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }
std::string mib(double bytes) { return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0)); }
std::string us(double seconds) { return fmt::format("{:.1f} us", seconds * 1e6); }

nlohmann::json speculative_json(const SimulationResult& r) {
  if (r.draft_tokens == 0) return nullptr;
  return {{"draft_model", r.draft_model},
          {"draft_tokens", r.draft_tokens},
          {"tokens_per_round", r.tokens_per_round},
          {"draft_step_seconds", r.draft_step_seconds},
          {"verify_step_seconds", r.verify_step_seconds}};
}

nlohmann::json experts_json(const SimulationResult& r) {
  if (r.expert_placement.empty()) return nullptr;
  return {{"placement", r.expert_placement},
          {"router_skew", r.router_skew},
          {"replicated_experts", r.replicated_experts},
          {"busiest_experts_read_per_layer", r.busiest_experts_read},
          {"busiest_token_experts_per_layer", r.busiest_token_experts}};
}

}  // namespace

nlohmann::json simulation_json(const SimulationResult& r) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : r.step.kernels)
    kernels.push_back({{"name", k.name},           {"calls", k.calls},         {"iterations", k.iterations},
                       {"seconds", k.time.total()}, {"breakdown", breakdown_json(k.time)},
                       {"flops", k.flops},         {"hbm_bytes", k.hbm_bytes}, {"ddr_bytes", k.ddr_bytes},
                       {"link_bytes", k.link_bytes}, {"sram_bytes", k.sram_bytes}, {"pcus", k.pcus}, {"pmus", k.pmus}});
  return {{"model", r.model},
          {"system", r.system},
          {"context", r.context},
          {"kv_capacity", r.kv_capacity},
          {"tp", r.tp},
          {"attention_parallelism", r.attention_split},
          {"kernel_looping", r.kernel_looping},
          {"batch", r.batch},
          {"max_batch", r.max_batch},
          {"max_batch_memory", r.max_batch_memory},
          {"max_batch_sram", r.max_batch_sram},
          {"step_seconds", r.step_seconds},
          {"tokens_per_s_per_user", r.tokens_per_s_per_user},
          {"tokens_per_s_aggregate", r.tokens_per_s_aggregate},
          {"kv_bytes_per_sequence", r.kv_bytes_per_sequence},
          {"kv_bytes_per_token", r.kv_bytes_per_token},
          {"weight_bytes_per_socket", r.weight_bytes_per_socket},
          {"hbm_bytes_per_socket", r.hbm_bytes_per_socket},
          {"ddr_bytes_per_socket", r.ddr_bytes_per_socket},
          {"sram_bytes_per_socket", r.sram_bytes_per_socket},
          {"expert_ddr_fraction", r.expert_ddr_fraction},
          {"flops_per_step", r.flops_per_step},
          {"flops_per_step_dense_accounting", r.flops_per_step_dense_accounting},
          {"hbm_read_bytes_per_step", r.hbm_read_bytes_per_step},
          {"ddr_read_bytes_per_step", r.ddr_read_bytes_per_step},
          {"kernel_calls", r.step.kernel_calls},
          {"pcu_utilisation", r.pcu_utilisation},
          {"pmu_utilisation", r.pmu_utilisation},
          {"hbm_bandwidth_utilisation", r.hbm_bandwidth_utilisation},
          {"breakdown", breakdown_json(r.step.time)},
          {"speculative", speculative_json(r)},
          {"experts", experts_json(r)},
          {"kernels", kernels}};
}

std::string simulation_table(const SimulationResult& r) {
  std::string out = fmt::format("{} on {} (TP {}{}), context {}, cache {} positions ({}), kernel looping {}\n", r.model, r.system,
                                r.tp, r.attention_split == "data" ? ", data-parallel attention" : "", r.context, r.kv_capacity, r.kv_capacity == r.context ? "full" : "SnapStream",
                                r.kernel_looping ? "on" : "off");
  out += fmt::format("  batch {} (max {}: {} fit HBM, {} fit SRAM): {} {}, {:.1f} tokens/s per user, {:.1f} tokens/s in all\n", r.batch,
                     r.max_batch, r.max_batch_memory, r.max_batch_sram, r.draft_tokens > 0 ? "round" : "step", us(r.step_seconds),
                     r.tokens_per_s_per_user, r.tokens_per_s_aggregate);
  if (r.draft_tokens > 0)
    out += fmt::format("  speculative: {} drafts {} tokens a round ({} each), verify step {}; {:.2f} tokens per round expected\n",
                       r.draft_model, r.draft_tokens, us(r.draft_step_seconds), us(r.verify_step_seconds), r.tokens_per_round);
  if (!r.expert_placement.empty())
    out += fmt::format("  experts: {} placement, router skew {:g}, {} replicated; the busiest socket reads {:.2f} experts' weights and "
                       "computes {:.1f} token-expert pairs per MoE layer\n",
                       r.expert_placement == "column" ? "column-split" : "expert-parallel", r.router_skew, r.replicated_experts,
                       r.busiest_experts_read, r.busiest_token_experts);
  const TimeBreakdown& t = r.step.time;
  out += fmt::format("  {}time: streaming {} (compute {}, memory {}, on-chip network {}), collectives {}, sync {} over {} kernel calls, fill {}\n",
                     r.draft_tokens > 0 ? "verify " : "", us(t.streaming), us(t.compute), us(t.memory), us(t.network), us(t.collective), us(t.sync), r.step.kernel_calls,
                     us(t.fill));
  out += fmt::format("  per socket: weights {}, HBM held {}, DDR held {}, SRAM placed {} ({:.0f}% of PMUs)\n",
                     gib(r.weight_bytes_per_socket), gib(r.hbm_bytes_per_socket), gib(r.ddr_bytes_per_socket),
                     mib(r.sram_bytes_per_socket), 100 * r.pmu_utilisation);
  out += fmt::format("  KV: {} per sequence, {:.1f} KiB per token; per step per socket: {:.2f} GFLOP executed ({:.2f} as "
                     "published tables count), HBM read {}, DDR read {}\n",
                     gib(r.kv_bytes_per_sequence), r.kv_bytes_per_token / 1024, r.flops_per_step / 1e9,
                     r.flops_per_step_dense_accounting / 1e9,
                     gib(r.hbm_read_bytes_per_step), gib(r.ddr_read_bytes_per_step));
  out += fmt::format("  utilisation: PCU {:.1f}%, HBM bandwidth {:.1f}%\n", 100 * r.pcu_utilisation,
                     100 * r.hbm_bandwidth_utilisation);
  out += "  kernels:\n";
  for (const auto& k : r.step.kernels)
    out += fmt::format("    {:<26} {:>10}  calls {:>4}  iterations {:>3}  SRAM {:>10}  PCUs {:>4}  PMUs {:>4}\n", k.name,
                       us(k.time.total()), k.calls, k.iterations, mib(k.sram_bytes), k.pcus, k.pmus);
  return out;
}

std::string simulation_csv_header() {
  return "model,system,tp,context,kv_capacity,kernel_looping,batch,max_batch,step_seconds,tokens_per_s_per_user,"
         "tokens_per_s_aggregate,kv_bytes_per_sequence,weight_bytes_per_socket,hbm_bytes_per_socket,ddr_bytes_per_socket,"
         "sram_bytes_per_socket,draft_model,draft_tokens,tokens_per_round,expert_placement,router_skew,replicated_experts\n";
}

std::string simulation_csv_row(const SimulationResult& r) {
  return fmt::format("{},{},{},{},{},{},{},{},{:.9g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{},{:.6g},{},{:g},{}\n", r.model,
                     r.system, r.tp, r.context, r.kv_capacity, r.kernel_looping ? 1 : 0, r.batch, r.max_batch, r.step_seconds,
                     r.tokens_per_s_per_user, r.tokens_per_s_aggregate, r.kv_bytes_per_sequence, r.weight_bytes_per_socket,
                     r.hbm_bytes_per_socket, r.ddr_bytes_per_socket, r.sram_bytes_per_socket, r.draft_model, r.draft_tokens,
                     r.tokens_per_round, r.expert_placement, r.router_skew, r.replicated_experts);
}

}  // namespace snapstream::app
