// The plan search: every (system, tp, capacity) deployment is built once at its largest batch,
// then priced at each batch of the space; a point's replicas and sockets follow from the load.
#include "dataflow_sim/planner.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "dataflow_sim/errors.h"

namespace snapstream::dataflow_sim {
namespace {

std::vector<int32_t> tp_degrees(const PlanSpace& space, const SystemSpec& system) {
  std::vector<int32_t> degrees;
  if (space.tp.empty()) {
    for (int32_t tp = 1; tp <= system.devices; tp *= 2) degrees.push_back(tp);
  } else {
    for (const int32_t tp : space.tp)
      if (tp >= 1 && tp <= system.devices) degrees.push_back(tp);
  }
  return degrees;
}

std::vector<int64_t> batch_sizes(const PlanSpace& space, int64_t largest, int64_t concurrency) {
  std::vector<int64_t> batches;
  if (space.batches.empty()) {
    for (int64_t b = 1; b < largest; b *= 2) batches.push_back(b);
    batches.push_back(largest);
    // The load's own concurrency is a batch worth trying: one replica running exactly full.
    if (concurrency > 0 && concurrency < largest) batches.push_back(concurrency);
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  } else {
    for (const int64_t b : space.batches)
      if (b >= 1 && b <= largest) batches.push_back(b);
  }
  return batches;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// What a step at this price spends most of its time on.
std::string dominant_cost(const SimulationResult& r, const SystemSpec& system) {
  const TimeBreakdown& t = r.step.time;
  const DeviceSpec& d = system.device;
  const double ddr = d.ddr_bytes_per_s > 0 ? r.ddr_read_bytes_per_step / (d.ddr_bytes_per_s * d.ddr_efficiency) : 0;
  const std::vector<std::pair<double, std::string>> causes = {
      {t.memory - ddr, "HBM bandwidth"}, {ddr, "DDR bandwidth"}, {t.compute, "compute"},
      {t.collective, "collectives"},     {t.sync + t.fill, "kernel calls"}};
  return std::max_element(causes.begin(), causes.end())->second;
}

void validate(const graph::ModelShape& model, const PlanSpace& space, const PlanTraffic& traffic, const PlanObjectives& objectives) {
  if (space.systems.empty()) throw SimulationError("a plan needs at least one system to search");
  if (traffic.context < 1 || traffic.context > model.context_length)
    throw SimulationError("the context must be 1 to " + std::to_string(model.context_length) + " tokens for " + model.name);
  if (traffic.concurrency < 0 || !(traffic.request_rate >= 0) || !std::isfinite(traffic.request_rate))
    throw SimulationError("the concurrency and the request rate cannot be negative");
  if (traffic.concurrency > 0 && traffic.request_rate > 0) throw SimulationError("give a concurrency or a request rate, not both");
  if (traffic.request_rate > 0 && traffic.output_tokens < 1)
    throw SimulationError("a request rate needs the tokens each request generates (--output-tokens)");
  if (!(objectives.min_tokens_per_user >= 0) || !(objectives.max_ttft_seconds > 0))
    throw SimulationError("the objectives are a speed per user of 0 or more and a time to first token above 0");
  if (space.prefill_chunk < 1) throw SimulationError("the prefill chunk holds at least one position");
}

// Marks the points no other point beats both per user and per socket.
void mark_frontier(std::vector<PlanPoint>& points) {
  for (PlanPoint& p : points) {
    p.frontier = std::none_of(points.begin(), points.end(), [&](const PlanPoint& q) {
      return q.tokens_per_s_per_user >= p.tokens_per_s_per_user && q.tokens_per_s_per_socket >= p.tokens_per_s_per_socket &&
             (q.tokens_per_s_per_user > p.tokens_per_s_per_user || q.tokens_per_s_per_socket > p.tokens_per_s_per_socket);
    });
  }
}

}  // namespace

PlanResult plan_deployments(const graph::ModelShape& model, const PlanSpace& space, const PlanTraffic& traffic,
                            const PlanObjectives& objectives) {
  validate(model, space, traffic, objectives);
  PlanResult result;
  const std::vector<int64_t> capacities = space.capacities.empty() ? std::vector<int64_t>{0} : space.capacities;
  std::vector<graph::AttentionSplit> splits = space.attention_splits;
  if (splits.empty()) {
    splits.push_back(graph::AttentionSplit::Heads);
    if (model.attention == graph::AttentionKind::Latent) splits.push_back(graph::AttentionSplit::Sequences);
  }
  std::vector<std::pair<int64_t, graph::AttentionSplit>> deployments;
  for (const int64_t capacity : capacities)
    for (const graph::AttentionSplit split : splits) deployments.emplace_back(capacity, split);
  // The cheapest meeting point of each deployment, with what is needed to say what binds it:
  // the next larger batch priced, and the deployment at its largest batch.
  struct Candidate {
    size_t point = 0;
    std::optional<size_t> next_point;
    SimulationResult next;
    SimulationResult at_largest;
    const SystemSpec* system = nullptr;
  };
  std::vector<Candidate> candidates;
  for (const SystemSpec& system : space.systems) {
    for (const int32_t tp : tp_degrees(space, system)) {
      for (const auto& [requested, split] : deployments) {
        SimulationOptions options = space.base;
        options.attention_split = split;
        options.context = traffic.context;
        options.kv_capacity = requested >= traffic.context ? 0 : requested;
        options.tp = tp;
        options.max_batch = true;
        const std::string label = system.name + ", TP " + std::to_string(tp) + ", " +
                                  (options.kv_capacity == 0 ? "full cache" : "capacity " + std::to_string(options.kv_capacity)) +
                                  (split == graph::AttentionSplit::Sequences ? ", data-parallel attention" : "");
        std::optional<Deployment> largest_batch;
        SimulationResult at_largest;
        try {
          largest_batch.emplace(model, system, options);
          at_largest = largest_batch->price(system);
        } catch (const SimulationError& e) {
          result.skipped.push_back(label + ": " + e.what());
          continue;
        }
        const int64_t largest = at_largest.max_batch;
        // A chunk whose kernels overflow SRAM is halved until they place, as a compiler would.
        std::optional<double> ttft;
        for (int64_t chunk = space.prefill_chunk; !ttft; chunk = std::max<int64_t>(1, chunk / 2)) {
          try {
            ttft = largest_batch->prefill_seconds(system, chunk);
          } catch (const PlacementError& e) {
            if (chunk > 1) continue;
            result.skipped.push_back(label + ", prefill one position at a time: " + e.what());
            break;
          }
        }
        if (!ttft) continue;
        std::optional<Candidate> best;
        for (const int64_t batch : batch_sizes(space, largest, traffic.concurrency)) {
          SimulationOptions at = options;
          at.max_batch = false;
          at.batch = batch;
          SimulationResult r;
          try {
            r = batch == largest ? at_largest : Deployment(model, system, at).price(system);
          } catch (const SimulationError& e) {
            result.skipped.push_back(label + ", batch " + std::to_string(batch) + ": " + e.what());
            continue;
          }
          PlanPoint p;
          p.system = system.name;
          p.system_sockets = system.devices;
          p.tp = tp;
          p.capacity = r.kv_capacity;
          p.full_cache = options.kv_capacity == 0;
          p.data_parallel_attention = split == graph::AttentionSplit::Sequences;
          p.batch = batch;
          p.max_batch = largest;
          p.ttft_seconds = *ttft;
          p.step_seconds = r.step_seconds;
          double per_user = r.tokens_per_s_per_user;
          if (traffic.request_rate > 0) {
            const double at_once = std::ceil(traffic.request_rate * (*ttft + static_cast<double>(traffic.output_tokens) / per_user));
            if (!(at_once <= 1e12)) throw SimulationError("the load needs more than 10^12 sequences at once: check --request-rate");
            p.concurrency = static_cast<int64_t>(at_once);
          } else {
            p.concurrency = traffic.concurrency > 0 ? traffic.concurrency : batch;
          }
          p.replicas = ceil_div(p.concurrency, batch);
          // Each replica also prefills its share of the arriving requests, time its decode loses.
          const double prefill_share = traffic.request_rate * *ttft / static_cast<double>(p.replicas);
          per_user *= std::max(0.0, 1 - prefill_share);
          p.tokens_per_s_per_user = per_user;
          p.sockets = p.replicas * tp;
          p.systems = ceil_div(p.sockets, system.devices);
          p.tokens_per_s_aggregate = per_user * static_cast<double>(p.concurrency);
          p.tokens_per_s_per_socket = per_user * static_cast<double>(batch) / static_cast<double>(tp);
          // A batch above the load's concurrency would run part empty: such points draw the
          // frontier but are not plans.
          p.meets = batch <= p.concurrency && prefill_share < 1 && per_user >= objectives.min_tokens_per_user &&
                    *ttft <= objectives.max_ttft_seconds;
          result.points.push_back(p);
          const size_t index = result.points.size() - 1;
          if (best && !best->next_point) {
            best->next_point = index;
            best->next = r;
          }
          if (!p.meets) continue;
          const PlanPoint* current = best ? &result.points[best->point] : nullptr;
          if (current == nullptr || p.sockets < current->sockets ||
              (p.sockets == current->sockets && p.tokens_per_s_per_socket > current->tokens_per_s_per_socket)) {
            best = Candidate{index, std::nullopt, {}, at_largest, &system};
          }
        }
        if (best) candidates.push_back(*best);
      }
    }
  }
  mark_frontier(result.points);
  for (const Candidate& c : candidates) {
    PlanPoint p = result.points[c.point];
    if (p.batch >= p.concurrency) {
      p.binding = "none: one replica holds the whole load";
    } else if (p.batch == p.max_batch) {
      p.binding = c.at_largest.max_batch_memory <= c.at_largest.max_batch_sram ? "HBM capacity" : "SRAM";
    } else if (c.next_point) {
      const PlanPoint& next = result.points[*c.next_point];
      if (next.meets) {
        p.binding = "none: batch " + std::to_string(next.batch) + " also meets the objectives on as many sockets";
      } else if (next.tokens_per_s_per_user < objectives.min_tokens_per_user) {
        p.binding = "speed per user at batch " + std::to_string(next.batch) + ", bound by " + dominant_cost(c.next, *c.system);
      } else {
        p.binding = "prefill time at batch " + std::to_string(next.batch);
      }
    } else {
      p.binding = "the batches searched";
    }
    result.plans.push_back(p);
  }
  std::stable_sort(result.plans.begin(), result.plans.end(), [](const PlanPoint& a, const PlanPoint& b) {
    return std::tie(a.sockets, b.tokens_per_s_per_socket) < std::tie(b.sockets, a.tokens_per_s_per_socket);
  });
  return result;
}

}  // namespace snapstream::dataflow_sim
