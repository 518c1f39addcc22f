// A simulation result as a table for people, a JSON object or CSV rows for tools.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "dataflow_sim/simulation.h"

namespace snapstream::app {

nlohmann::json simulation_json(const dataflow_sim::SimulationResult& result);
std::string simulation_table(const dataflow_sim::SimulationResult& result);
std::string simulation_csv_header();
std::string simulation_csv_row(const dataflow_sim::SimulationResult& result);

}  // namespace snapstream::app
