// ProcessRanks in a build with MPI: MPI for the whole process, the collectives every rank's
// runner gathers through, rank 0's step relay, and the start-up check that the ranks agree.
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

#include "app/process_ranks.h"
#include "distributed/mpi_collectives.h"
#include "distributed/mpi_session.h"
#include "distributed/step_channel.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

ProcessRanks::State* current = nullptr;

// FNV-1a, 64 bits: enough to tell two command lines or two model files apart.
uint64_t fnv1a(const void* data, size_t size, uint64_t hash = 14695981039346656037ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

// The first MiB of the file (a GGUF file's header, metadata and first tensors) and its size.
uint64_t model_fingerprint(const runtime::Model& model) {
  if (!model.mapping) return fnv1a(model.path.data(), model.path.size());
  const auto bytes = model.mapping->bytes();
  const size_t size = bytes.size();
  return fnv1a(bytes.data(), std::min<size_t>(size, 1 << 20), fnv1a(&size, sizeof size));
}

}  // namespace

struct ProcessRanks::State {
  distributed::MpiSession session;
  distributed::MpiCollectives collectives;
  distributed::MpiStepRelay relay;
  uint64_t arguments = 0;  // hash of the command line
  bool leading = false;    // rank 0 relays to the others
  bool refused_together = false;  // every rank threw the same start-up error: nobody waits
  State(int* argc, char*** argv) : session(argc, argv) {
    for (int i = 1; i < *argc; ++i) arguments = fnv1a((*argv)[i], std::char_traits<char>::length((*argv)[i]) + 1, arguments);
  }
};

ProcessRanks::ProcessRanks(int* argc, char*** argv) : state_(std::make_unique<State>(argc, argv)) {
  current = state_.get();
  if (state_->session.rank() != 0) spdlog::set_level(spdlog::level::warn);
}

ProcessRanks::~ProcessRanks() {
  try {
    if (state_->leading) state_->relay.finish();
  } catch (const std::exception& e) {
    spdlog::error("telling the other ranks that rank 0 is done: {}", e.what());
  }
  current = nullptr;
}

namespace {

// Every rank checks the same things in the same order, so all refuse together, before any
// step, and none is left waiting for another.
[[noreturn]] void refuse_together(const std::string& why) {
  current->refused_together = true;
  throw runtime::ConfigError(why);
}

}  // namespace

runtime::GraphPlan plan_for_this_rank(runtime::GraphPlan plan) {
  if (current == nullptr || current->session.size() == 1) return plan;
  const int32_t ranks = current->session.size();
  if (plan.shards != ranks)
    refuse_together("mpirun started " + std::to_string(ranks) + " ranks, but --tp is " + std::to_string(plan.shards) +
                    ": each rank runs one tensor-parallel shard, so give --tp " + std::to_string(ranks));
  plan.held_shard = current->session.rank();
  return plan;
}

bool lead_or_follow(runtime::GraphRunner& runner, const runtime::Model& model) {
  if (current == nullptr || current->session.size() == 1) return true;
  const int32_t ranks = current->session.size(), rank = current->session.rank();
  uint64_t mine[2] = {current->arguments, model_fingerprint(model)};
  uint64_t leader[2] = {mine[0], mine[1]};
  distributed::check_mpi(MPI_Bcast(leader, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast of rank 0's fingerprints");
  int differs[2] = {mine[0] != leader[0], mine[1] != leader[1]}, any[2] = {0, 0};
  distributed::check_mpi(MPI_Allreduce(differs, any, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce of the start-up check");
  if (any[0] != 0) refuse_together("the ranks were started with different command lines: start every rank with the same arguments");
  if (any[1] != 0) refuse_together("the ranks read different model files (size or first MiB differ): give every rank the same file");
  runner.set_collectives(&current->collectives);
  if (rank == 0) {
    runner.set_step_relay(&current->relay);
    current->leading = true;
    spdlog::info("tensor-parallel shards as {} MPI ranks: this is rank 0", ranks);
    return true;
  }
  const int64_t steps = distributed::follow_steps(runner, model.shape.vocab);
  spdlog::debug("rank {}: followed {} steps", rank, steps);
  return false;
}

bool follows_another_rank() { return current != nullptr && current->session.rank() != 0; }

void end_ranks_after_error(int exit_code) {
  if (current == nullptr || current->session.size() == 1 || current->refused_together) return;
  MPI_Abort(MPI_COMM_WORLD, exit_code);
}

}  // namespace snapstream::app
