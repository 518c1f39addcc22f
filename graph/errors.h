// The error graph construction and lookup throw: a shape or bucket that cannot be served.
#pragma once

#include <stdexcept>
#include <string>

namespace snapstream::graph {

class GraphError : public std::runtime_error {
 public:
  explicit GraphError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace snapstream::graph
