// Op-by-op execution. The graph's shapes are its bucket's (the emulated device prices them);
// the CPU computes only the real rows, since every op but attention works row by row and
// attention reads real rows only, so padded rows would be work whose results nobody reads.
#include "graph/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <vector>

#include "graph/errors.h"
#include "kernels/activation_rounding.h"
#include "kernels/attention.h"
#include "kernels/dequantize.h"
#include "kernels/matmul.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/swiglu.h"

namespace snapstream::graph {
namespace {
// Decode steps of a model whose matrices take at most this many bytes run their rows apart. Each
// thread then reads every matrix once per step, from its own caches, instead of meeting the
// other threads at each of the step's ops: a model this small (stories260K: 1 MB) does a few
// microseconds of work per op, and a hand-off plus the wait for the slowest share cost as much.
// A larger model would read its weights from memory once per thread, where the ops' hand-offs
// are cheap beside the work.
constexpr int64_t kRowSplitMaxMatrixBytes = int64_t{4} << 20;
// Rows a slice takes at least: the matmul tiles take four activation rows at a time.
constexpr int64_t kRowSliceMinRows = 4;
// What rotating or gating one value costs in the thread pool's units (multiply-adds): a batch's
// rows are shared out when there are enough of them (16 decode rows of llama-110m are), while one
// row stays on the calling thread.
constexpr int64_t kElementwiseCost = 4;
}  // namespace

// One slice of a step's rows, run through every op on a thread of its own. It has an arena of
// its own: the graph's tensors share arena bytes wherever their lifetimes do not overlap, and
// slices that reach different ops at the same time would write each other's rows.
struct Executor::RowSlice {
  kernels::ThreadPool pool{1};  // no workers: each kernel runs on the thread that runs the slice
  Executor executor{pool};
  int64_t first_row = 0;
  StepRows rows;
  std::vector<std::byte> arena_storage;
  std::byte* arena = nullptr;  // arena_storage from its first 64-byte boundary
  OpProfile profile;
  std::exception_ptr error;

  void reserve_arena(int64_t bytes) {
    constexpr size_t kAlignment = 64;
    if (arena != nullptr && arena + bytes <= arena_storage.data() + arena_storage.size()) return;
    arena_storage.assign(static_cast<size_t>(bytes) + kAlignment, std::byte{0});
    const auto address = reinterpret_cast<uintptr_t>(arena_storage.data());
    arena = arena_storage.data() + (kAlignment - address % kAlignment) % kAlignment;
  }
};

Executor::Executor(kernels::ThreadPool& pool) : pool_(pool) {}
Executor::~Executor() = default;

int64_t Executor::live_rows(int32_t id) const {
  return std::min(graph_->tensors[static_cast<size_t>(id)].shape.front(), real_rows_);
}

float* Executor::tensor(int32_t id) const {
  const Tensor& t = graph_->tensors[static_cast<size_t>(id)];
  return reinterpret_cast<float*>(arena_ + t.offset);
}

int64_t Executor::width(int32_t id) const { return graph_->tensors[static_cast<size_t>(id)].shape.back(); }

const float* Executor::rounded_slice(const Op& op, int64_t rows, kernels::DType weight_dtype) {
  int64_t whole = 0;
  for (const int32_t part : op.row_parts) whole += width(part);
  const int64_t begin = op.weight.col_begin, cols = op.weight.col_end - op.weight.col_begin;
  if (begin < 0 || cols <= 0 || begin + cols > whole) throw GraphError("a sharded matmul's columns lie outside its row parts");
  whole_row_.resize(static_cast<size_t>(rows * whole));
  row_slice_.resize(static_cast<size_t>(rows * cols));
  gather_columns(op.row_parts, rows, whole_row_.data());
  kernels::round_activations(weight_dtype, whole_row_.data(), rows, whole, whole_row_.data());
  for (int64_t r = 0; r < rows; ++r) std::copy_n(whole_row_.data() + r * whole + begin, cols, row_slice_.data() + r * cols);
  return row_slice_.data();
}

const std::vector<const float*>& Executor::shard_parts(std::span<const int32_t> parts) {
  sources_.clear();
  if (collectives_ == nullptr) {
    for (const int32_t part : parts) sources_.push_back(tensor(part));
    return sources_;
  }
  int64_t total = 0;
  for (const int64_t count : counts_) total += count;
  gathered_.resize(static_cast<size_t>(total));
  const auto start = std::chrono::steady_clock::now();
  collectives_->all_gather(tensor(parts[static_cast<size_t>(collectives_->rank())]), counts_, gathered_.data());
  collective_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const float* at = gathered_.data();
  for (const int64_t count : counts_) {
    sources_.push_back(at);
    at += count;
  }
  return sources_;
}

void Executor::gather_columns(std::span<const int32_t> parts, int64_t rows, float* out) {
  int64_t whole = 0;
  counts_.clear();
  for (const int32_t part : parts) {
    whole += width(part);
    counts_.push_back(rows * width(part));
  }
  const std::vector<const float*>& sources = shard_parts(parts);
  int64_t column = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const int64_t w = width(parts[i]);
    for (int64_t r = 0; r < rows; ++r) std::copy_n(sources[i] + r * w, w, out + r * whole + column);
    column += w;
  }
}

void Executor::sum_shards(std::span<const int32_t> parts, int64_t values, float* out) {
  // Gathered and summed here in shard order, not reduced by the transport in its own order:
  // every rank, and a single process running every shard, then adds the same floats alike.
  counts_.assign(parts.size(), values);
  const std::vector<const float*>& sources = shard_parts(parts);
  std::memcpy(out, sources.front(), static_cast<size_t>(values) * sizeof(float));
  for (size_t shard = 1; shard < sources.size(); ++shard)
    for (int64_t i = 0; i < values; ++i) out[i] += sources[shard][i];
}

void Executor::begin_run(const Graph& graph, ExecutionBindings& bindings, const StepRows& rows, std::byte* arena,
                         int64_t first_row) {
  graph_ = &graph;
  bindings_ = &bindings;
  rows_ = &rows;
  arena_ = arena;
  first_row_ = first_row;
  bucket_rows_ = graph.key.batch * graph.key.length;
  real_rows_ = static_cast<int64_t>(rows.tokens.size());
  turns_ready_ = false;
}

const float* Executor::run(const Graph& graph, ExecutionBindings& bindings, const StepRows& rows, std::byte* arena) {
  begin_run(graph, bindings, rows, arena, 0);
  if (real_rows_ < 1 || real_rows_ > bucket_rows_)
    throw GraphError(std::to_string(real_rows_) + " rows do not fit the graph's bucket of " + std::to_string(bucket_rows_));
  if (collectives_ != nullptr && graph.shards != collectives_->size())
    throw GraphError("a graph of " + std::to_string(graph.shards) + " shards cannot run on " + std::to_string(collectives_->size()) +
                     " ranks");
  if (graph.key.phase == Phase::Decode && static_cast<int64_t>(rows.positions.size()) != real_rows_)
    throw GraphError("a decode step needs one position per sequence");
  if (!rows.shifted_positions.empty() && static_cast<int64_t>(rows.shifted_positions.size()) != real_rows_)
    throw GraphError("shifted positions, when given, need one per sequence");
  const int64_t slices = row_slices();
  if (slices > 0) {
    run_row_slices(slices);
    ++sliced_steps_;
  } else {
    const kernels::ThreadPool::Burst burst(pool_);
    run_ops(graph.ops, std::nullopt);
  }
  return tensor(graph.ops.back().outputs.front());
}

int64_t Executor::row_slices() const {
  if (pool_.size() < 2 || graph_->key.phase != Phase::Decode || collectives_ != nullptr || graph_->shards != 1 ||
      bindings_->observes_queries())
    return 0;
  for (const Tensor& t : graph_->tensors)
    if (t.in_arena() && (t.shape.size() != 2 || t.shape.front() != bucket_rows_ || t.dtype != kernels::DType::F32)) return 0;
  if (matrix_bytes(graph_->ops, std::nullopt) > kRowSplitMaxMatrixBytes) return 0;
  // Fewer rows than two slices take run on the calling thread alone: shared with another
  // thread, op by op, such a step is slower (stories260K at one sequence, two threads: a median
  // of 19.3k tokens/s against 25.2k on one, and twice the spread).
  return std::clamp<int64_t>(real_rows_ / kRowSliceMinRows, 1, pool_.size());
}

int64_t Executor::matrix_bytes(std::span<const Op> ops, std::optional<int64_t> layer) const {
  int64_t bytes = 0;
  for (const Op& op : ops) {
    if (!layer && op.kind == OpKind::LoopedLayers) {
      for (int64_t l = 0; l < op.loop_count; ++l) bytes += matrix_bytes(op.body, op.first_layer + l);
    } else if (!layer && op.kind == OpKind::FusedLayer) {
      bytes += matrix_bytes(op.body, op.layer);
    } else if (op.kind == OpKind::MatMul) {
      bytes += weight_of(op, layer.value_or(op.layer)).total_bytes();
    }
  }
  return bytes;
}

void Executor::run_row_slices(int64_t slices) {
  while (static_cast<int64_t>(slices_.size()) < slices) slices_.push_back(std::make_unique<RowSlice>());
  for (int64_t i = 0; i < slices; ++i) {
    RowSlice& slice = *slices_[static_cast<size_t>(i)];
    slice.first_row = real_rows_ * i / slices;
    const auto first = static_cast<size_t>(slice.first_row);
    const auto count = static_cast<size_t>(real_rows_ * (i + 1) / slices - slice.first_row);
    slice.rows = *rows_;
    slice.rows.tokens = rows_->tokens.subspan(first, count);
    slice.rows.positions = rows_->positions.subspan(first, count);
    if (!rows_->shifted_positions.empty()) slice.rows.shifted_positions = rows_->shifted_positions.subspan(first, count);
    slice.reserve_arena(graph_->arena_bytes);
    slice.profile = {};
    slice.executor.set_profile(profile_ != nullptr ? &slice.profile : nullptr);
    slice.error = nullptr;
  }
  // One job of one slice per thread. A thread that is late (descheduled) leaves its slice to the
  // others, which run it after their own.
  constexpr int64_t kSliceCost = int64_t{1} << 40;  // always worth a thread of its own
  pool_.parallel_for(slices, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      RowSlice& slice = *slices_[static_cast<size_t>(i)];
      // An exception may not leave a worker thread; the caller rethrows it below.
      try {
        slice.executor.begin_run(*graph_, *bindings_, slice.rows, slice.arena, slice.first_row);
        slice.executor.run_ops(graph_->ops, std::nullopt);
        // The step's output (its logits), in this arena's rows as in the slice's own.
        const Tensor& out = graph_->tensors[static_cast<size_t>(graph_->ops.back().outputs.front())];
        const int64_t row_bytes = out.bytes() / out.shape.front();
        std::memcpy(arena_ + out.offset + slice.first_row * row_bytes, slice.arena + out.offset,
                    static_cast<size_t>(static_cast<int64_t>(slice.rows.tokens.size()) * row_bytes));
      } catch (...) {
        slice.error = std::current_exception();
      }
    }
  }, kSliceCost);
  for (int64_t i = 0; i < slices; ++i)
    if (slices_[static_cast<size_t>(i)]->error) std::rethrow_exception(slices_[static_cast<size_t>(i)]->error);
  if (profile_ == nullptr) return;
  // The slices ran side by side: a step spent about their mean on each kind of op.
  for (size_t kind = 0; kind < OpProfile::kKinds; ++kind) {
    double seconds = 0.0;
    for (int64_t i = 0; i < slices; ++i) seconds += slices_[static_cast<size_t>(i)]->profile.seconds[kind];
    profile_->seconds[kind] += seconds / static_cast<double>(slices);
    profile_->calls[kind] += slices_.front()->profile.calls[kind];
  }
}

void Executor::run_ops(std::span<const Op> ops, std::optional<int64_t> layer) {
  for (size_t i = 0; i < ops.size();) {
    const Op& op = ops[i];
    // Layer kernels only at the top; inside one, run_op refuses them.
    if (!layer && op.kind == OpKind::LoopedLayers) {
      for (int64_t l = 0; l < op.loop_count; ++l) run_ops(op.body, op.first_layer + l);
      ++i;
      continue;
    }
    if (!layer && op.kind == OpKind::FusedLayer) {
      run_ops(op.body, op.layer);
      ++i;
      continue;
    }
    if (!runs_here(op)) {
      ++i;
      continue;
    }
    const size_t count = std::max<size_t>(shared_input_matmuls(ops, i), 1);
    run_timed(ops.subspan(i, count), layer.value_or(op.layer));
    i += count;
  }
}

void Executor::run_timed(std::span<const Op> ops, int64_t layer) {
  const auto start = profile_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (ops.size() > 1)
    run_matmuls(ops, layer);
  else
    run_op(ops.front(), layer);
  if (profile_) profile_->add(ops.front().kind, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

size_t Executor::shared_input_matmuls(std::span<const Op> ops, size_t first) const {
  auto joins = [&](const Op& op) {
    return op.kind == OpKind::MatMul && op.row_parts.empty() && op.inputs[0] == ops[first].inputs[0] &&
           op.layer == ops[first].layer && runs_here(op);
  };
  size_t count = 0;
  while (first + count < ops.size() && joins(ops[first + count])) ++count;
  return count;
}

void Executor::run_matmuls(std::span<const Op> ops, int64_t layer) {
  group_weights_.clear();
  group_outputs_.clear();
  for (const Op& op : ops) {
    group_weights_.push_back(weight_of(op, layer));
    group_outputs_.push_back(tensor(op.outputs[0]));
  }
  const int64_t m = live_rows(ops.front().inputs[0]);
  kernels::matmul_group(pool_, tensor(ops.front().inputs[0]), m, group_weights_, group_outputs_, matmul_path());
  for (size_t k = 0; k < ops.size(); ++k) add_bias(ops[k], layer, m, group_weights_[k].rows);
}

kernels::WeightView slice_of(const kernels::WeightView& whole, const WeightSlice& slice) {
  kernels::WeightView w = whole;
  if (slice.row_end > slice.row_begin) w = w.row_slice(slice.row_begin, slice.row_end);
  if (slice.col_end > slice.col_begin) w = w.column_slice(slice.col_begin, slice.col_end);
  return w;
}

kernels::WeightView ExecutionBindings::matrix_slice(const WeightSlice& slice, int64_t layer) const {
  return slice_of(matrix(slice.kind, layer), slice);
}

bool Executor::writes_cache(const Op& op) const {
  const int64_t sharers = graph_->shards / std::clamp<int64_t>(graph_->shape.kv_heads, 1, graph_->shards);
  return collectives_ != nullptr || sharers <= 1 || (op.shard + 1) % sharers == 0;
}

kernels::WeightView Executor::weight_of(const Op& op, int64_t layer) const { return bindings_->matrix_slice(op.weight, layer); }

kernels::MatmulPath Executor::matmul_path() const {
  // Decode keeps every row's result independent of the batch (see MatmulPath::RowDots).
  return graph_->key.phase == Phase::Decode ? kernels::MatmulPath::RowDots : kernels::MatmulPath::Auto;
}

void Executor::add_bias(const Op& op, int64_t layer, int64_t rows, int64_t cols) {
  if (!op.add_bias) return;
  const float* bias = bindings_->bias(op.weight.kind, layer);
  if (bias == nullptr) throw GraphError("the model has no bias for " + std::string(weight_kind_name(op.weight.kind)));
  bias += op.weight.row_begin;
  float* y = tensor(op.outputs[0]);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] += bias[j];
}

void Executor::run_op(const Op& op, int64_t layer) {
  const ModelShape& s = graph_->shape;
  const bool decode = graph_->key.phase == Phase::Decode;
  auto position = [&](int64_t row) { return decode ? rows_->positions[static_cast<size_t>(row)] : rows_->first_position + row; };
  switch (op.kind) {
    case OpKind::Embed: {
      const kernels::WeightView table = bindings_->matrix(WeightKind::Embedding, -1);
      float* x = tensor(op.outputs[0]);
      for (int64_t r = 0; r < real_rows_; ++r)
        kernels::dequantize_row(table.dtype, table.row(rows_->tokens[static_cast<size_t>(r)]), s.dim, x + r * s.dim);
      return;
    }
    case OpKind::RmsNorm: {
      const float* weight = bindings_->vector(op.weight.kind, layer);
      const float* in = tensor(op.inputs[0]);
      if (op.last_row_only)
        kernels::rmsnorm(in + (real_rows_ - 1) * s.dim, weight, 1, s.dim, bindings_->norm_eps(), tensor(op.outputs[0]));
      else
        kernels::rmsnorm(in, weight, real_rows_, s.dim, bindings_->norm_eps(), tensor(op.outputs[0]));
      return;
    }
    case OpKind::MatMul: {
      const kernels::WeightView w = weight_of(op, layer);
      const int64_t m = live_rows(op.inputs[0]);
      float* y = tensor(op.outputs[0]);
      if (!op.row_parts.empty() && kernels::activation_block(w.dtype) != 0)
        kernels::matmul(pool_, rounded_slice(op, m, w.dtype), m, w, y, matmul_path(), kernels::ActivationGrid::Rounded);
      else
        kernels::matmul(pool_, tensor(op.inputs[0]), m, w, y, matmul_path());
      add_bias(op, layer, m, w.rows);
      return;
    }
    case OpKind::Rope: {
      const int64_t heads = op.head_end - op.head_begin, kv_heads = op.kv_head_end - op.kv_head_begin;
      float* q = tensor(op.inputs[0]);
      float* k = tensor(op.inputs[1]);
      // Every layer turns a row by the same position: the first rope op of a run finds the
      // cosines and sines (their libm calls were most of this op), the others reuse them.
      const kernels::RopeSpec rope = bindings_->rope();
      if (!turns_ready_) {
        turns_.resize(static_cast<size_t>(real_rows_ * s.head_dim));
        for (int64_t r = 0; r < real_rows_; ++r) kernels::rope_turns(s.head_dim, position(r), rope, turns_.data() + r * s.head_dim);
        turns_ready_ = true;
      }
      pool_.parallel_for(real_rows_, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const float* turns = turns_.data() + r * s.head_dim;
          kernels::rope_by_turns(q + r * heads * s.head_dim, heads, s.head_dim, rope.pairs, turns);
          kernels::rope_by_turns(k + r * kv_heads * s.head_dim, kv_heads, s.head_dim, rope.pairs, turns);
        }
      }, kElementwiseCost * (heads + kv_heads) * s.head_dim);
      return;
    }
    case OpKind::CausalAttention: {
      const kernels::AttentionShape shard{op.head_end - op.head_begin, op.kv_head_end - op.kv_head_begin, s.head_dim};
      const float* q = tensor(op.inputs[0]);
      const float* k = tensor(op.inputs[1]);
      const float* v = tensor(op.inputs[2]);
      float* out = tensor(op.outputs[0]);
      const int64_t first = rows_->first_position;
      if (first == 0 && rows_->prompt_ends) {
        kernels::causal_attention(pool_, q, real_rows_, 0, k, v, shard, out);
      } else {
        // A chunk of a longer prompt: append to the prompt's history and attend over all of it.
        const ExecutionBindings::PromptHistory history = bindings_->prompt_history(layer, op.kv_head_begin);
        const auto width = static_cast<size_t>(real_rows_ * shard.kv_width());
        std::copy_n(k, width, history.keys + first * shard.kv_width());
        std::copy_n(v, width, history.values + first * shard.kv_width());
        k = history.keys;
        v = history.values;
        kernels::causal_attention(pool_, q, real_rows_, first, k, v, shard, out);
      }
      if (!rows_->prompt_ends || !writes_cache(op)) return;
      const int64_t window = std::min(bindings_->observation_window(), real_rows_);
      if (op.inputs.size() < 4) {
        bindings_->compact(layer, shard, op.kv_head_begin, k, v, first + real_rows_, q + (real_rows_ - window) * shard.q_width(),
                           window);
        return;
      }
      // A replicated KV head: its whole query group's window, from every shard's gathered queries.
      const kernels::AttentionShape group{s.heads / s.kv_heads, shard.kv_heads, s.head_dim};
      const float* all_queries = tensor(op.inputs[3]) + op.kv_head_begin * group.q_width();
      group_queries_.resize(static_cast<size_t>(window * group.q_width()));
      for (int64_t r = 0; r < window; ++r)
        std::copy_n(all_queries + (real_rows_ - window + r) * s.heads * s.head_dim, group.q_width(),
                    group_queries_.data() + r * group.q_width());
      bindings_->compact(layer, group, op.kv_head_begin, k, v, first + real_rows_, group_queries_.data(), window);
      return;
    }
    case OpKind::DecodeAttention: {
      const kernels::AttentionShape shard{op.head_end - op.head_begin, op.kv_head_end - op.kv_head_begin, s.head_dim};
      caches_.resize(static_cast<size_t>(bucket_rows_));  // grows once to the largest bucket
      for (int64_t r = 0; r < real_rows_; ++r) caches_[static_cast<size_t>(r)] = bindings_->cache(first_row_ + r, layer, op.kv_head_begin);
      const float* q = tensor(op.inputs[0]);
      const float* k = tensor(op.inputs[1]);
      const float* v = tensor(op.inputs[2]);
      float* out = tensor(op.outputs[0]);
      const float* shifted_q = nullptr;
      if (!rows_->shifted_positions.empty()) {
        shifted_q_.assign(q, q + real_rows_ * shard.q_width());
        for (int64_t r = 0; r < real_rows_; ++r)
          kernels::rope(shifted_q_.data() + r * shard.q_width(), shard.heads, s.head_dim,
                        rows_->shifted_positions[static_cast<size_t>(r)] - position(r), bindings_->rope());
        shifted_q = shifted_q_.data();
      }
      bindings_->observe_queries(layer, op.kv_head_begin, shard, real_rows_, q, k);
      kernels::decode_attention(pool_, real_rows_, q, shifted_q, k, v, caches_.data(), bindings_->cache_capacity(), shard, out);
      // Stored only now, so a ring entry this token evicts was still seen by its own attention.
      if (!writes_cache(op)) return;
      pool_.parallel_for(real_rows_, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          bindings_->store(first_row_ + r, layer, op.kv_head_begin, shard.kv_heads, k + r * shard.kv_width(), v + r * shard.kv_width());
      }, kElementwiseCost * 2 * shard.kv_width());
      return;
    }
    case OpKind::SwiGLU: {
      float* gate = tensor(op.inputs[0]);
      const float* up = tensor(op.inputs[1]);
      const int64_t row = width(op.inputs[0]);
      pool_.parallel_for(live_rows(op.inputs[0]), [&](int64_t begin, int64_t end) {
        kernels::swiglu(gate + begin * row, up + begin * row, (end - begin) * row);
      }, kElementwiseCost * row);
      return;
    }
    case OpKind::Add: {
      float* x = tensor(op.inputs[0]);
      const float* y = tensor(op.inputs[1]);
      for (int64_t i = 0; i < live_rows(op.inputs[0]) * s.dim; ++i) x[i] += y[i];
      return;
    }
    case OpKind::AllReduce:
      sum_shards(op.inputs, live_rows(op.inputs[0]) * s.dim, tensor(op.outputs[0]));
      return;
    case OpKind::AllGather:
      gather_columns(op.inputs, live_rows(op.outputs[0]), tensor(op.outputs[0]));
      return;
    case OpKind::ReduceScatter:
    case OpKind::HeadMatMul:
    case OpKind::LatentAttention:
    case OpKind::MoeExperts:
      throw GraphError("the CPU executor does not run " + std::string(op_kind_name(op.kind)) +
                       " ops: graphs of latent-attention and mixture-of-experts models are only priced");
    case OpKind::FusedLayer:
    case OpKind::LoopedLayers:
      throw GraphError("nested layer kernels are not supported");
  }
}

}  // namespace snapstream::graph
