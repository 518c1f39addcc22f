// Sampled routings: each token picks its top-k distinct experts in proportion to their
// popularity; the largest loads of a sample (bytes and FLOPs) are averaged over the samples.
// A uniform router over column-split experts has a closed form (the expected distinct experts
// m tokens touch), used instead of sampling.
#include "dataflow_sim/expert_routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "dataflow_sim/errors.h"
#include "kernels/dtype.h"

namespace snapstream::dataflow_sim {
namespace {

// Experts by popularity: cumulative[r] sums the weights of ranks 0..r; expert_of_rank shuffles
// the ranks over the expert ids.
struct Popularity {
  std::vector<double> cumulative;
  std::vector<int64_t> expert_of_rank;
};

Popularity popularity(int64_t experts, double skew, std::mt19937_64& rng) {
  Popularity p;
  double total = 0;
  for (int64_t r = 0; r < experts; ++r) {
    total += 1.0 / std::pow(static_cast<double>(r + 1), skew);
    p.cumulative.push_back(total);
  }
  for (double& c : p.cumulative) c /= total;
  p.expert_of_rank.resize(static_cast<size_t>(experts));
  std::iota(p.expert_of_rank.begin(), p.expert_of_rank.end(), int64_t{0});
  std::shuffle(p.expert_of_rank.begin(), p.expert_of_rank.end(), rng);
  return p;
}

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Tokens per expert for one routing of `tokens` tokens, each to `top` distinct experts.
std::vector<int64_t> route(const Popularity& p, int64_t tokens, int64_t top, std::mt19937_64& rng) {
  const size_t experts = p.expert_of_rank.size();
  std::vector<int64_t> load(experts, 0);
  std::vector<size_t> picked;
  for (int64_t t = 0; t < tokens; ++t) {
    picked.clear();
    while (picked.size() < static_cast<size_t>(top)) {
      const auto at = std::upper_bound(p.cumulative.begin(), p.cumulative.end(), uniform01(rng));
      const size_t rank = std::min(static_cast<size_t>(at - p.cumulative.begin()), experts - 1);
      if (std::find(picked.begin(), picked.end(), rank) == picked.end()) picked.push_back(rank);
    }
    for (const size_t rank : picked) ++load[static_cast<size_t>(p.expert_of_rank[rank])];
  }
  return load;
}

struct DeviceLoad {
  double reads = 0, pairs = 0;
};

}  // namespace

const char* expert_placement_name(ExpertPlacement placement) {
  return placement == ExpertPlacement::ColumnSplit ? "column" : "expert";
}

ExpertPlacement parse_expert_placement(const std::string& name) {
  if (name == "column") return ExpertPlacement::ColumnSplit;
  if (name == "expert") return ExpertPlacement::ExpertParallel;
  throw SimulationError("an expert placement is 'column' (every device a slice of every expert) or 'expert' (whole experts per device), not '" +
                        name + "'");
}

double expert_weight_bytes(const graph::ModelShape& model, int64_t width) {
  return 2 * static_cast<double>(width) * static_cast<double>(kernels::row_bytes(model.weight_dtype, model.dim)) +
         static_cast<double>(model.dim) * static_cast<double>(kernels::row_bytes(model.weight_dtype, width));
}

void validate_expert_routing(const ExpertRouting& routing, const graph::ExpertShape& moe) {
  if (!std::isfinite(routing.router_skew) || routing.router_skew < 0)
    throw SimulationError("the router skew is a Zipf exponent: 0 (uniform) or more");
  if (routing.replicated_experts < 0 || routing.replicated_experts > moe.routed_experts)
    throw SimulationError("between 0 and " + std::to_string(moe.routed_experts) + " experts can be replicated, not " +
                          std::to_string(routing.replicated_experts));
  if (routing.replicated_experts > 0 && routing.placement != ExpertPlacement::ExpertParallel)
    throw SimulationError("replicated experts need expert parallelism: under the column split every device already holds every expert");
  if (routing.samples < 1) throw SimulationError("the routing needs at least one sample");
}

ExpertLoad busiest_device_load(const graph::ModelShape& model, int64_t tokens, int32_t devices, const ExpertRouting& routing,
                               const DeviceSpec& device) {
  const graph::ExpertShape& moe = model.moe;
  validate_expert_routing(routing, moe);
  const double experts = static_cast<double>(moe.routed_experts), top = static_cast<double>(moe.experts_per_token);
  const double parts = static_cast<double>(devices), m = static_cast<double>(tokens);
  ExpertLoad load;
  if (routing.placement == ExpertPlacement::ColumnSplit && routing.router_skew == 0) {
    load.experts_read = experts * (1 - std::pow(1 - top / experts, m)) / parts;
    load.token_experts = m * top / parts;
    load.experts_held = experts / parts;
    return load;
  }
  // Seconds one expert's weights and one token-expert pair take, to rank the devices by load.
  const double hidden = static_cast<double>(moe.expert_hidden_dim), dim = static_cast<double>(model.dim);
  const double read_seconds = expert_weight_bytes(model, moe.expert_hidden_dim) / (device.hbm_bytes_per_s * device.hbm_efficiency);
  const double pair_seconds = 6 * dim * hidden / (device.peak_flops * device.compute_efficiency);
  auto seconds = [&](const DeviceLoad& d) { return std::max(d.reads * read_seconds, d.pairs * pair_seconds); };

  std::mt19937_64 rng(routing.seed);
  const Popularity p = popularity(moe.routed_experts, routing.router_skew, rng);
  const bool parallel = routing.placement == ExpertPlacement::ExpertParallel;
  // Under expert parallelism the hottest ranks are replicated; the others go round the devices
  // in expert-id order.
  std::vector<bool> replicated(static_cast<size_t>(moe.routed_experts), false);
  for (int64_t r = 0; r < routing.replicated_experts; ++r) replicated[static_cast<size_t>(p.expert_of_rank[static_cast<size_t>(r)])] = true;
  std::vector<int32_t> owner(static_cast<size_t>(moe.routed_experts), 0);
  int32_t next = 0;
  for (size_t e = 0; e < owner.size(); ++e)
    if (!replicated[e]) owner[e] = next++ % devices;
  const double owned = std::ceil((experts - static_cast<double>(routing.replicated_experts)) / parts);
  load.whole_experts = parallel;
  load.experts_held = parallel ? owned + static_cast<double>(routing.replicated_experts) : experts / parts;

  for (int64_t s = 0; s < routing.samples; ++s) {
    const std::vector<int64_t> counts = route(p, tokens, moe.experts_per_token, rng);
    if (!parallel) {
      const double touched = static_cast<double>(std::count_if(counts.begin(), counts.end(), [](int64_t c) { return c > 0; }));
      load.experts_read += touched / parts;
      load.token_experts += m * top / parts;
      continue;
    }
    std::vector<DeviceLoad> loads(static_cast<size_t>(devices));
    std::vector<std::pair<int64_t, size_t>> shared;  // replicated experts' tokens, hottest first
    for (size_t e = 0; e < counts.size(); ++e) {
      if (counts[e] == 0) continue;
      if (replicated[e]) {
        shared.emplace_back(counts[e], e);
        continue;
      }
      DeviceLoad& d = loads[static_cast<size_t>(owner[e])];
      d.reads += 1;
      d.pairs += static_cast<double>(counts[e]);
    }
    // A replicated expert's tokens go to as many of the least loaded devices as can take one.
    std::sort(shared.rbegin(), shared.rend());
    std::vector<size_t> order(loads.size());
    for (const auto& [count, e] : shared) {
      std::iota(order.begin(), order.end(), size_t{0});
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return seconds(loads[a]) < seconds(loads[b]); });
      const int64_t servers = std::min<int64_t>(count, devices);
      for (int64_t i = 0; i < servers; ++i) {
        DeviceLoad& d = loads[order[static_cast<size_t>(i)]];
        d.reads += 1;
        d.pairs += static_cast<double>(count) / static_cast<double>(servers);
      }
    }
    double reads = 0, pairs = 0;
    for (const DeviceLoad& d : loads) {
      reads = std::max(reads, d.reads);
      pairs = std::max(pairs, d.pairs);
    }
    load.experts_read += reads;
    load.token_experts += pairs;
  }
  const double n = static_cast<double>(routing.samples);
  load.experts_read /= n;
  load.token_experts /= n;
  return load;
}

}  // namespace snapstream::dataflow_sim
