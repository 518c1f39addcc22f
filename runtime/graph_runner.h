// Runs the model through precompiled static graphs: a prefill graph per prompt-length bucket
// and a decode graph per batch bucket, all compiled at start-up, over one preallocated arena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "graph/executor.h"
#include "graph/graph_cache.h"
#include "kernels/thread_pool.h"
#include "runtime/grouped_weights.h"
#include "runtime/held_weight_slices.h"
#include "runtime/lazy_pages.h"
#include "runtime/model.h"
#include "runtime/slot_kv_cache.h"
#include "runtime/step_relay.h"

namespace snapstream::runtime {

// One sequence's token in a decode step; its position is the slot's current length.
struct DecodeInput {
  int32_t token = 0;
  int64_t slot = 0;
};

struct GraphPlan {
  std::vector<int64_t> decode_batches;   // empty: 1, 2, 4, ... up to the slot count
  std::vector<int64_t> prefill_lengths;  // empty: 128, 512, 2048, 4096, within the context
  int32_t shards = 1;                    // tensor-parallel shards (run one after another here)
  bool kernel_looping = true;
  // The one shard this process runs and holds weights and cache for (an MPI rank), or -1 for
  // every shard.
  int32_t held_shard = -1;
  // Q4_K, Q8_0, f32 and f16 matrices regrouped sixteen rows at a time where the CPU's kernels read
  // them faster so (kernels/row_groups.h): a copy of those weights, made at start-up.
  bool row_groups = true;
};

// The KV heads a cache for `plan` holds: every head, or the held shard's (its one replicated
// head when there are more shards than KV heads). Throws ConfigError when the held shard is not
// one of the plan's or the KV heads neither divide by nor divide the shards.
KvHeadRange held_kv_heads(const graph::ModelShape& model, const GraphPlan& plan);

// Sees each decode layer's rotated queries and new keys before attention (see
// ExecutionBindings::observe_queries), with the slot of each row.
using AttentionObserver = std::function<void(int64_t layer, int64_t kv_begin, const kernels::AttentionShape& shard,
                                             std::span<const int64_t> slots, const float* q, const float* k)>;

class GraphRunner {
 public:
  GraphRunner(const Model& model, kernels::ThreadPool& pool, SlotKvCache& cache, const GraphPlan& plan = {});

  // Prefills a whole prompt into `slot` (compressing it when it exceeds the capacity), chunk by
  // chunk, and writes the last token's logits [vocab].
  void prefill(std::span<const int32_t> prompt, int64_t slot, float* logits);

  // How a prompt splits into prefill chunks: each fits the largest bucket, and the last holds at
  // least the observation window, whose queries SnapKV needs.
  std::vector<int64_t> chunk_lengths(int64_t prompt_length) const;
  // Prefills prompt[start, start + count) into `slot`, one chunk of chunk_lengths() in order.
  // Only one prompt at a time may be more than one chunk long (it holds the prompt history).
  // Returns true, with the prompt's last logits written, when the chunk ends the prompt.
  bool prefill_chunk(std::span<const int32_t> prompt, int64_t start, int64_t count, int64_t slot, float* logits);
  // Gives up the chunked prompt of `slot`, if it has one in progress (a cancelled request).
  void abandon_prefill(int64_t slot);
  // One decode step for up to the largest batch bucket of sequences; logits is [batch][vocab].
  void decode(std::span<const DecodeInput> batch, float* logits);

  // For evaluation tools; empty turns it off. Costs nothing while unset.
  void set_attention_observer(AttentionObserver observer);

  const graph::GraphCache& graphs() const { return graphs_; }
  // Times the arena was allocated: once, at construction.
  int64_t arena_allocations() const { return arena_allocations_; }
  // Decode steps run in slices of rows, each on one thread (graph::Executor::run).
  int64_t sliced_steps() const { return executor_.sliced_steps(); }
  int64_t arena_bytes() const { return static_cast<int64_t>(arena_.size()); }
  // Seconds prefill spent moving prompts into slots (SnapKV selection included), in all.
  double compaction_seconds() const { return compaction_seconds_; }
  // Tokens dropped from caches so far: by SnapKV at prefill and by ring overwrites at decode.
  int64_t evicted_tokens() const { return evicted_tokens_; }
  // Decode rows run so far: real sequences, and padding up to the batch buckets.
  int64_t decode_rows() const { return decode_rows_; }
  int64_t padded_rows() const { return padded_rows_; }
  // Adds each op's wall time to `profile` from now on (nullptr stops it).
  void set_profile(graph::OpProfile* profile) { executor_.set_profile(profile); }
  // Runs only this rank's shard from now on, joining the others through `collectives` (see
  // graph::Executor::set_collectives); the plan's shards must be collectives->size(), and a plan
  // that holds one shard must be this rank's.
  void set_collectives(graph::Collectives* collectives);
  // Tells `relay` of every step before it runs (nullptr: nobody): the leading rank's runner
  // relays, the others' take the relayed steps.
  void set_step_relay(StepRelay* relay) { relay_ = relay; }
  const StepRelay* step_relay() const { return relay_; }
  // This runner's time in steps so far, and the part spent in collectives.
  RankSeconds seconds() const { return {step_seconds_, executor_.collective_seconds()}; }

 private:
  class Bindings;
  // Runs the compiled graph of this phase and bucket size; throws ContractError if there is none.
  const float* run_step(graph::Phase phase, int64_t size, Bindings& bindings, const graph::StepRows& rows);

  const Model& model_;
  SlotKvCache& cache_;
  graph::GraphCache graphs_;
  int32_t held_shard_;  // the plan's: -1 when every shard's weights and cache are here
  std::unique_ptr<HeldWeightSlices> held_slices_;  // the held shard's column slices
  std::unique_ptr<GroupedWeights> grouped_;         // the matrices read in row groups
  bool joined_ = false;  // collectives are set: only the own shard runs here
  graph::Executor executor_;
  LazyPages arena_;  // of the largest graph; a rank writes, so holds, only its pages
  int64_t arena_allocations_ = 0;
  // The dense keys and values of the prompt being prefilled in chunks ([layer][keys|values]
  // [context][held kv width]), allocated at start-up when a prompt can outgrow the largest bucket.
  LazyPages history_;  // of floats
  int64_t history_slot_ = -1;    // the slot whose prompt it holds, -1 when free
  int64_t history_length_ = 0;   // positions it holds
  double compaction_seconds_ = 0.0;
  double step_seconds_ = 0.0;  // in run_step
  int64_t evicted_tokens_ = 0, decode_rows_ = 0, padded_rows_ = 0;
  kernels::ThreadPool& pool_;
  AttentionObserver observer_;
  StepRelay* relay_ = nullptr;
};

}  // namespace snapstream::runtime
