// The bridge between compiled graphs and the runtime: weights come from the loaded model and
// the KV cache from the slot cache manager, through graph::ExecutionBindings.
#include "runtime/graph_runner.h"

#include <algorithm>
#include <chrono>

#include "graph/errors.h"
#include "runtime/errors.h"
#include "runtime/model_weight_kinds.h"
#include "runtime/prompt_check.h"
#include "runtime/prompt_compaction.h"

namespace snapstream::runtime {
namespace {

constexpr int64_t kLongestDefaultPrefill = 4096;

// The model's own shape, with what the CPU engine stores: the loaded weights' type and the slot
// cache's capacity and storage type.
graph::ModelShape served_shape(const graph::ModelShape& model, const SlotKvCache& cache, kernels::DType dtype) {
  graph::ModelShape s = model;
  s.kv_capacity = cache.capacity();
  s.weight_dtype = dtype;
  s.kv_dtype = cache.config().kv_dtype;
  return s;
}

graph::BucketPlan bucket_plan(const GraphPlan& plan, const graph::ModelShape& c, int64_t slots) {
  graph::BucketPlan buckets{plan.decode_batches, plan.prefill_lengths};
  if (buckets.decode_batches.empty()) {
    for (int64_t b = 1; b < slots; b *= 2) buckets.decode_batches.push_back(b);
    buckets.decode_batches.push_back(slots);
  }
  if (buckets.prefill_lengths.empty()) {
    // Longer prompts prefill in chunks of the largest bucket.
    const int64_t longest = std::min<int64_t>(c.context_length, kLongestDefaultPrefill);
    for (int64_t l = 128; l < longest; l *= 4) buckets.prefill_lengths.push_back(l);
    buckets.prefill_lengths.push_back(longest);
  }
  return buckets;
}

// graph/ refuses a shape the plan cannot split or bucket with GraphError: the user's --tp or
// buckets are at fault, so it leaves the runtime as a ConfigError.
graph::GraphCache compile_graphs(const Model& model, const SlotKvCache& cache, const GraphPlan& plan) {
  try {
    return graph::GraphCache(served_shape(model.shape, cache, model.weights.wq_dtype()),
                             bucket_plan(plan, model.shape, cache.slots()),
                             {plan.shards, plan.kernel_looping, graph::AttentionSplit::Heads, true});
  } catch (const graph::GraphError& e) {
    throw ConfigError(e.what());
  }
}

}  // namespace

KvHeadRange held_kv_heads(const graph::ModelShape& model, const GraphPlan& plan) {
  if (plan.held_shard < 0) return {};
  if (plan.held_shard >= plan.shards)
    throw ConfigError("shard " + std::to_string(plan.held_shard) + " is not one of " + std::to_string(plan.shards) + " tensor-parallel shards");
  if (model.kv_heads % plan.shards == 0) {
    const int64_t per_shard = model.kv_heads / plan.shards;
    return {plan.held_shard * per_shard, per_shard};
  }
  // More shards than KV heads: each KV head is replicated on the shards of its query heads.
  if (plan.shards % model.kv_heads != 0)
    throw ConfigError(std::to_string(model.kv_heads) + " KV heads neither divide by nor divide --tp " + std::to_string(plan.shards));
  return {plan.held_shard / (plan.shards / model.kv_heads), 1};
}

class GraphRunner::Bindings final : public graph::ExecutionBindings {
 public:
  Bindings(const Model& model, SlotKvCache& cache, kernels::ThreadPool& pool, const HeldWeightSlices* held_slices,
           const GroupedWeights* grouped, float* history = nullptr, const AttentionObserver* observer = nullptr)
      : model_(model),
        cache_(cache),
        pool_(pool),
        held_slices_(held_slices),
        grouped_(grouped),
        history_(history),
        observer_(observer) {}

  kernels::WeightView matrix(graph::WeightKind kind, int64_t layer) const override { return model_matrix(model_, kind, layer); }
  kernels::WeightView matrix_slice(const graph::WeightSlice& slice, int64_t layer) const override {
    if (held_slices_ != nullptr)
      if (const kernels::WeightView* held = held_slices_->find(slice, layer)) return *held;
    if (grouped_ != nullptr)
      if (const kernels::WeightView* grouped = grouped_->find(slice, layer)) return *grouped;
    return ExecutionBindings::matrix_slice(slice, layer);
  }
  const float* vector(graph::WeightKind kind, int64_t layer) const override { return model_norm(model_, kind, layer); }
  const float* bias(graph::WeightKind kind, int64_t layer) const override { return model_bias(model_, kind, layer); }

  int64_t cache_capacity() const override { return cache_.capacity(); }
  kernels::RopeSpec rope() const override { return model_.rope(); }
  float norm_eps() const override { return model_.shape.norm_eps; }
  int64_t observation_window() const override { return cache_.config().window; }

  kernels::CacheView cache(int64_t row, int64_t layer, int64_t kv_begin) override {
    const auto r = static_cast<size_t>(row);
    const LayerCacheView view = shard_view(slots[r], layer, kv_begin);
    return {view.keys.data, view.values.data, view.live, cache_.extent(slots[r]), shifted_ends.empty() ? 0 : shifted_ends[r],
            view.keys.dtype};
  }

  void store(int64_t row, int64_t layer, int64_t kv_begin, int64_t kv_count, const float* key, const float* value) override {
    const auto r = static_cast<size_t>(row);
    store_token(shard_view(slots[r], layer, kv_begin), kv_count, model_.shape.head_dim, cache_.capacity(), write_entries[r],
                positions[r], key, value);
  }

  void compact(int64_t layer, const kernels::AttentionShape& shard, int64_t kv_begin, const float* keys, const float* values,
               int64_t length, const float* window_queries, int64_t window) override {
    const auto start = std::chrono::steady_clock::now();
    compact_layer(pool_, cache_.config(), model_.rope(), shard, keys, values, length, window_queries, window,
                  shard_view(slots.front(), layer, kv_begin));
    compaction_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  PromptHistory prompt_history(int64_t layer, int64_t kv_begin) override {
    if (history_ == nullptr) throw ContractError("this runner has no prompt history for chunked prefill");
    const graph::ModelShape& c = model_.shape;
    const int64_t held_width = cache_.held_heads().count * c.head_dim;
    float* keys = history_ + layer * 2 * c.context_length * held_width + held_head(kv_begin) * c.context_length * c.head_dim;
    return {keys, keys + c.context_length * held_width};
  }

  void observe_queries(int64_t layer, int64_t kv_begin, const kernels::AttentionShape& shard, int64_t rows, const float* q,
                       const float* k) override {
    if (observer_ != nullptr && *observer_)
      (*observer_)(layer, kv_begin, shard, std::span<const int64_t>(slots).first(static_cast<size_t>(rows)), q, k);
  }
  bool observes_queries() const override { return observer_ != nullptr && *observer_; }

  double compaction_seconds = 0.0;  // time spent moving prompts into the cache, SnapKV included

  // Per step: the slot of each row, where its token goes, and its position; with re-indexed
  // positions also where its key rotates and how many slots use shifted queries.
  std::vector<int64_t> slots, write_entries, positions, rotations, shifted_rotations, shifted_ends;

 private:
  LayerCacheView shard_view(int64_t slot, int64_t layer, int64_t kv_begin) {
    return cache_.layer_view(slot, layer).from_head(held_head(kv_begin), cache_.capacity(), model_.shape.head_dim);
  }
  // KV head `kv_begin` among the held ones; a shard's heads are all held or none.
  int64_t held_head(int64_t kv_begin) const {
    const KvHeadRange held = cache_.held_heads();
    if (kv_begin < held.first || kv_begin >= held.first + held.count)
      throw ContractError("KV head " + std::to_string(kv_begin) + " is not held by this process's cache");
    return kv_begin - held.first;
  }

  const Model& model_;
  SlotKvCache& cache_;
  kernels::ThreadPool& pool_;
  const HeldWeightSlices* held_slices_;
  const GroupedWeights* grouped_;
  float* history_;
  const AttentionObserver* observer_;
};

GraphRunner::GraphRunner(const Model& model, kernels::ThreadPool& pool, SlotKvCache& cache, const GraphPlan& plan)
    : model_(model),
      cache_(cache),
      graphs_(compile_graphs(model, cache, plan)),
      held_shard_(plan.held_shard),
      executor_(pool),
      pool_(pool) {
  if (held_shard_ >= 0) {
    const KvHeadRange heads = held_kv_heads(model.shape, plan), held = cache.held_heads();
    if (held.first != heads.first || held.count != heads.count)
      throw ContractError("the KV cache does not hold shard " + std::to_string(held_shard_) + "'s heads");
    held_slices_ = std::make_unique<HeldWeightSlices>(model, graphs_, held_shard_);
  }
  if (plan.row_groups) grouped_ = std::make_unique<GroupedWeights>(model, graphs_, held_shard_, pool);
  // Copying read every page of those matrices; only the pages read in place from now on need
  // to stay.
  if ((held_slices_ || (grouped_ && grouped_->count() > 0)) && model.mapping) model.mapping->release_resident_pages();
  int64_t arena = 0;
  for (const auto& g : graphs_.graphs()) arena = std::max(arena, g.arena_bytes);
  arena_ = LazyPages(static_cast<size_t>(arena));
  ++arena_allocations_;
  const graph::ModelShape& c = model.shape;
  if (c.context_length - 1 > graphs_.max_prefill_length())
    history_ = LazyPages(sizeof(float) * static_cast<size_t>(c.layers * 2 * c.context_length * cache.held_heads().count * c.head_dim));
}

std::vector<int64_t> GraphRunner::chunk_lengths(int64_t prompt_length) const {
  const int64_t chunk = graphs_.max_prefill_length();
  const int64_t last_at_least = std::min(cache_.config().window, chunk);
  std::vector<int64_t> lengths;
  int64_t left = prompt_length;
  while (left > chunk) {
    // Leave the last chunk at least the observation window.
    const int64_t take = std::min(chunk, left - last_at_least);
    lengths.push_back(take);
    left -= take;
  }
  if (left > 0) lengths.push_back(left);
  return lengths;
}

void GraphRunner::prefill(std::span<const int32_t> prompt, int64_t slot, float* logits) {
  int64_t start = 0;
  for (const int64_t count : chunk_lengths(static_cast<int64_t>(prompt.size()))) {
    prefill_chunk(prompt, start, count, slot, logits);
    start += count;
  }
}

void GraphRunner::abandon_prefill(int64_t slot) {
  if (relay_ != nullptr) relay_->abandon_prefill(slot);
  if (history_slot_ == slot) history_slot_ = -1;
}

bool GraphRunner::prefill_chunk(std::span<const int32_t> prompt, int64_t start, int64_t count, int64_t slot, float* logits) {
  const auto length = static_cast<int64_t>(prompt.size());
  check_prompt(prompt, model_.shape.context_length, model_.tokenizer);
  if (slot < 0 || slot >= cache_.slots()) throw ContractError("prefill slot out of range");
  if (start < 0 || count < 1 || count > length - start || count > graphs_.max_prefill_length())
    throw ContractError("prefill chunk [" + std::to_string(start) + ", +" + std::to_string(count) + ") does not fit a prompt of " +
                        std::to_string(length) + " tokens and the largest bucket (" + std::to_string(graphs_.max_prefill_length()) +
                        ")");
  const bool ends = start + count == length;
  const bool chunked = !(start == 0 && ends);
  if (ends && length > 1 && count < std::min(cache_.config().window, length))
    throw ContractError("the last prefill chunk must hold the observation window; use chunk_lengths()");
  if (chunked) {
    if (history_.empty())
      throw ContractError("every prompt fits one prefill graph here; prefill it in one chunk");
    if (start == 0) {
      if (history_slot_ >= 0 && history_slot_ != slot)
        throw ContractError("slot " + std::to_string(history_slot_) + " is prefilling a long prompt; one at a time");
      history_slot_ = slot;
      history_length_ = 0;
    } else if (history_slot_ != slot || history_length_ != start) {
      throw ContractError("prefill chunk at " + std::to_string(start) + " does not continue slot " + std::to_string(slot) +
                          "'s prompt");
    }
  }
  if (relay_ != nullptr) relay_->prefill_chunk(prompt, start, count, slot);
  const std::span<const int32_t> tokens = prompt.subspan(static_cast<size_t>(start), static_cast<size_t>(count));
  if (start == 0) cache_.reset(slot);
  Bindings bindings(model_, cache_, pool_, held_slices_.get(), grouped_.get(), history_.empty() ? nullptr : reinterpret_cast<float*>(history_.data()));
  bindings.slots = {slot};
  graph::StepRows rows;
  rows.tokens = tokens;
  rows.first_position = start;
  rows.prompt_ends = ends;
  const float* out = run_step(graph::Phase::Prefill, count, bindings, rows);
  compaction_seconds_ += bindings.compaction_seconds;
  if (chunked) history_length_ = start + count;
  if (!ends) return false;
  if (chunked) history_slot_ = -1;
  std::copy_n(out, model_.shape.vocab, logits);
  cache_.state(slot) = state_after_prompt(cache_.config(), length);
  evicted_tokens_ += std::max<int64_t>(0, length - cache_.capacity());
  return true;
}

const float* GraphRunner::run_step(graph::Phase phase, int64_t size, Bindings& bindings, const graph::StepRows& rows) {
  // The checks above keep every step inside the compiled buckets: a refusal from graph/ here is
  // the runtime's own fault.
  try {
    const bool decode = phase == graph::Phase::Decode;
    if (held_shard_ >= 0 && !joined_) throw ContractError("a runner holding one shard runs only once joined to the other ranks");
    const graph::Graph& graph = decode ? graphs_.decode(size) : graphs_.prefill(size);
    if (decode) {
      decode_rows_ += size;
      padded_rows_ += graph.key.batch - size;
    }
    const auto start = std::chrono::steady_clock::now();
    const float* logits = executor_.run(graph, bindings, rows, arena_.data());
    step_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (relay_ != nullptr) relay_->step_done(seconds());
    return logits;
  } catch (const graph::GraphError& e) {
    throw ContractError(std::string("a step outside the compiled graphs: ") + e.what());
  }
}

void GraphRunner::set_collectives(graph::Collectives* collectives) {
  const int32_t shards = graphs_.graphs().empty() ? 1 : graphs_.graphs().front().shards;
  if (collectives != nullptr && collectives->size() != shards)
    throw ConfigError("graphs split into " + std::to_string(shards) + " tensor-parallel shards cannot run on " +
                      std::to_string(collectives->size()) + " ranks: give --tp " + std::to_string(collectives->size()));
  if (collectives != nullptr && held_shard_ >= 0 && collectives->rank() != held_shard_)
    throw ConfigError("this runner holds shard " + std::to_string(held_shard_) + " but runs as rank " + std::to_string(collectives->rank()));
  executor_.set_collectives(collectives);
  joined_ = collectives != nullptr;
}

void GraphRunner::set_attention_observer(AttentionObserver observer) { observer_ = std::move(observer); }

void GraphRunner::decode(std::span<const DecodeInput> batch, float* logits) {
  const auto b = static_cast<int64_t>(batch.size());
  if (b < 1 || b > graphs_.max_decode_batch())
    throw ContractError("a decode step of " + std::to_string(b) + " sequences exceeds the largest batch bucket (" +
                        std::to_string(graphs_.max_decode_batch()) + ")");
  Bindings bindings(model_, cache_, pool_, held_slices_.get(), grouped_.get(), nullptr, &observer_);
  std::vector<int32_t> tokens;
  for (int64_t i = 0; i < b; ++i) {
    const DecodeInput& in = batch[static_cast<size_t>(i)];
    if (in.slot < 0 || in.slot >= cache_.slots()) throw ContractError("decode slot out of range");
    if (std::count(bindings.slots.begin(), bindings.slots.end(), in.slot) != 0)
      throw ContractError("a decode batch names slot " + std::to_string(in.slot) + " twice");
    if (cache_.state(in.slot).length >= model_.shape.context_length && !cache_.streams_past_context())
      throw ContractError("the sequence in slot " + std::to_string(in.slot) + " has reached the context length");
    tokens.push_back(in.token);
    bindings.slots.push_back(in.slot);
    bindings.positions.push_back(cache_.state(in.slot).length);
    bindings.rotations.push_back(cache_.next_rotation(in.slot));
    bindings.shifted_ends.push_back(cache_.shifted_end(in.slot));
    bindings.shifted_rotations.push_back(cache_.shifted_rotation());
  }
  model_.tokenizer.check_ids(tokens);
  for (int64_t slot : bindings.slots) {
    if (cache_.state(slot).filled == cache_.capacity()) ++evicted_tokens_;  // the ring overwrites its oldest
    bindings.write_entries.push_back(cache_.next_write_entry(slot));
  }
  if (relay_ != nullptr) relay_->decode(batch);
  const bool shifted = std::any_of(bindings.shifted_ends.begin(), bindings.shifted_ends.end(), [](int64_t e) { return e > 0; });
  graph::StepRows rows;
  rows.tokens = tokens;
  rows.positions = bindings.rotations;
  if (shifted) rows.shifted_positions = bindings.shifted_rotations;
  const float* out = run_step(graph::Phase::Decode, b, bindings, rows);
  std::copy_n(out, b * model_.shape.vocab, logits);
  for (int64_t slot : bindings.slots) cache_.state(slot).length += 1;
}

}  // namespace snapstream::runtime
