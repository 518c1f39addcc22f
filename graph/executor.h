// Runs a compiled graph on the CPU: each op calls its kernel on arena tensors, with weights and
// the KV cache supplied by the caller through ExecutionBindings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "graph/collectives.h"
#include "graph/ir.h"
#include "graph/op_profile.h"
#include "kernels/attention_shape.h"
#include "kernels/decode_attention.h"
#include "kernels/matmul.h"
#include "kernels/rope.h"
#include "kernels/thread_pool.h"
#include "kernels/weight_view.h"

namespace snapstream::graph {

// Rows [slice.row_begin, row_end), then columns [col_begin, col_end) of `whole` (empty ranges:
// all of them).
kernels::WeightView slice_of(const kernels::WeightView& whole, const WeightSlice& slice);

// What a run needs from outside the graph. `kv_begin` is the first KV head of a shard.
class ExecutionBindings {
 public:
  virtual ~ExecutionBindings() = default;
  virtual kernels::WeightView matrix(WeightKind kind, int64_t layer) const = 0;
  // The part of a matrix a shard's matmul reads: by default sliced from matrix(); bindings that
  // hold their own copy of a slice return that.
  virtual kernels::WeightView matrix_slice(const WeightSlice& slice, int64_t layer) const;
  virtual const float* vector(WeightKind kind, int64_t layer) const = 0;  // norm weights
  // The bias of a projection, one value per weight row; only asked for by ops with add_bias.
  virtual const float* bias(WeightKind kind, int64_t layer) const = 0;
  virtual int64_t cache_capacity() const = 0;
  virtual kernels::RopeSpec rope() const = 0;
  virtual float norm_eps() const = 0;
  // Decode: row `row`'s cache for `layer`, seen from KV head kv_begin.
  virtual kernels::CacheView cache(int64_t row, int64_t layer, int64_t kv_begin) = 0;
  // Decode: stores row `row`'s new key and value for kv_count heads from kv_begin. Called for
  // several rows at once from the pool's threads (each row's cache is its own), and only after
  // cache() has answered for the same row and heads, so it has nothing left to reject: it must
  // not throw.
  virtual void store(int64_t row, int64_t layer, int64_t kv_begin, int64_t kv_count, const float* key, const float* value) = 0;
  // Prefill: hands a layer's prompt keys/values ([length][shard kv width]) and the window's
  // queries ([window][shard q width]) to the cache, for the shard's KV heads.
  virtual void compact(int64_t layer, const kernels::AttentionShape& shard, int64_t kv_begin, const float* keys,
                       const float* values, int64_t length, const float* window_queries, int64_t window) = 0;
  virtual int64_t observation_window() const = 0;
  // Chunked prefill: the prompt's keys and values so far, for the shard starting at kv_begin,
  // each [context][shard kv width]. A chunk appends its rows and attends over all of them.
  struct PromptHistory {
    float* keys = nullptr;
    float* values = nullptr;
  };
  virtual PromptHistory prompt_history(int64_t layer, int64_t kv_begin) = 0;
  // Decode, before each layer's attention: the rows' rotated queries [rows][shard q width] and
  // new keys [rows][shard kv width], for tools that study attention. Ignored by default.
  virtual void observe_queries(int64_t layer, int64_t kv_begin, const kernels::AttentionShape& shard, int64_t rows, const float* q,
                               const float* k) {
    (void)layer, (void)kv_begin, (void)shard, (void)rows, (void)q, (void)k;
  }
  // Whether observe_queries does anything. An observed step sees each layer's rows in one call,
  // so it never runs its rows apart (Executor::run).
  virtual bool observes_queries() const { return false; }
};

// The real rows of a step; the graph's bucket may hold more (padding).
struct StepRows {
  std::span<const int32_t> tokens;     // decode: one per sequence; prefill: the chunk's tokens
  std::span<const int64_t> positions;  // decode: each sequence's RoPE position
  // Decode with re-indexed positions: the RoPE position of each sequence's queries for the
  // cache entries below its view's shifted_end. Empty when no sequence has such entries.
  std::span<const int64_t> shifted_positions;
  int64_t first_position = 0;          // prefill: the position of the chunk's first token
  bool prompt_ends = true;             // prefill: this chunk ends the prompt (SnapKV runs now)
};

class Executor {
 public:
  explicit Executor(kernels::ThreadPool& pool);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs `graph` using `arena` (at least graph.arena_bytes, 64-byte aligned) for its tensors.
  // Returns the logits in the arena: [real rows][vocab] for decode, [1][vocab] for prefill (the
  // chunk's last token). A decode step of a model small enough to stay in the cores' caches
  // runs its rows apart: each thread takes a slice of the sequences through every op, instead of
  // every thread taking part in every op (executor.cpp says why); a step of few rows runs on the
  // calling thread alone. A row's result is the same either way, bit for bit.
  const float* run(const Graph& graph, ExecutionBindings& bindings, const StepRows& rows, std::byte* arena);
  // Adds each op's wall time to `profile` from now on (nullptr stops it); costs a clock read per op.
  void set_profile(OpProfile* profile) { profile_ = profile; }
  // From now on runs only shard collectives->rank()'s ops and the replicated ones, joining the
  // other shards' results through `collectives` (nullptr: every shard runs here). Graphs must
  // then have collectives->size() shards.
  void set_collectives(Collectives* collectives) { collectives_ = collectives; }
  // Seconds spent in collectives so far: gathering other ranks' parts, waiting for them included.
  double collective_seconds() const { return collective_seconds_; }
  // Steps run so far in slices of rows (see run), one slice included.
  int64_t sliced_steps() const { return sliced_steps_; }

 private:
  // Runs ops in order, in `layer` (the graph's top level: each op's own, and layer kernels run
  // their bodies); consecutive matmuls that read one input run as one group.
  void run_ops(std::span<const Op> ops, std::optional<int64_t> layer);
  // Points this executor at one run's graph, bindings, rows and arena. `first_row` is the step's
  // row (as the bindings number rows) that is this run's row 0: a slice's first, else 0.
  void begin_run(const Graph& graph, ExecutionBindings& bindings, const StepRows& rows, std::byte* arena, int64_t first_row);
  // How many slices of rows this step runs apart, each on one thread (one slice: on the calling
  // thread alone); 0 runs its rows together, every op on the whole pool.
  int64_t row_slices() const;
  // Bytes of the weight matrices `ops` read, in `layer` (see run_ops).
  int64_t matrix_bytes(std::span<const Op> ops, std::optional<int64_t> layer) const;
  void run_row_slices(int64_t slices);
  void run_op(const Op& op, int64_t layer);
  // run_op or run_matmuls, timed when a profile is attached.
  void run_timed(std::span<const Op> ops, int64_t layer);
  // How many ops from `first` on are matmuls of one layer reading ops[first]'s input whole
  // (tensor-parallel row parts excluded) that run here; 0 if ops[first] is no such matmul.
  size_t shared_input_matmuls(std::span<const Op> ops, size_t first) const;
  // Whether this attention op writes its KV heads' cache. Shards that share a replicated KV
  // head in one process share its cache: only the last of them writes, after every one has
  // attended over the cache as it was. A rank holds its own copy and always writes it.
  bool writes_cache(const Op& op) const;
  // Whether this process runs `op`: every op without collectives, else its shard's and the
  // replicated ones.
  bool runs_here(const Op& op) const { return collectives_ == nullptr || op.replicated || op.shard == collectives_->rank(); }
  // Each shard's part (of counts_[shard] floats), in shard order: this process's tensors, or
  // gathered from every rank.
  const std::vector<const float*>& shard_parts(std::span<const int32_t> parts);
  // Joins the shards' [rows][width] parts column-wise into [rows][sum of widths] at `out`,
  // gathering the other ranks' parts first when shards run in separate processes.
  void gather_columns(std::span<const int32_t> parts, int64_t rows, float* out);
  // The shards' partial [values] of an all-reduce summed in shard order into `out`.
  void sum_shards(std::span<const int32_t> parts, int64_t values, float* out);
  void run_matmuls(std::span<const Op> ops, int64_t layer);
  kernels::WeightView weight_of(const Op& op, int64_t layer) const;
  kernels::MatmulPath matmul_path() const;
  void add_bias(const Op& op, int64_t layer, int64_t rows, int64_t cols);
  float* tensor(int32_t id) const;
  // The rows of a tensor the step computes: its real rows (one for a last-row tensor).
  int64_t live_rows(int32_t id) const;
  // A column-sliced matmul's input: the shards' parts joined into whole rows, rounded to the
  // weight's 8-bit grid, and this op's columns taken back out.
  const float* rounded_slice(const Op& op, int64_t rows, kernels::DType weight_dtype);
  int64_t width(int32_t id) const;

  kernels::ThreadPool& pool_;
  // A slice of a step's rows with its own single-thread pool and executor (executor.cpp).
  struct RowSlice;
  std::vector<std::unique_ptr<RowSlice>> slices_;
  int64_t first_row_ = 0;  // see begin_run
  const Graph* graph_ = nullptr;
  ExecutionBindings* bindings_ = nullptr;
  const StepRows* rows_ = nullptr;
  std::byte* arena_ = nullptr;
  int64_t real_rows_ = 0;
  int64_t bucket_rows_ = 0;
  OpProfile* profile_ = nullptr;
  Collectives* collectives_ = nullptr;
  double collective_seconds_ = 0.0;
  int64_t sliced_steps_ = 0;
  std::vector<float> gathered_;      // the ranks' parts of a collective, in rank order
  std::vector<int64_t> counts_;      // floats of each shard's part of a collective
  std::vector<const float*> sources_;  // each shard's part of a collective, in shard order
  std::vector<kernels::CacheView> caches_;
  std::vector<float> shifted_q_;  // grows once to the largest bucket's queries
  std::vector<float> turns_;      // each row's rope cosines and sines (kernels::rope_turns) this run
  bool turns_ready_ = false;
  std::vector<float> group_queries_;  // a replicated KV head's window of its whole query group
  // A matmul group's weights and outputs, kept so a step allocates nothing for them.
  std::vector<kernels::WeightView> group_weights_;
  std::vector<float*> group_outputs_;
  std::vector<float> whole_row_, row_slice_;  // a sharded matmul's input row, rounded as one
};

}  // namespace snapstream::graph
