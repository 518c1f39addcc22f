// Loading model and hardware configs by name for the simulator tests.
#pragma once

#include <string>

#include "dataflow_sim/hardware_spec.h"
#include "graph/model_config_file.h"
#include "tests/support/test_paths.h"

namespace snapstream::test {

inline graph::ModelShape model_config(const std::string& name) {
  return graph::read_model_config(configs_dir() / "models" / (name + ".json"));
}

inline dataflow_sim::SystemSpec system_config(const std::string& name) {
  return dataflow_sim::load_system(configs_dir() / "hardware" / (name + ".json"));
}

}  // namespace snapstream::test
