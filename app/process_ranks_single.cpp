// ProcessRanks in a build without MPI: always one process, which runs every command itself.
#include "app/process_ranks.h"

namespace snapstream::app {

struct ProcessRanks::State {};

ProcessRanks::ProcessRanks(int* argc, char*** argv) { (void)argc, (void)argv; }
ProcessRanks::~ProcessRanks() = default;

runtime::GraphPlan plan_for_this_rank(runtime::GraphPlan plan) { return plan; }

bool lead_or_follow(runtime::GraphRunner& runner, const runtime::Model& model) {
  (void)runner, (void)model;
  return true;
}

bool follows_another_rank() { return false; }

void end_ranks_after_error(int exit_code) { (void)exit_code; }

}  // namespace snapstream::app
