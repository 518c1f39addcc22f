// The errors graph/ throws: a shape or bucket that cannot be served, and a model shape that is
// out of range or inconsistent (from a config, or a model file's header).
#pragma once

#include <stdexcept>
#include <string>

namespace snapstream::graph {

class GraphError : public std::runtime_error {
 public:
  explicit GraphError(const std::string& message) : std::runtime_error(message) {}
};

// A model shape, or the config file it was read from, that cannot be used.
class ShapeError : public GraphError {
 public:
  using GraphError::GraphError;
};

}  // namespace snapstream::graph
