// Typed errors of the distributed room: a transport failure, or ranks that disagree.
#pragma once

#include <stdexcept>
#include <string>

namespace snapstream::distributed {

// MPI reported an error (a dead rank, a lost connection) or a rank cannot go on with the others.
class DistributedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace snapstream::distributed
