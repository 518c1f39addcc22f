// Tensor-parallel shards as processes. In a build with -DSNAPSTREAM_MPI=ON started by mpirun,
// every rank parses the same command line and builds the same graph runner; rank 0 runs the
// command and relays each step, and the other ranks take the steps on their own shard. Built
// without MPI, or run as one process, a command runs as it always has.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/graph_runner.h"
#include "runtime/model.h"

namespace snapstream::app {

class ProcessRanks {
 public:
  // Once, in main, before any command: starts MPI in an MPI build. Ranks other than 0 log
  // warnings and errors only.
  ProcessRanks(int* argc, char*** argv);
  // Rank 0, if it led other ranks, tells them it is done.
  ~ProcessRanks();
  ProcessRanks(const ProcessRanks&) = delete;
  ProcessRanks& operator=(const ProcessRanks&) = delete;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// `plan` as this process runs it: unchanged in one process; under mpirun holding this rank's
// shard only. Throws ConfigError, on every rank alike, when plan.shards is not the number of
// ranks.
runtime::GraphPlan plan_for_this_rank(runtime::GraphPlan plan);

// Joins `runner` (of `model`, built from plan_for_this_rank()) to the ranks. Returns true when this
// process runs the command: one process, or rank 0, whose runner then computes its shard and
// relays its steps. Returns false on the other ranks once they have taken rank 0's steps to its
// end. Throws ConfigError, on every rank alike, when a rank was started with other arguments or
// another model file.
bool lead_or_follow(runtime::GraphRunner& runner, const runtime::Model& model);

// True on the ranks other than 0 of a job of several: they take rank 0's steps and do nothing
// else a command does (listen, print, write files).
bool follows_another_rank();

// A command failed with `exit_code` on this rank: with several ranks, ends them all (the others
// may be waiting for this one); otherwise returns.
void end_ranks_after_error(int exit_code);

}  // namespace snapstream::app
