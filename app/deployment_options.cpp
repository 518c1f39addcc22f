// Registration and application of the shared deployment options.
#include "app/deployment_options.h"

#include "app/config_files.h"
#include "runtime/errors.h"

namespace snapstream::app {

void add_deployment_options(CLI::App* cmd, DeploymentArgs& args) {
  auto* draft = cmd->add_option("--speculative", args.speculative,
                                 "speculative decoding with this draft model config (a name under configs/models or a file)");
  cmd->add_option("--draft-tokens", args.draft_tokens, "tokens the draft proposes per round, k")
      ->check(CLI::PositiveNumber)->needs(draft)->capture_default_str();
  cmd->add_option("--acceptance", args.acceptance,
                  "the chance a draft token is accepted once the earlier ones were: one value, or k comma-separated (one per position)")
      ->delimiter(',')->needs(draft);
  cmd->add_option("--attention-parallelism", args.attention_parallelism,
                  "latent attention: 'tensor' (heads split, cached positions split) or 'data' (sequences split, whole caches and "
                  "attention weights per socket)")
      ->check(CLI::IsMember({"tensor", "data"}))->capture_default_str();
  cmd->add_option("--expert-placement", args.expert_placement,
                  "mixture of experts: 'column' (every socket a column slice of every expert) or 'expert' (whole experts per socket)")
      ->check(CLI::IsMember({"column", "expert"}))->capture_default_str();
  cmd->add_option("--router-skew", args.router_skew, "Zipf exponent of expert popularity: 0 is a uniform router")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--replicated-experts", args.replicated_experts, "with --expert-placement expert: the most popular experts every socket holds")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--routing-seed", args.routing_seed, "seed of the sampled routings and of which experts are popular")->capture_default_str();
}

void apply_deployment_options(const DeploymentArgs& a, dataflow_sim::SimulationOptions& o) {
  if (!a.speculative.empty()) {
    if (a.acceptance.empty()) throw runtime::ConfigError("--speculative needs --acceptance: the chance each draft token is accepted");
    o.speculative = dataflow_sim::SpeculativeSpec{load_model_config(a.speculative), a.draft_tokens, a.acceptance};
  }
  o.attention_split = a.attention_parallelism == "data" ? graph::AttentionSplit::Sequences : graph::AttentionSplit::Heads;
  o.experts.placement = dataflow_sim::parse_expert_placement(a.expert_placement);
  o.experts.router_skew = a.router_skew;
  o.experts.replicated_experts = a.replicated_experts;
  o.experts.seed = a.routing_seed;
}

}  // namespace snapstream::app
