// The serving engine: a thread that runs engine steps over a fixed set of sequence slots
// (continuous batching), and a thread-safe submit/cancel/stream API for clients.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kernels/thread_pool.h"
#include "runtime/errors.h"
#include "runtime/graph_runner.h"
#include "runtime/model.h"
#include "runtime/request_stream.h"
#include "runtime/slot_kv_cache.h"
#include "runtime/fault_injection.h"
#include "runtime/step_clock.h"

namespace snapstream::runtime {

// The waiting queue is full: the client should retry later (HTTP 429/503).
class QueueFullError : public Error {
 public:
  using Error::Error;
};

// The engine thread has stopped on an internal fault; nothing more can run.
class EngineFailedError : public Error {
 public:
  using Error::Error;
};

struct EngineOptions {
  int64_t slots = 8;                    // sequences decoded together at most
  int64_t max_waiting = 256;            // requests queued for a slot at most
  int64_t prefill_token_budget = 2048;  // prompt tokens prefilled per step (see scheduler.h)
  SnapStreamConfig cache;               // resolved against the model at start
  GraphPlan graphs;                     // buckets and tensor parallelism of the compiled graphs
  // Builds the emulated accelerator each step is charged to; empty: no emulated clock.
  StepClockFactory step_clock;
  bool pace = false;  // hold each step's tokens until the emulated device would have made them
  // When the emulated device cannot hold the served graphs: start without it (a warning)
  // instead of refusing to start. For a default the user did not ask for.
  bool step_clock_optional = false;
};

struct EngineStats {
  int64_t running = 0;  // slots holding a sequence
  int64_t waiting = 0;
  int64_t free_slots = 0;
  int64_t steps = 0;              // engine steps that did work
  int64_t generated_tokens = 0;
  int64_t prompt_tokens = 0;
  // The KV cache, over the sequences holding slots: entries live, and what a full cache
  // would hold for them (every position seen).
  int64_t kv_live_tokens = 0;
  int64_t kv_full_tokens = 0;
  int64_t evicted_tokens = 0;  // dropped by SnapKV or the ring, in all
  int64_t decode_rows = 0;     // decode graph rows run: real ones, and bucket padding
  int64_t padded_rows = 0;
  // The emulated device's clock: seconds of device time all steps so far were priced at.
  double device_seconds = 0.0;
  // Tensor-parallel ranks (MPI): each rank's time in steps and in collectives, in rank order;
  // empty in one process.
  std::vector<RankSeconds> ranks;
};

class Engine {
 public:
  Engine(const Model& model, kernels::ThreadPool& pool, EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request. Throws InvalidRequestError for a prompt that is empty, too long for the
  // context or holds unknown ids, or bad sampling values; QueueFullError when the queue is full.
  std::shared_ptr<RequestStream> submit(RequestSpec spec);

  EngineStats stats() const;
  // Requests the waiting queue holds at most: one asking for more sequences can never be queued.
  int64_t max_waiting() const { return options_.max_waiting; }
  const SlotKvCache& cache() const { return cache_; }
  const GraphRunner& runner() const { return runner_; }
  // For joining tensor-parallel ranks before the first request: steps run on the engine thread.
  GraphRunner& runner() { return runner_; }
  // The emulated accelerator's clock, when the engine has one.
  const StepClock* step_clock() const { return step_clock_.get(); }
  // Stops the engine thread; requests not yet finished end as cancelled.
  void shutdown();
  // Empty while the engine works; after an internal fault stopped it, what went wrong.
  std::string failure() const;

 private:
  struct Sequence {
    std::shared_ptr<RequestStream> stream;
    RequestSpec spec;
    Sampler sampler;
    int64_t slot = 0;
    int64_t limit = 0;        // tokens it may generate
    int64_t generated = 0;
    int32_t next_input = 0;   // the last sampled token, fed at the next decode
    std::vector<int64_t> chunks;  // its prompt's prefill chunks
    size_t next_chunk = 0;
    int64_t prefilled = 0;        // prompt tokens prefilled so far
  };
  struct Waiting {
    std::shared_ptr<RequestStream> stream;
    RequestSpec spec;
  };

  void loop();
  void step();
  void reap_cancelled();
  void decode_running();
  // Runs the next chunk of the prompt being prefilled in chunks; returns the tokens it took.
  int64_t continue_chunked_prefill();
  void admit_waiting(int64_t spent);
  // Runs a sequence's next prefill chunk. When the prompt is complete the sequence samples its
  // first token and joins the running ones; until then it waits in prefilling_.
  void run_prefill_chunk(Sequence sequence);
  // Streams `token`, sampled from `logits`, and finishes the sequence when it stops.
  // Returns false when the sequence has finished.
  bool take_token(Sequence& sequence, const float* logits, int32_t token);
  void release(Sequence& sequence, FinishReason reason, const std::string& error = {});
  // Copies the slot counts into the stats clients read.
  void publish_slots();
  // Advances the emulated clock by the price of the graph that just ran; when pacing, first
  // waits until the step has taken as long in real time as on the emulated device.
  void charge_device(const graph::GraphKey& key, int64_t first_position, std::chrono::steady_clock::time_point started);

  const Model& model_;
  EngineOptions options_;
  SlotKvCache cache_;
  GraphRunner runner_;
  kernels::ThreadPool& pool_;  // the runner's, used between its steps for sampling
  std::unique_ptr<StepClock> step_clock_;
  std::atomic<double> device_clock_{0.0};  // written by the engine thread only
  std::vector<float> logits_;

  mutable std::mutex mutex_;  // guards waiting_, stopping_ and the stats
  std::condition_variable work_;
  std::deque<Waiting> waiting_;
  bool stopping_ = false;
  std::string failure_;
  EngineStats stats_;

  // Owned by the engine thread.
  std::vector<Sequence> running_;
  std::optional<Sequence> prefilling_;  // the prompt being prefilled in chunks, if any
  int64_t step_index_ = 0;              // steps begun
  std::optional<InjectedFault> fault_ = injected_fault_from_environment();
  std::vector<int64_t> free_slots_;
  std::thread thread_;
};

}  // namespace snapstream::runtime
