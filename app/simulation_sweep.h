// `snapstream simulate --sweep`: the same deployment priced over a range of contexts or batch
// sizes, full cache against SnapStream, written as CSV and plotted to PNG with gnuplot.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "dataflow_sim/simulation.h"

namespace snapstream::app {

struct SweepSpec {
  std::string axis;                 // "context" or "batch"
  std::vector<int64_t> values;      // empty: powers of two up to the model's context (or max batch)
  std::filesystem::path out;        // writes <out>.csv and <out>.png
  int64_t kv_capacity = 0;          // SnapStream's C; 0: a quarter of each context
};

// Prices every point for the full cache and for SnapStream (C = sweep.kv_capacity, or a
// quarter of each context). Points that do not fit memory are left out and reported on
// stderr. Throws ConfigError for a bad axis, and when gnuplot fails.
void run_sweep(const graph::ModelShape& model, const dataflow_sim::SystemSpec& system,
               const dataflow_sim::SimulationOptions& options, const SweepSpec& sweep);

}  // namespace snapstream::app
