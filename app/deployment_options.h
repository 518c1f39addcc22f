// The deployment choices `simulate` and `plan` share: speculative decoding, how latent
// attention is split, and how a mixture of experts is placed and routed.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "dataflow_sim/simulation.h"

namespace snapstream::app {

struct DeploymentArgs {
  std::string speculative;           // the draft model's config
  int64_t draft_tokens = 4;
  std::vector<double> acceptance;
  std::string attention_parallelism = "tensor";
  std::string expert_placement = "column";
  double router_skew = 0;
  int64_t replicated_experts = 0;
  uint64_t routing_seed = 1;
};

void add_deployment_options(CLI::App* cmd, DeploymentArgs& args);

// Sets the speculative draft, the attention split and the expert routing of `options`.
// Throws ConfigError when a draft is given without its acceptance.
void apply_deployment_options(const DeploymentArgs& args, dataflow_sim::SimulationOptions& options);

}  // namespace snapstream::app
