// The exchange between tensor-parallel shards that run in separate processes: with it, an
// Executor runs one shard's ops (and the replicated ones) and joins the others' partial results
// through it; without it, one Executor runs every shard in turn.
#pragma once

#include <cstdint>
#include <span>

namespace snapstream::graph {

class Collectives {
 public:
  virtual ~Collectives() = default;
  // This process's shard, and how many shards there are.
  virtual int32_t rank() const = 0;
  virtual int32_t size() const = 0;
  // Every rank's `counts[rank]` floats, concatenated in rank order into `out` (the sum of the
  // counts); `mine` holds this rank's. Every rank calls it with the same counts.
  virtual void all_gather(const float* mine, std::span<const int64_t> counts, float* out) = 0;
};

}  // namespace snapstream::graph
