// What a graph runner tells the runners of the other tensor-parallel ranks before each step it
// takes, so that theirs take the same steps with the same arguments (and keep the same slot
// cache state) while each computes its own shard.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace snapstream::runtime {

struct DecodeInput;

// Where one rank's time went: seconds in runner steps so far, and the part of them spent in
// collectives (sending its part, waiting for the others').
struct RankSeconds {
  double steps = 0.0;
  double collectives = 0.0;
};

class StepRelay {
 public:
  virtual ~StepRelay() = default;
  // GraphRunner::prefill_chunk(prompt, start, count, slot), checked and about to run.
  virtual void prefill_chunk(std::span<const int32_t> prompt, int64_t start, int64_t count, int64_t slot) = 0;
  // GraphRunner::decode(batch), checked and about to run.
  virtual void decode(std::span<const DecodeInput> batch) = 0;
  // GraphRunner::abandon_prefill(slot).
  virtual void abandon_prefill(int64_t slot) = 0;
  // A prefill chunk or decode step has run here; `mine` is this rank's time so far.
  virtual void step_done(const RankSeconds& mine) = 0;
  // Every rank's time as of the last step, in rank order. Safe from any thread.
  virtual std::vector<RankSeconds> rank_seconds() const = 0;
};

}  // namespace snapstream::runtime
