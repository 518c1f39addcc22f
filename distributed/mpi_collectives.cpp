// Gathers over MPI_COMM_WORLD with MPI_Allgatherv, after checking the counts fit MPI's ints.
#include "distributed/mpi_collectives.h"

#include <mpi.h>

#include <limits>
#include <string>

#include "distributed/errors.h"
#include "distributed/mpi_session.h"

namespace snapstream::distributed {

MpiCollectives::MpiCollectives() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) throw DistributedError("MPI is not initialised: create an MpiSession first");
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  rank_ = rank;
  size_ = size;
}

void MpiCollectives::all_gather(const float* mine, std::span<const int64_t> counts, float* out) {
  if (static_cast<int64_t>(counts.size()) != size_)
    throw DistributedError("a gather over " + std::to_string(size_) + " ranks was given " + std::to_string(counts.size()) + " counts");
  counts_.resize(counts.size());
  offsets_.resize(counts.size());
  int64_t offset = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0 || offset + counts[i] > std::numeric_limits<int>::max())
      throw DistributedError("a gather of " + std::to_string(offset + counts[i]) + " floats is beyond what one MPI call moves");
    counts_[i] = static_cast<int>(counts[i]);
    offsets_[i] = static_cast<int>(offset);
    offset += counts[i];
  }
  check_mpi(MPI_Allgatherv(mine, counts_[static_cast<size_t>(rank_)], MPI_FLOAT, out, counts_.data(), offsets_.data(), MPI_FLOAT,
                           MPI_COMM_WORLD),
            "MPI_Allgatherv");
}

}  // namespace snapstream::distributed
