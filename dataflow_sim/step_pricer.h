// The time one execution of a compiled graph takes on a system, kernel call by kernel call,
// with a breakdown by cause.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dataflow_sim/expert_routing.h"
#include "dataflow_sim/hardware_spec.h"
#include "graph/ir.h"

namespace snapstream::dataflow_sim {

// Seconds by cause. streaming is the per-iteration max of compute, memory and on-chip network
// time (a pipelined kernel overlaps them); those are kept apart to show which bound.
struct TimeBreakdown {
  double streaming = 0;
  double compute = 0;
  double memory = 0;
  double network = 0;
  double collective = 0;
  double sync = 0;
  double fill = 0;

  double total() const { return streaming + collective + sync + fill; }
  void add(const TimeBreakdown& other);
};

struct KernelPrice {
  std::string name;          // "embed", "layers 3-60 (looped)", "layer 0", "head"
  int64_t calls = 1;         // kernel calls (launches) this entry stands for
  int64_t iterations = 1;    // layer iterations inside the call
  TimeBreakdown time;
  double flops = 0;          // per device, executed
  double dense_accounting_flops = 0;  // per device, as published tables count (see OpCost)
  double hbm_bytes = 0;
  double ddr_bytes = 0;
  double link_bytes = 0;
  double sram_bytes = 0;     // placed on chip (dataflow sockets)
  int64_t pcus = 0;
  int64_t pmus = 0;
};

struct StepPrice {
  std::vector<KernelPrice> kernels;
  TimeBreakdown time;
  double flops = 0;
  double dense_accounting_flops = 0;
  double hbm_bytes = 0;
  double ddr_bytes = 0;
  double link_bytes = 0;
  double sram_bytes = 0;     // the largest kernel's
  int64_t kernel_calls = 0;

  double seconds() const { return time.total(); }
};

class StepPricer {
 public:
  // expert_ddr_fraction: the share of routed-expert weights that live in DDR (see MemoryPlan).
  // enforce_sram false prices kernels even when they overflow SRAM (for sizing). `experts`: the
  // busiest device's routed-expert load (see op_cost); none prices a uniform column split.
  StepPricer(const SystemSpec& system, double expert_ddr_fraction = 0, bool enforce_sram = true,
             std::optional<ExpertLoad> experts = std::nullopt);

  // `extent`: cached positions each sequence attends; `capacity`: positions its cache holds.
  // Throws PlacementError when a kernel does not fit SRAM.
  StepPrice price(const graph::Graph& graph, int64_t extent, int64_t capacity) const;

 private:
  KernelPrice price_kernel(const graph::Graph& graph, const std::vector<const graph::Op*>& ops, int64_t iterations,
                           const std::string& name, int64_t extent, int64_t capacity) const;

  SystemSpec system_;
  double expert_ddr_fraction_;
  bool enforce_sram_;
  std::optional<ExpertLoad> experts_;
};

}  // namespace snapstream::dataflow_sim
