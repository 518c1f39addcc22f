// Deployment planning: the cheapest ways (fewest sockets) to serve a model at a context and a
// load with a speed per user and a time to first token, searched over systems, tensor-parallel
// degree, SnapStream capacity and batch, each plan with the limit that binds it.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dataflow_sim/hardware_spec.h"
#include "dataflow_sim/simulation.h"
#include "graph/model_shape.h"

namespace snapstream::dataflow_sim {

// The load: sequences decoding at once, or requests per second of `output_tokens` each (then
// the sequences at once follow from Little's law: rate x (time to first token + output time)).
// Neither: one replica at its batch.
struct PlanTraffic {
  int64_t context = 0;
  int64_t concurrency = 0;
  double request_rate = 0;
  int64_t output_tokens = 0;
};

struct PlanObjectives {
  double min_tokens_per_user = 0;
  double max_ttft_seconds = std::numeric_limits<double>::infinity();
};

// What is searched. Empty lists take the defaults: tensor-parallel degrees are the powers of
// two up to each system's sockets; capacities are the full cache alone; batches are the powers
// of two below the largest that fits, and that largest.
struct PlanSpace {
  std::vector<SystemSpec> systems;
  std::vector<int32_t> tp;
  std::vector<int64_t> capacities;   // SnapStream's C per sequence; 0 keeps the full cache
  std::vector<int64_t> batches;
  // Latent attention's splits to try; empty: both for latent attention, heads otherwise.
  std::vector<graph::AttentionSplit> attention_splits;
  int64_t prefill_chunk = 1024;
  SimulationOptions base;            // looping, speculation, experts, attention split
};

// One point of the search: `replicas` copies of a `tp`-socket deployment at `batch` each.
struct PlanPoint {
  std::string system;
  int32_t system_sockets = 0;
  int32_t tp = 0;
  int64_t capacity = 0;              // positions per sequence (the context when full)
  bool full_cache = true;
  bool data_parallel_attention = false;
  int64_t batch = 0;
  int64_t max_batch = 0;
  int64_t concurrency = 0;           // sequences at once the load needs
  int64_t replicas = 0;
  int64_t sockets = 0;               // replicas x tp: the cost
  int64_t systems = 0;               // systems of `system_sockets` holding them
  double tokens_per_s_per_user = 0;  // with the prefill's share of the device taken out
  double tokens_per_s_aggregate = 0; // what the load gets: its sequences at once x per user
  double tokens_per_s_per_socket = 0;  // one replica at full batch, over its sockets
  double ttft_seconds = 0;
  double step_seconds = 0;
  bool meets = false;
  bool frontier = false;             // no other point is faster both per user and per socket
  std::string binding;               // what stops a larger batch (plans only)
};

struct PlanResult {
  std::vector<PlanPoint> points;     // every point priced
  std::vector<PlanPoint> plans;      // the cheapest point of each (system, tp, capacity, split) that meets the objectives, cheapest first
  std::vector<std::string> skipped;  // deployments that could not be built or did not fit, and why
};

// Throws SimulationError for a traffic description or objectives that make no sense.
PlanResult plan_deployments(const graph::ModelShape& model, const PlanSpace& space, const PlanTraffic& traffic,
                            const PlanObjectives& objectives);

}  // namespace snapstream::dataflow_sim
