// The static graph IR: tensors of fixed shape and ops over them. A graph is built once for a
// (phase, batch bucket, length bucket) key and never changes shape while serving.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/model_shape.h"
#include "kernels/dtype.h"

namespace snapstream::graph {

// Verify: k+1 new positions per sequence attending its cache, with logits for every one of
// them, as the target model of speculative decoding checks a draft (priced, not yet served).
enum class Phase : uint8_t { Prefill, Decode, Verify };
std::string_view phase_name(Phase phase);

struct GraphKey {
  Phase phase = Phase::Decode;
  int64_t batch = 1;   // sequences (decode) — padded up to this bucket
  int64_t length = 1;  // tokens per sequence in this graph (prefill bucket, verify positions; 1 for decode)
  bool operator==(const GraphKey&) const = default;
};

enum class TensorRole : uint8_t {
  Input,       // bound per step: token ids, positions, slots
  Weight,      // bound to the model's weights (possibly a shard's slice)
  KvCache,     // bound to the slot cache of a layer
  Activation,  // lives in the graph's arena at a planned offset
  Output,      // logits, in the arena too
};

struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  kernels::DType dtype = kernels::DType::F32;
  TensorRole role = TensorRole::Activation;
  int64_t offset = -1;  // arena byte offset, set by memory planning

  int64_t elements() const;
  int64_t bytes() const;
  bool in_arena() const { return role == TensorRole::Activation || role == TensorRole::Output; }
};

// Which model weight an op reads; layer -1 for the ones outside the layers.
// QDown..KvUpValue are latent attention's projections; KvUpKey/KvUpValue are the key and value
// halves of its up-projection, applied per head to the cached latent. Router scores experts;
// Experts stands for every routed expert's gate, up and down matrices of a layer.
enum class WeightKind : uint8_t {
  Embedding, AttentionNorm, Wq, Wk, Wv, Wo, MlpNorm, Gate, Up, Down, FinalNorm, Output,
  QDown, QUp, KvDown, KvUpKey, KvUpValue, Router, Experts,
};
std::string_view weight_kind_name(WeightKind kind);

// A weight and the slice of it a tensor-parallel shard reads: rows [row_begin, row_end) and
// columns [col_begin, col_end) of the [rows][cols] matrix. Empty ranges mean "all".
struct WeightSlice {
  WeightKind kind = WeightKind::Wq;
  int64_t row_begin = 0, row_end = 0;
  int64_t col_begin = 0, col_end = 0;
};

// How attention is split over tensor-parallel shards: by heads (latent attention, whose cache
// every head shares, by cached positions), or by sequences, each shard attending its own with
// every head (data-parallel attention; priced only).
enum class AttentionSplit : uint8_t { Heads, Sequences };

enum class OpKind : uint8_t {
  Embed,            // token ids -> rows of the embedding
  RmsNorm,          // with a norm weight
  MatMul,           // activations x a weight slice (transposed)
  Rope,             // rotates query and key heads by each token's position
  CausalAttention,  // prefill: attention over the prompt, then SnapKV compaction into the slot
  DecodeAttention,  // decode: masked attention over the slot cache plus itself, then the ring write
  SwiGLU,
  Add,              // residual
  AllReduce,        // sums the shards' partial results
  AllGather,        // concatenates the shards' slices along the last dimension
  ReduceScatter,    // sums the shards' partial results, each shard keeping its own slice
  HeadMatMul,       // per-head matmul with one slice of a weight per head (latent attention)
  LatentAttention,  // attention over the cached latent for a set of heads (and write of the new one)
  MoeExperts,       // routes each token to its top experts and sums their gated MLPs
  FusedLayer,       // a whole decoder layer: the unit the accelerator runs as one kernel
  LoopedLayers,     // a run of identical fused layers as one kernel looping over the layer index
};
std::string_view op_kind_name(OpKind kind);

struct Op {
  OpKind kind = OpKind::Add;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  int64_t layer = -1;           // the decoder layer an op belongs to, -1 outside them
  int32_t shard = 0;            // tensor-parallel shard that runs it
  bool replicated = false;      // every shard runs it (norms, residual adds, collectives); shard is 0
  WeightSlice weight;           // for Embed, RmsNorm and MatMul
  bool add_bias = false;        // MatMul: adds the weight's bias (its slice of it) to each row
  // MatMul on a column slice: every shard's part of the whole input row, in column order. The
  // row is rounded to 8 bits as one (each block's scale max-reduced over the shards) before the
  // shard takes its columns, so tensor-parallel runs round as a single device does.
  std::vector<int32_t> row_parts;
  bool last_row_only = false;   // RmsNorm of prefill's head: only the last real token's row
  int64_t head_begin = 0;       // attention/rope: the query heads of this shard
  int64_t head_end = 0;
  int64_t kv_head_begin = 0;    // ... and its KV heads
  int64_t kv_head_end = 0;
  int32_t position_shards = 1;  // latent attention: shards that split each sequence's cached positions
  int32_t sequence_shards = 1;  // data-parallel attention: shards that split the sequences (this op runs its share)
  std::vector<Op> body;         // FusedLayer / LoopedLayers: the ops of one layer
  int64_t first_layer = 0;      // LoopedLayers: layers [first_layer, first_layer + loop_count)
  int64_t loop_count = 0;
};

struct Graph {
  GraphKey key;
  ModelShape shape;
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  int32_t shards = 1;
  int64_t arena_bytes = 0;

  int32_t add_tensor(Tensor tensor);
  // The ops as they run: looped and fused ops expanded, layer by layer.
  std::vector<Op> flattened() const;
  // Kernel launches this graph needs per execution (a fused layer is one, a looped run one).
  int64_t kernel_calls() const;
};

}  // namespace snapstream::graph
