// The errors the simulator throws: a config it cannot read, and a kernel it cannot place.
#pragma once

#include <stdexcept>
#include <string>

namespace snapstream::dataflow_sim {

class SimulationError : public std::runtime_error {
 public:
  explicit SimulationError(const std::string& message) : std::runtime_error(message) {}
};

// A hardware or model config that is missing, malformed or inconsistent.
class SpecError : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

// A fused kernel whose buffers do not fit the on-chip SRAM.
class PlacementError : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

// A deployment that does not fit the system's memory (weights alone, or not one sequence).
class CapacityError : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

}  // namespace snapstream::dataflow_sim
