// Each step is one broadcast of a fixed header (what, start, count, slot, values) and one of
// its values: a prompt's ids, or a decode batch's tokens and slots.
#include "distributed/step_channel.h"

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <array>
#include <exception>
#include <utility>

#include "distributed/errors.h"
#include "distributed/mpi_session.h"

namespace snapstream::distributed {
namespace {

enum class StepKind : int64_t { PrefillChunk = 1, Decode = 2, AbandonPrefill = 3, Finish = 4 };

struct Header {
  StepKind kind = StepKind::Finish;
  int64_t start = 0, count = 0, slot = 0;
};

void broadcast(std::array<int64_t, 5>& words) {
  check_mpi(MPI_Bcast(words.data(), static_cast<int>(words.size()), MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast of a step");
}

void broadcast_values(std::vector<int64_t>& values) {
  if (values.empty()) return;
  check_mpi(MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast of a step's values");
}

void send(const Header& h, std::vector<int64_t>& values) {
  std::array<int64_t, 5> words = {static_cast<int64_t>(h.kind), h.start, h.count, h.slot, static_cast<int64_t>(values.size())};
  broadcast(words);
  broadcast_values(values);
}

// Every rank's RankSeconds to rank 0, after each prefill chunk and decode step: `all` (on rank 0
// only) gets one per rank, in rank order.
void gather_seconds(const runtime::RankSeconds& mine, std::vector<runtime::RankSeconds>* all) {
  const double sent[2] = {mine.steps, mine.collectives};
  std::vector<double> received;
  if (all != nullptr) received.resize(2 * all->size());
  check_mpi(MPI_Gather(sent, 2, MPI_DOUBLE, all != nullptr ? received.data() : nullptr, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD),
            "MPI_Gather of the ranks' step times");
  if (all == nullptr) return;
  for (size_t rank = 0; rank < all->size(); ++rank) (*all)[rank] = {received[2 * rank], received[2 * rank + 1]};
}

}  // namespace

void MpiStepRelay::step_done(const runtime::RankSeconds& mine) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<runtime::RankSeconds> all(static_cast<size_t>(ranks));
  gather_seconds(mine, &all);
  std::lock_guard lock(seconds_mutex_);
  rank_seconds_ = std::move(all);
}

std::vector<runtime::RankSeconds> MpiStepRelay::rank_seconds() const {
  std::lock_guard lock(seconds_mutex_);
  return rank_seconds_;
}

void MpiStepRelay::prefill_chunk(std::span<const int32_t> prompt, int64_t start, int64_t count, int64_t slot) {
  payload_.assign(prompt.begin(), prompt.end());
  send({StepKind::PrefillChunk, start, count, slot}, payload_);
}

void MpiStepRelay::decode(std::span<const runtime::DecodeInput> batch) {
  payload_.clear();
  for (const runtime::DecodeInput& in : batch) {
    payload_.push_back(in.token);
    payload_.push_back(in.slot);
  }
  send({StepKind::Decode}, payload_);
}

void MpiStepRelay::abandon_prefill(int64_t slot) {
  payload_.clear();
  send({StepKind::AbandonPrefill, 0, 0, slot}, payload_);
}

void MpiStepRelay::finish() {
  if (finished_) return;
  finished_ = true;
  payload_.clear();
  send({StepKind::Finish}, payload_);
}

int64_t follow_steps(runtime::GraphRunner& runner, int64_t vocab) {
  std::vector<int64_t> values;
  std::vector<int32_t> prompt;
  std::vector<runtime::DecodeInput> batch;
  std::vector<float> logits;
  for (int64_t steps = 0;; ++steps) {
    std::array<int64_t, 5> words{};
    broadcast(words);
    const auto kind = static_cast<StepKind>(words[0]);
    if (kind == StepKind::Finish) return steps;
    values.resize(static_cast<size_t>(words[4]));
    broadcast_values(values);
    try {
      switch (kind) {
        case StepKind::PrefillChunk:
          prompt.assign(values.begin(), values.end());
          logits.resize(static_cast<size_t>(vocab));
          runner.prefill_chunk(prompt, words[1], words[2], words[3], logits.data());
          gather_seconds(runner.seconds(), nullptr);
          break;
        case StepKind::Decode:
          batch.clear();
          for (size_t i = 0; i + 1 < values.size(); i += 2) batch.push_back({static_cast<int32_t>(values[i]), values[i + 1]});
          logits.resize(batch.size() * static_cast<size_t>(vocab));
          runner.decode(batch, logits.data());
          gather_seconds(runner.seconds(), nullptr);
          break;
        case StepKind::AbandonPrefill:
          runner.abandon_prefill(words[3]);
          break;
        default:
          throw DistributedError("rank 0 sent a step of unknown kind " + std::to_string(words[0]));
      }
    } catch (const std::exception& e) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      spdlog::error("rank {}: a step rank 0 relayed failed here, so the ranks can no longer agree: {}", rank, e.what());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
}

}  // namespace snapstream::distributed
