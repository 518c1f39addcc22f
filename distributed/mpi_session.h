// MPI for the whole process: initialised once before any rank talks, finalised at exit, with
// errors returned to the caller (as DistributedError) instead of MPI aborting every rank.
#pragma once

#include <cstdint>

namespace snapstream::distributed {

class MpiSession {
 public:
  // Initialises MPI (every thread may call it, but one at a time: the engine thread and the
  // server's threads never talk at once) unless something already did.
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int32_t rank() const { return rank_; }
  int32_t size() const { return size_; }

 private:
  bool owns_ = false;
  int32_t rank_ = 0;
  int32_t size_ = 1;
};

// Throws DistributedError naming `what` when an MPI call returned `code` other than success.
void check_mpi(int code, const char* what);

}  // namespace snapstream::distributed
