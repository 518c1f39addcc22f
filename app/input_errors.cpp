// The error categories of every room, in one place.
#include "app/input_errors.h"

#include "dataflow_sim/errors.h"
#include "graph/errors.h"
#include "runtime/errors.h"

namespace snapstream::app {

bool is_input_error(const std::exception& error) {
  return dynamic_cast<const runtime::InputError*>(&error) != nullptr || dynamic_cast<const graph::ShapeError*>(&error) != nullptr ||
         dynamic_cast<const dataflow_sim::SimulationError*>(&error) != nullptr;
}

}  // namespace snapstream::app
