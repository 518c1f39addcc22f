// The decoder as ops, one layer after another; a shard's matmuls read row slices (for the
// projections into heads and MLP columns) or column slices (for the projections back).
#include "graph/llama_builder.h"

#include <string>

#include "graph/errors.h"

namespace snapstream::graph {
namespace {

class Builder {
 public:
  Builder(const DecoderShape& shape, const GraphKey& key, int32_t shards) : s_(shape), shards_(shards) {
    g_.key = key;
    g_.shape = shape;
    g_.shards = shards;
    rows_ = key.batch * key.length;
  }

  Graph build() {
    const int32_t x = activation("x", s_.dim);
    emit(OpKind::Embed, {}, {x}, WeightSlice{WeightKind::Embedding});
    for (int64_t l = 0; l < s_.layers; ++l) layer(l, x);
    const int64_t head_rows = g_.key.phase == Phase::Prefill ? g_.key.batch : rows_;
    const int32_t normed = add(Tensor{"final.normed", {head_rows, s_.dim}});
    emit(OpKind::RmsNorm, {x}, {normed}, WeightSlice{WeightKind::FinalNorm}).last_row_only = g_.key.phase == Phase::Prefill;
    const int32_t logits = add(Tensor{"logits", {head_rows, s_.vocab}, kernels::DType::F32, TensorRole::Output});
    emit(OpKind::MatMul, {normed}, {logits}, WeightSlice{WeightKind::Output});
    return std::move(g_);
  }

 private:
  void layer(int64_t l, int32_t x) {
    layer_ = l;
    const std::string p = prefix('l', l);
    const int64_t heads = s_.heads / shards_, kv_heads = s_.kv_heads / shards_, hidden = s_.hidden_dim / shards_;
    const int32_t normed = activation(p + "attn_in", s_.dim);
    emit(OpKind::RmsNorm, {x}, {normed}, WeightSlice{WeightKind::AttentionNorm});
    std::vector<int32_t> partial;
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const std::string sp = p + prefix('s', shard);
      const int64_t q0 = shard * heads * s_.head_dim, kv0 = shard * kv_heads * s_.head_dim;
      const int32_t q = activation(sp + "q", heads * s_.head_dim);
      const int32_t k = activation(sp + "k", kv_heads * s_.head_dim);
      const int32_t v = activation(sp + "v", kv_heads * s_.head_dim);
      emit(OpKind::MatMul, {normed}, {q}, rows(WeightKind::Wq, q0, heads * s_.head_dim));
      emit(OpKind::MatMul, {normed}, {k}, rows(WeightKind::Wk, kv0, kv_heads * s_.head_dim));
      emit(OpKind::MatMul, {normed}, {v}, rows(WeightKind::Wv, kv0, kv_heads * s_.head_dim));
      heads_of(emit(OpKind::Rope, {q, k}, {q, k}), shard, heads, kv_heads);
      const int32_t attended = activation(sp + "attended", heads * s_.head_dim);
      const OpKind attention = g_.key.phase == Phase::Prefill ? OpKind::CausalAttention : OpKind::DecodeAttention;
      heads_of(emit(attention, {q, k, v}, {attended}), shard, heads, kv_heads);
      const int32_t out = activation(sp + "attn_out", s_.dim);
      emit(OpKind::MatMul, {attended}, {out}, cols(WeightKind::Wo, q0, heads * s_.head_dim));
      partial.push_back(out);
    }
    residual(p + "attn", x, partial);

    const int32_t mlp_in = activation(p + "mlp_in", s_.dim);
    shard_ = 0;
    emit(OpKind::RmsNorm, {x}, {mlp_in}, WeightSlice{WeightKind::MlpNorm});
    partial.clear();
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const std::string sp = p + prefix('s', shard);
      const int64_t h0 = shard * hidden;
      const int32_t gate = activation(sp + "gate", hidden), up = activation(sp + "up", hidden);
      emit(OpKind::MatMul, {mlp_in}, {gate}, rows(WeightKind::Gate, h0, hidden));
      emit(OpKind::MatMul, {mlp_in}, {up}, rows(WeightKind::Up, h0, hidden));
      emit(OpKind::SwiGLU, {gate, up}, {gate});
      const int32_t down = activation(sp + "mlp_out", s_.dim);
      emit(OpKind::MatMul, {gate}, {down}, cols(WeightKind::Down, h0, hidden));
      partial.push_back(down);
    }
    residual(p + "mlp", x, partial);
    shard_ = 0;
  }

  // x += the sum of the shards' partial outputs (an all-reduce first when there are several).
  void residual(const std::string& name, int32_t x, const std::vector<int32_t>& partial) {
    shard_ = 0;
    int32_t total = partial.front();
    if (partial.size() > 1) {
      total = activation(name + "_sum", s_.dim);
      emit(OpKind::AllReduce, partial, {total});
    }
    emit(OpKind::Add, {x, total}, {x});
  }

  void heads_of(Op& op, int32_t shard, int64_t heads, int64_t kv_heads) const {
    op.head_begin = shard * heads;
    op.head_end = (shard + 1) * heads;
    op.kv_head_begin = shard * kv_heads;
    op.kv_head_end = (shard + 1) * kv_heads;
  }
  // "l3." and the like, built without operator+(const char*, string&&), which trips a false
  // -Wrestrict in GCC 12.
  static std::string prefix(char letter, int64_t index) {
    std::string text(1, letter);
    text += std::to_string(index);
    text += '.';
    return text;
  }
  static WeightSlice rows(WeightKind kind, int64_t begin, int64_t count) { return {kind, begin, begin + count, 0, 0}; }
  static WeightSlice cols(WeightKind kind, int64_t begin, int64_t count) { return {kind, 0, 0, begin, begin + count}; }

  int32_t activation(const std::string& name, int64_t width) { return add(Tensor{name, {rows_, width}}); }
  int32_t add(Tensor t) { return g_.add_tensor(std::move(t)); }
  Op& emit(OpKind kind, std::vector<int32_t> inputs, std::vector<int32_t> outputs, WeightSlice weight = {}) {
    Op op;
    op.kind = kind;
    op.inputs = std::move(inputs);
    op.outputs = std::move(outputs);
    op.weight = weight;
    op.layer = op.kind == OpKind::Embed || op.weight.kind == WeightKind::FinalNorm || op.weight.kind == WeightKind::Output
                   ? -1
                   : layer_;
    op.shard = shard_;
    return g_.ops.emplace_back(std::move(op));
  }

  const DecoderShape& s_;
  int32_t shards_;
  Graph g_;
  int64_t rows_ = 0;
  int64_t layer_ = -1;
  int32_t shard_ = 0;
};

}  // namespace

Graph build_llama_graph(const DecoderShape& shape, const GraphKey& key, int32_t shards) {
  if (shards < 1) throw GraphError("tensor parallelism needs at least one shard");
  if (key.batch < 1 || key.length < 1) throw GraphError("graph buckets must be positive");
  if (key.phase == Phase::Decode && key.length != 1) throw GraphError("a decode graph runs one token per sequence");
  if (shape.heads % shards != 0 || shape.kv_heads % shards != 0 || shape.hidden_dim % shards != 0)
    throw GraphError("heads (" + std::to_string(shape.heads) + "), KV heads (" + std::to_string(shape.kv_heads) +
                     ") and MLP width (" + std::to_string(shape.hidden_dim) + ") must divide by " + std::to_string(shards) +
                     " tensor-parallel shards");
  const int64_t column_slices[] = {shape.heads / shards * shape.head_dim, shape.hidden_dim / shards};
  for (const int64_t width : column_slices)
    if (!kernels::row_length_supported(shape.weight_dtype, width))
      throw GraphError("a shard's column slice of " + std::to_string(width) + " is not a whole number of " +
                       std::string(kernels::dtype_name(shape.weight_dtype)) + " blocks");
  return Builder(shape, key, shards).build();
}

}  // namespace snapstream::graph
