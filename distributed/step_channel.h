// The leading rank's graph-runner steps, broadcast over MPI, and the loop in which the other
// ranks take them on their own shard.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "runtime/graph_runner.h"
#include "runtime/step_relay.h"

namespace snapstream::distributed {

// On rank 0: sends each step to every other rank before the step runs here.
class MpiStepRelay final : public runtime::StepRelay {
 public:
  void prefill_chunk(std::span<const int32_t> prompt, int64_t start, int64_t count, int64_t slot) override;
  void decode(std::span<const runtime::DecodeInput> batch) override;
  void abandon_prefill(int64_t slot) override;
  // Gathers every rank's time after the step (the others send theirs from follow_steps()).
  void step_done(const runtime::RankSeconds& mine) override;
  std::vector<runtime::RankSeconds> rank_seconds() const override;
  // Tells the other ranks that rank 0 is done: their follow_steps() returns. Once.
  void finish();

 private:
  bool finished_ = false;
  std::vector<int64_t> payload_;
  mutable std::mutex seconds_mutex_;  // the engine thread gathers, the metrics read
  std::vector<runtime::RankSeconds> rank_seconds_;
};

// On every rank but 0: takes each step rank 0 relays on `runner` (whose model has `vocab`
// tokens), until rank 0 finishes; returns the steps taken. A step that fails here cannot be
// matched by the other ranks, so it is logged and ends every rank (MPI_Abort).
int64_t follow_steps(runtime::GraphRunner& runner, int64_t vocab);

}  // namespace snapstream::distributed
