// The decoder as ops, one layer after another; a shard's matmuls read row slices (for the
// projections into heads, MLP columns and vocabulary) or column slices (for the projections
// back to the model width; row slices over the gathered input for weights that round it).
#include "graph/decoder_builder.h"

#include <string>

#include "graph/errors.h"
#include "kernels/activation_rounding.h"

namespace snapstream::graph {
namespace {

bool rounds_input_rows(const ModelShape& shape) { return kernels::activation_block(shape.weight_dtype) != 0; }

class Builder {
 public:
  Builder(const ModelShape& shape, const GraphKey& key, int32_t shards, AttentionSplit split, bool rows_back, bool group_queries)
      : s_(shape), shards_(shards), split_(split), rows_back_(rows_back && shards > 1), group_queries_(group_queries) {
    g_.key = key;
    g_.shape = shape;
    g_.shards = shards;
    rows_ = key.batch * key.length;
  }

  Graph build() {
    const int32_t x = activation("x", s_.dim);
    everywhere(emit(OpKind::Embed, {}, {x}, WeightSlice{WeightKind::Embedding}));
    for (int64_t l = 0; l < s_.layers; ++l) layer(l, x);
    head(x);
    return std::move(g_);
  }

 private:
  void layer(int64_t l, int32_t x) {
    layer_ = l;
    const std::string p = prefix('l', l);
    if (split_ == AttentionSplit::Sequences) {
      residual(p + "attn", x, latent_attention_by_sequence(p, x));
    } else {
      attention(p, x);
    }
    const int32_t mlp_in = activation(p + "mlp_in", s_.dim);
    everywhere(emit(OpKind::RmsNorm, {x}, {mlp_in}, WeightSlice{WeightKind::MlpNorm}));
    residual(p + "mlp", x, s_.expert_layer(l) ? experts(p, mlp_in) : mlp(p, mlp_in, s_.hidden_dim, ""));
  }

  void attention(const std::string& p, int32_t x) {
    const int32_t attn_in = activation(p + "attn_in", s_.dim);
    everywhere(emit(OpKind::RmsNorm, {x}, {attn_in}, WeightSlice{WeightKind::AttentionNorm}));
    residual(p + "attn", x, s_.attention == AttentionKind::Latent ? latent_attention(p, attn_in) : grouped_attention(p, attn_in));
  }

  std::vector<int32_t> grouped_attention(const std::string& p, int32_t normed) {
    const int64_t heads = s_.heads / shards_, hd = s_.head_dim;
    // With fewer KV heads than shards a shard holds the one KV head its query heads share.
    const int64_t kv_heads = std::max<int64_t>(1, s_.kv_heads / shards_);
    std::vector<int32_t> queries, keys, values, attended_parts, partial;
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const std::string sp = p + prefix('s', shard);
      const int64_t h0 = shard * heads, kv_first = h0 / (s_.heads / s_.kv_heads);
      queries.push_back(activation(sp + "q", heads * hd));
      keys.push_back(activation(sp + "k", kv_heads * hd));
      values.push_back(activation(sp + "v", kv_heads * hd));
      emit(OpKind::MatMul, {normed}, {queries.back()}, rows(WeightKind::Wq, h0 * hd, heads * hd)).add_bias = s_.attention_bias;
      emit(OpKind::MatMul, {normed}, {keys.back()}, rows(WeightKind::Wk, kv_first * hd, kv_heads * hd)).add_bias = s_.attention_bias;
      emit(OpKind::MatMul, {normed}, {values.back()}, rows(WeightKind::Wv, kv_first * hd, kv_heads * hd)).add_bias = s_.attention_bias;
      heads_of(emit(OpKind::Rope, {queries.back(), keys.back()}, {queries.back(), keys.back()}), h0, heads, kv_first, kv_heads);
    }
    // A KV head shared by several shards is compacted by each of them alike, so each needs the
    // observation window's queries of every head in the group, not only its own.
    int32_t all_queries = -1;
    if (group_queries_) {
      shard_ = 0;
      all_queries = activation(p + "q_all", s_.heads * hd);
      everywhere(emit(OpKind::AllGather, queries, {all_queries}));
    }
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const int64_t h0 = shard * heads, kv_first = h0 / (s_.heads / s_.kv_heads);
      const auto i = static_cast<size_t>(shard);
      const int32_t attended = activation(p + prefix('s', shard) + "attended", heads * hd);
      const OpKind attention = g_.key.phase == Phase::Decode ? OpKind::DecodeAttention : OpKind::CausalAttention;
      std::vector<int32_t> inputs{queries[i], keys[i], values[i]};
      if (all_queries >= 0) inputs.push_back(all_queries);
      heads_of(emit(attention, std::move(inputs), {attended}), h0, heads, kv_first, kv_heads);
      attended_parts.push_back(attended);
    }
    if (rows_back_) return projection_by_rows(p + "attn_", attended_parts, WeightKind::Wo, s_.attention_output_bias);
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const int64_t h0 = shard * heads;
      const int32_t out = activation(p + prefix('s', shard) + "attn_out", s_.dim);
      // Shards' partial outputs are summed, so only the first adds the bias.
      Op& op = emit(OpKind::MatMul, {attended_parts[static_cast<size_t>(shard)]}, {out}, cols(WeightKind::Wo, h0 * hd, heads * hd));
      op.add_bias = s_.attention_output_bias && shard == 0;
      if (shards_ > 1) op.row_parts = attended_parts;
      partial.push_back(out);
    }
    return partial;
  }

  // Latent attention in its absorbed form: each head's query is turned into latent space by
  // the key half of the up-projection, attention runs against the cached latents directly,
  // and the value half turns the result back into the head's value width.
  std::vector<int32_t> latent_attention(const std::string& p, int32_t normed) {
    const LatentAttentionShape& m = s_.mla;
    const int64_t heads = s_.heads / shards_, cached = m.cached_width();
    std::vector<int32_t> queries, latents, partial;
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const std::string sp = p + prefix('s', shard);
      const int64_t h0 = shard * heads;
      const int32_t q_latent = activation(sp + "q_latent", m.q_lora_rank);
      emit(OpKind::MatMul, {normed}, {q_latent}, WeightSlice{WeightKind::QDown});
      const int32_t q = activation(sp + "q", heads * m.query_head_width());
      emit(OpKind::MatMul, {q_latent}, {q}, rows(WeightKind::QUp, h0 * m.query_head_width(), heads * m.query_head_width()));
      const int32_t kv_latent = activation(sp + "kv_latent", cached);
      emit(OpKind::MatMul, {normed}, {kv_latent}, WeightSlice{WeightKind::KvDown});
      heads_of(emit(OpKind::Rope, {q, kv_latent}, {q, kv_latent}), h0, heads, 0, 1);
      const int32_t absorbed = activation(sp + "q_absorbed", heads * cached);
      heads_of(emit(OpKind::HeadMatMul, {q}, {absorbed}, rows(WeightKind::KvUpKey, h0 * m.qk_nope_head_dim, heads * m.qk_nope_head_dim)),
               h0, heads, 0, 1);
      queries.push_back(absorbed);
      latents.push_back(kv_latent);
    }
    std::vector<int32_t> attended = queries;
    int64_t attend_heads = heads;
    if (shards_ > 1) {
      shard_ = 0;
      const int32_t all = activation(p + "q_all", s_.heads * cached);
      everywhere(emit(OpKind::AllGather, queries, {all}));
      attended.assign(static_cast<size_t>(shards_), all);
      attend_heads = s_.heads;
    }
    std::vector<int32_t> results;
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const int32_t out = activation(p + prefix('s', shard) + "latent_out", attend_heads * m.kv_lora_rank);
      Op& op = emit(OpKind::LatentAttention, {attended[static_cast<size_t>(shard)], latents[static_cast<size_t>(shard)]}, {out});
      heads_of(op, shards_ > 1 ? 0 : shard * heads, attend_heads, 0, 1);
      op.position_shards = shards_;
      results.push_back(out);
    }
    if (shards_ > 1) {
      shard_ = 0;
      std::vector<int32_t> slices;
      for (int32_t shard = 0; shard < shards_; ++shard)
        slices.push_back(activation(p + prefix('s', shard) + "latent_mine", heads * m.kv_lora_rank));
      everywhere(emit(OpKind::ReduceScatter, results, slices));
      results = slices;
    }
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const std::string sp = p + prefix('s', shard);
      const int64_t h0 = shard * heads;
      const int32_t values = activation(sp + "values", heads * m.v_head_dim);
      heads_of(emit(OpKind::HeadMatMul, {results[static_cast<size_t>(shard)]}, {values},
                    rows(WeightKind::KvUpValue, h0 * m.v_head_dim, heads * m.v_head_dim)),
               h0, heads, 0, 1);
      const int32_t out = activation(sp + "attn_out", s_.dim);
      emit(OpKind::MatMul, {values}, {out}, cols(WeightKind::Wo, h0 * m.v_head_dim, heads * m.v_head_dim));
      partial.push_back(out);
    }
    return partial;
  }

  // Data-parallel latent attention: each shard normalises its own sequences' rows and runs the
  // whole attention on them (every weight, every head, whole caches), then an all-gather puts
  // every shard's rows on every shard. Returns the gathered output, which needs no sum.
  std::vector<int32_t> latent_attention_by_sequence(const std::string& p, int32_t x) {
    const LatentAttentionShape& m = s_.mla;
    const int64_t cached = m.cached_width();
    const int64_t own_rows = (g_.key.batch + shards_ - 1) / shards_ * g_.key.length;
    auto local = [&](const std::string& name, int64_t width) { return add(Tensor{name, {own_rows, width}}); };
    std::vector<int32_t> outputs;
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const std::string sp = p + prefix('s', shard);
      const int32_t normed = local(sp + "attn_in", s_.dim);
      emit(OpKind::RmsNorm, {x}, {normed}, WeightSlice{WeightKind::AttentionNorm});
      const int32_t q_latent = local(sp + "q_latent", m.q_lora_rank);
      emit(OpKind::MatMul, {normed}, {q_latent}, WeightSlice{WeightKind::QDown});
      const int32_t q = local(sp + "q", s_.heads * m.query_head_width());
      emit(OpKind::MatMul, {q_latent}, {q}, rows(WeightKind::QUp, 0, s_.heads * m.query_head_width()));
      const int32_t kv_latent = local(sp + "kv_latent", cached);
      emit(OpKind::MatMul, {normed}, {kv_latent}, WeightSlice{WeightKind::KvDown});
      heads_of(emit(OpKind::Rope, {q, kv_latent}, {q, kv_latent}), 0, s_.heads, 0, 1);
      const int32_t absorbed = local(sp + "q_absorbed", s_.heads * cached);
      heads_of(emit(OpKind::HeadMatMul, {q}, {absorbed}, rows(WeightKind::KvUpKey, 0, s_.heads * m.qk_nope_head_dim)), 0, s_.heads, 0, 1);
      const int32_t attended = local(sp + "latent_out", s_.heads * m.kv_lora_rank);
      Op& op = emit(OpKind::LatentAttention, {absorbed, kv_latent}, {attended});
      heads_of(op, 0, s_.heads, 0, 1);
      op.sequence_shards = shards_;
      const int32_t values = local(sp + "values", s_.heads * m.v_head_dim);
      heads_of(emit(OpKind::HeadMatMul, {attended}, {values}, rows(WeightKind::KvUpValue, 0, s_.heads * m.v_head_dim)), 0, s_.heads, 0, 1);
      const int32_t out = local(sp + "attn_out", s_.dim);
      emit(OpKind::MatMul, {values}, {out}, cols(WeightKind::Wo, 0, s_.heads * m.v_head_dim));
      outputs.push_back(out);
    }
    if (shards_ == 1) return outputs;
    shard_ = 0;
    const int32_t gathered = activation(p + "attn_gathered", s_.dim);
    everywhere(emit(OpKind::AllGather, outputs, {gathered}));
    return {gathered};
  }

  // A SwiGLU MLP of `width` columns split over the shards; `tag` names the shared expert's.
  std::vector<int32_t> mlp(const std::string& p, int32_t in, int64_t width, const std::string& tag) {
    const int64_t hidden = width / shards_;
    std::vector<int32_t> partial, gates;
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const std::string sp = p + prefix('s', shard) + tag;
      const int64_t h0 = shard * hidden;
      const int32_t gate = activation(sp + "gate", hidden), up = activation(sp + "up", hidden);
      emit(OpKind::MatMul, {in}, {gate}, rows(WeightKind::Gate, h0, hidden));
      emit(OpKind::MatMul, {in}, {up}, rows(WeightKind::Up, h0, hidden));
      emit(OpKind::SwiGLU, {gate, up}, {gate});
      gates.push_back(gate);
    }
    // The shared experts stay column-split: routed experts add into each shard's partial sum.
    if (rows_back_ && tag.empty()) return projection_by_rows(p + "mlp_", gates, WeightKind::Down, false);
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const int32_t down = activation(p + prefix('s', shard) + tag + "mlp_out", s_.dim);
      Op& op = emit(OpKind::MatMul, {gates[static_cast<size_t>(shard)]}, {down}, cols(WeightKind::Down, shard * hidden, hidden));
      if (shards_ > 1) op.row_parts = gates;
      partial.push_back(down);
    }
    return partial;
  }

  // The shared experts as one MLP, then the routed experts, each shard holding a column slice
  // of every expert so that any routing spreads evenly over the shards.
  std::vector<int32_t> experts(const std::string& p, int32_t in) {
    std::vector<int32_t> partial = mlp(p, in, s_.moe.shared_experts * s_.moe.expert_hidden_dim, "shared.");
    const int64_t hidden = s_.moe.expert_hidden_dim / shards_;
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const std::string sp = p + prefix('s', shard);
      const int32_t scores = activation(sp + "router", s_.moe.routed_experts);
      emit(OpKind::MatMul, {in}, {scores}, WeightSlice{WeightKind::Router});
      const int32_t routed = activation(sp + "routed_out", s_.dim);
      emit(OpKind::MoeExperts, {in, scores}, {routed}, rows(WeightKind::Experts, shard * hidden, hidden));
      emit(OpKind::Add, {partial[static_cast<size_t>(shard)], routed}, {partial[static_cast<size_t>(shard)]});
    }
    return partial;
  }

  // The final norm and the output projection; with several shards each computes a slice of
  // the vocabulary and an all-gather joins them.
  void head(int32_t x) {
    layer_ = -1;
    shard_ = 0;
    // A prefill needs only the next token's logits; decode and verify need every row's.
    const int64_t head_rows = g_.key.phase == Phase::Prefill ? g_.key.batch : rows_;
    const int32_t normed = add(Tensor{"final.normed", {head_rows, s_.dim}});
    everywhere(emit(OpKind::RmsNorm, {x}, {normed}, WeightSlice{WeightKind::FinalNorm})).last_row_only = g_.key.phase == Phase::Prefill;
    const int32_t logits = add(Tensor{"logits", {head_rows, s_.vocab}, kernels::DType::F32, TensorRole::Output});
    if (shards_ == 1) {
      emit(OpKind::MatMul, {normed}, {logits}, WeightSlice{WeightKind::Output});
      return;
    }
    std::vector<int32_t> slices;
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      const int64_t v0 = s_.vocab * shard / shards_, v1 = s_.vocab * (shard + 1) / shards_;
      slices.push_back(add(Tensor{prefix('s', shard) + "logits", {head_rows, v1 - v0}}));
      emit(OpKind::MatMul, {normed}, {slices.back()}, rows(WeightKind::Output, v0, v1 - v0));
    }
    shard_ = 0;
    everywhere(emit(OpKind::AllGather, slices, {logits}));
  }

  // A projection back to the model width split by output rows: the shards' inputs are gathered
  // into whole rows, each shard computes its slice of every output with whole dot products,
  // and an all-gather joins the slices. One output, so no all-reduce follows.
  std::vector<int32_t> projection_by_rows(const std::string& name, const std::vector<int32_t>& parts, WeightKind kind, bool bias) {
    int64_t in_width = 0;
    for (const int32_t part : parts) in_width += g_.tensors[static_cast<size_t>(part)].shape.back();
    shard_ = 0;
    const int32_t whole = activation(name + "in", in_width);
    everywhere(emit(OpKind::AllGather, parts, {whole}));
    const int64_t width = s_.dim / shards_;
    std::vector<int32_t> slices;
    for (int32_t shard = 0; shard < shards_; ++shard) {
      shard_ = shard;
      slices.push_back(activation(name + prefix('s', shard) + "out", width));
      emit(OpKind::MatMul, {whole}, {slices.back()}, rows(kind, shard * width, width)).add_bias = bias;
    }
    shard_ = 0;
    const int32_t out = activation(name + "out", s_.dim);
    everywhere(emit(OpKind::AllGather, slices, {out}));
    return {out};
  }

  // x += the sum of the shards' partial outputs (an all-reduce first when there are several).
  void residual(const std::string& name, int32_t x, const std::vector<int32_t>& partial) {
    shard_ = 0;
    int32_t total = partial.front();
    if (partial.size() > 1) {
      total = activation(name + "_sum", s_.dim);
      everywhere(emit(OpKind::AllReduce, partial, {total}));
    }
    everywhere(emit(OpKind::Add, {x, total}, {x}));
  }

  // Marks an op every shard runs on its own copy of a whole tensor (the embedding, norms and
  // residual adds) or takes part in (a collective): a shard running alone in its own process
  // runs these besides its own ops.
  static Op& everywhere(Op& op) {
    op.replicated = true;
    return op;
  }

  static void heads_of(Op& op, int64_t first, int64_t count, int64_t kv_first, int64_t kv_count) {
    op.head_begin = first;
    op.head_end = first + count;
    op.kv_head_begin = kv_first;
    op.kv_head_end = kv_first + kv_count;
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
    op.layer = kind == OpKind::Embed ? -1 : layer_;
    op.shard = shard_;
    return g_.ops.emplace_back(std::move(op));
  }

  const ModelShape& s_;
  int32_t shards_;
  AttentionSplit split_;
  // The projections back to the model width split by rows (see build_decoder_graph). Weights
  // that round their input rows need those rows whole anyway, and every output is then the one
  // dot product a single device computes. Split by columns, the shards' partial sums add in
  // another order, and where that moves a value of the next layer's input across a rounding
  // step, greedy tokens drift from the unsplit model's within a few steps.
  bool rows_back_;
  // Prefill of replicated KV heads gathers every shard's queries for SnapKV (see grouped_attention).
  bool group_queries_;
  Graph g_;
  int64_t rows_ = 0;
  int64_t layer_ = -1;
  int32_t shard_ = 0;
};

void require_divisible(int64_t value, int32_t shards, const char* what) {
  if (value % shards != 0)
    throw GraphError(std::string(what) + " (" + std::to_string(value) + ") must divide by " + std::to_string(shards) +
                     " tensor-parallel shards");
}

void check_shape(const ModelShape& shape, int32_t shards, bool rows_back) {
  require_divisible(shape.heads, shards, "heads");
  if (rows_back) require_divisible(shape.dim, shards, "model width");
  if (!shape.moe.enabled() || shape.moe.dense_layers > 0) require_divisible(shape.hidden_dim, shards, "MLP width");
  if (shape.moe.enabled()) {
    require_divisible(shape.moe.expert_hidden_dim, shards, "expert MLP width");
  }
  // A shard's column slice may start inside a quantisation block: it reads the whole block.
  if (shape.attention == AttentionKind::Latent) return;
  if (shape.kv_heads < 1 || shape.heads % shape.kv_heads != 0) throw GraphError("query heads must be a multiple of KV heads");
  const bool kv_split = shape.kv_heads % shards == 0;
  const bool kv_replicated = shards % shape.kv_heads == 0;
  if (!kv_split && !kv_replicated)
    throw GraphError("KV heads (" + std::to_string(shape.kv_heads) + ") must divide by, or divide, " + std::to_string(shards) +
                     " tensor-parallel shards");
}

}  // namespace

Graph build_decoder_graph(const ModelShape& shape, const GraphKey& key, int32_t shards, AttentionSplit split,
                          bool exact_split) {
  const bool rows_back = exact_split && rounds_input_rows(shape) && shape.runs_on_cpu();
  const bool group_queries = exact_split && key.phase == Phase::Prefill && shape.attention != AttentionKind::Latent &&
                             shards > shape.kv_heads;
  if (shards < 1) throw GraphError("tensor parallelism needs at least one shard");
  if (key.batch < 1 || key.length < 1) throw GraphError("graph buckets must be positive");
  if (key.phase == Phase::Decode && key.length != 1) throw GraphError("a decode graph runs one token per sequence");
  check_shape(shape, shards, rows_back);
  if (split == AttentionSplit::Sequences && shape.attention != AttentionKind::Latent)
    throw GraphError("data-parallel attention is built for latent attention only");
  return Builder(shape, key, shards, split, rows_back, group_queries).build();
}

}  // namespace snapstream::graph
