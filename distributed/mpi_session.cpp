// MPI start-up and shut-down, and turning MPI's error codes into DistributedError.
#include "distributed/mpi_session.h"

#include <mpi.h>

#include <string>

#include "distributed/errors.h"

namespace snapstream::distributed {

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw DistributedError(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(length)));
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = 0;
    check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    owns_ = true;
    if (provided < MPI_THREAD_SERIALIZED)
      throw DistributedError("this MPI library cannot be called from more than one thread (MPI_THREAD_SERIALIZED)");
  }
  // A failed call returns its code to check_mpi rather than ending every rank on the spot.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  rank_ = rank;
  size_ = size;
}

MpiSession::~MpiSession() {
  if (owns_) MPI_Finalize();
}

}  // namespace snapstream::distributed
