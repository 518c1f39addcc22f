// Formatting of deployment plans: the table of the cheapest plans, the CSV of every point
// priced, and the frontier plot (tokens/s per user against tokens/s per socket).
#pragma once

#include <filesystem>
#include <string>

#include "dataflow_sim/planner.h"

namespace snapstream::app {

std::string plan_table(const dataflow_sim::PlanResult& result, size_t top);

// Writes PREFIX.csv (every point) and PREFIX.png (gnuplot); throws ConfigError when either
// cannot be written.
void write_plan_files(const dataflow_sim::PlanResult& result, const std::filesystem::path& prefix, const std::string& title);

}  // namespace snapstream::app
