// Collective timings: bytes over the per-device link bandwidth plus a latency per hop.
#include "dataflow_sim/collectives.h"

#include <algorithm>

#include "dataflow_sim/errors.h"

namespace snapstream::dataflow_sim {

CollectiveCost collective_cost(graph::OpKind kind, double payload, int64_t parts, const SystemSpec& system) {
  if (parts < 2) return {};
  const double p = static_cast<double>(parts);
  const double hop = static_cast<double>(system.collective_hops()) * system.link_latency_s;
  auto phases = [&](double bytes, double count) { return CollectiveCost{bytes / system.link_bytes_per_s + count * hop, bytes}; };
  switch (kind) {
    case graph::OpKind::AllReduce: {
      const CollectiveCost two_phase = phases(2 * (p - 1) / p * payload, 2);
      const CollectiveCost one_shot = phases((p - 1) * payload, 1);
      return two_phase.seconds <= one_shot.seconds ? two_phase : one_shot;
    }
    case graph::OpKind::AllGather:
    case graph::OpKind::ReduceScatter:
      return phases((p - 1) / p * payload, 1);
    default:
      throw SimulationError("not a collective: " + std::string(graph::op_kind_name(kind)));
  }
}

}  // namespace snapstream::dataflow_sim
