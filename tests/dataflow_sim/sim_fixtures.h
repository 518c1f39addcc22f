// Loading model and hardware configs by name for the simulator tests.
#pragma once

#include <string>

#include "dataflow_sim/hardware_spec.h"
#include "dataflow_sim/model_spec.h"
#include "tests/support/test_paths.h"

namespace snapstream::test {

inline dataflow_sim::ModelSpec model_config(const std::string& name) {
  return dataflow_sim::load_model_spec(configs_dir() / "models" / (name + ".json"));
}

inline dataflow_sim::SystemSpec system_config(const std::string& name) {
  return dataflow_sim::load_system(configs_dir() / "hardware" / (name + ".json"));
}

}  // namespace snapstream::test
