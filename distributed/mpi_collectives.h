// graph::Collectives over MPI: every rank of MPI_COMM_WORLD is one tensor-parallel shard.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graph/collectives.h"

namespace snapstream::distributed {

class MpiCollectives final : public graph::Collectives {
 public:
  // Needs an MpiSession alive for as long as this is used.
  MpiCollectives();

  int32_t rank() const override { return rank_; }
  int32_t size() const override { return size_; }
  void all_gather(const float* mine, std::span<const int64_t> counts, float* out) override;

 private:
  int32_t rank_ = 0;
  int32_t size_ = 1;
  std::vector<int> counts_, offsets_;  // MPI's int counts, kept so a call allocates nothing
};

}  // namespace snapstream::distributed
