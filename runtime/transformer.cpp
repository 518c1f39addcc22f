// One pass over the decoder layers, written to be read top to bottom like llama2.c's forward():
// attention block, then MLP block, each with a residual connection; then the classifier.
#include "runtime/transformer.h"

#include <algorithm>

#include "kernels/attention.h"
#include "kernels/decode_attention.h"
#include "kernels/dequantize.h"
#include "kernels/matmul.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/swiglu.h"
#include "runtime/errors.h"
#include "runtime/prompt_compaction.h"

namespace snapstream {
namespace {
void add_into(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}
}  // namespace

Transformer::Transformer(const Model& model, kernels::ThreadPool& pool) : model_(model), pool_(pool) {}

void Transformer::ensure_capacity(int64_t tokens) {
  if (tokens <= rows_) return;
  const ModelConfig& c = model_.config;
  const auto n = static_cast<size_t>(tokens);
  for (auto* buffer : {&x_, &normed_, &q_, &attention_, &projected_}) buffer->resize(n * c.dim);
  for (auto* buffer : {&k_, &v_}) buffer->resize(n * c.kv_dim());
  for (auto* buffer : {&gate_, &up_}) buffer->resize(n * c.hidden_dim);
  rows_ = tokens;
}

void Transformer::embed(std::span<const int32_t> tokens) {
  model_.tokenizer.check_ids(tokens);
  ensure_capacity(static_cast<int64_t>(tokens.size()));
  const kernels::WeightView& table = model_.weights.token_embedding;
  for (size_t i = 0; i < tokens.size(); ++i)
    kernels::dequantize_row(table.dtype, table.row(tokens[i]), table.cols, x_.data() + static_cast<int64_t>(i) * table.cols);
}

void Transformer::mlp_block(const LayerWeights& layer, int64_t rows, kernels::MatmulPath path) {
  const ModelConfig& c = model_.config;
  kernels::rmsnorm(x_.data(), layer.mlp_norm, rows, c.dim, c.norm_eps, normed_.data());
  kernels::matmul(pool_, normed_.data(), rows, layer.w_gate, gate_.data(), path);
  kernels::matmul(pool_, normed_.data(), rows, layer.w_up, up_.data(), path);
  kernels::swiglu(gate_.data(), up_.data(), rows * c.hidden_dim);
  kernels::matmul(pool_, gate_.data(), rows, layer.w_down, projected_.data(), path);
  add_into(x_.data(), projected_.data(), rows * c.dim);
}

void Transformer::forward(std::span<const int32_t> tokens, int64_t first_position, DenseKvCache& cache, float* logits,
                          float* window_queries, int64_t window) {
  const ModelConfig& c = model_.config;
  const ModelWeights& w = model_.weights;
  const auto m = static_cast<int64_t>(tokens.size());
  if (m == 0) throw InvalidRequestError("forward needs at least one token");
  if (first_position < 0 || first_position + m > cache.capacity())
    throw InvalidRequestError("positions " + std::to_string(first_position) + ".." + std::to_string(first_position + m - 1) +
                              " do not fit the KV cache of " + std::to_string(cache.capacity()) + " positions");
  if (window_queries != nullptr && (window < 1 || window > m))
    throw InvalidRequestError("the observation window must lie inside the block");
  embed(tokens);
  const int64_t dim = c.dim, kv_dim = c.kv_dim();
  const kernels::AttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim()};

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerWeights& layer = w.layers[static_cast<size_t>(l)];
    // Keys and values go straight into their cache rows.
    float* keys = cache.keys(l) + first_position * kv_dim;
    float* values = cache.values(l) + first_position * kv_dim;

    kernels::rmsnorm(x_.data(), layer.attention_norm, m, dim, c.norm_eps, normed_.data());
    kernels::matmul(pool_, normed_.data(), m, layer.wq, q_.data());
    kernels::matmul(pool_, normed_.data(), m, layer.wk, keys);
    kernels::matmul(pool_, normed_.data(), m, layer.wv, values);
    for (int64_t i = 0; i < m; ++i) {
      kernels::rope(q_.data() + i * dim, c.n_heads, c.head_dim(), first_position + i, c.rope_theta);
      kernels::rope(keys + i * kv_dim, c.n_kv_heads, c.head_dim(), first_position + i, c.rope_theta);
    }
    if (window_queries != nullptr)
      std::copy_n(q_.data() + (m - window) * dim, window * dim, window_queries + l * window * dim);
    kernels::causal_attention(pool_, q_.data(), m, first_position, cache.keys(l), cache.values(l), shape, attention_.data());
    kernels::matmul(pool_, attention_.data(), m, layer.wo, projected_.data());
    add_into(x_.data(), projected_.data(), m * dim);
    mlp_block(layer, m, kernels::MatmulPath::Auto);
  }

  const float* last = x_.data() + (m - 1) * dim;
  kernels::rmsnorm(last, w.final_norm, 1, dim, c.norm_eps, normed_.data());
  kernels::matmul(pool_, normed_.data(), 1, w.output, logits);
}

void Transformer::prefill(std::span<const int32_t> prompt, SlotKvCache& cache, int64_t slot, float* logits) {
  const ModelConfig& c = model_.config;
  const auto length = static_cast<int64_t>(prompt.size());
  if (length < 1 || length >= c.context_length)
    throw InvalidRequestError("a prompt of " + std::to_string(length) + " tokens does not fit the context of " +
                              std::to_string(c.context_length));
  const int64_t window = std::min(cache.config().window, length);
  DenseKvCache dense(c, length);
  std::vector<float> window_queries(static_cast<size_t>(c.n_layers * window * c.dim));
  forward(prompt, 0, dense, logits, window_queries.data(), window);
  compact_prompt(pool_, c, dense, length, window_queries.data(), window, cache, slot);
}

void Transformer::decode(std::span<const DecodeInput> batch, SlotKvCache& cache, float* logits) {
  const ModelConfig& c = model_.config;
  const ModelWeights& w = model_.weights;
  const auto b = static_cast<int64_t>(batch.size());
  if (b == 0) throw InvalidRequestError("a decode step needs at least one sequence");
  std::vector<int32_t> tokens(static_cast<size_t>(b));
  std::vector<int64_t> positions(static_cast<size_t>(b)), write_slots(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i) {
    const DecodeInput& in = batch[static_cast<size_t>(i)];
    if (in.slot < 0 || in.slot >= cache.slots()) throw InvalidRequestError("decode slot out of range");
    for (int64_t j = 0; j < i; ++j)
      if (batch[static_cast<size_t>(j)].slot == in.slot) throw InvalidRequestError("a decode batch names slot " + std::to_string(in.slot) + " twice");
    tokens[static_cast<size_t>(i)] = in.token;
    positions[static_cast<size_t>(i)] = cache.state(in.slot).length;
    if (positions[static_cast<size_t>(i)] >= c.context_length)
      throw InvalidRequestError("the sequence in slot " + std::to_string(in.slot) + " has reached the context length");
  }
  embed(tokens);
  for (int64_t i = 0; i < b; ++i) write_slots[static_cast<size_t>(i)] = cache.next_write_slot(batch[static_cast<size_t>(i)].slot);

  const int64_t dim = c.dim, kv_dim = c.kv_dim(), capacity = cache.capacity();
  const kernels::AttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim()};
  // Row dot products keep each sequence's result independent of who shares its batch.
  constexpr auto rows_only = kernels::MatmulPath::RowDots;
  std::vector<kernels::CacheView> views(static_cast<size_t>(b));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerWeights& layer = w.layers[static_cast<size_t>(l)];
    kernels::rmsnorm(x_.data(), layer.attention_norm, b, dim, c.norm_eps, normed_.data());
    kernels::matmul(pool_, normed_.data(), b, layer.wq, q_.data(), rows_only);
    kernels::matmul(pool_, normed_.data(), b, layer.wk, k_.data(), rows_only);
    kernels::matmul(pool_, normed_.data(), b, layer.wv, v_.data(), rows_only);
    for (int64_t i = 0; i < b; ++i) {
      const int64_t p = positions[static_cast<size_t>(i)];
      kernels::rope(q_.data() + i * dim, c.n_heads, c.head_dim(), p, c.rope_theta);
      kernels::rope(k_.data() + i * kv_dim, c.n_kv_heads, c.head_dim(), p, c.rope_theta);
      views[static_cast<size_t>(i)] = cache.view(batch[static_cast<size_t>(i)].slot, l);
    }
    kernels::decode_attention(pool_, b, q_.data(), k_.data(), v_.data(), views.data(), capacity, shape, attention_.data());
    // Written only now, so a ring entry this token evicts was still seen by its own attention.
    for (int64_t i = 0; i < b; ++i)
      store_token(cache.layer_view(batch[static_cast<size_t>(i)].slot, l), c.n_kv_heads, c.head_dim(), capacity,
                  write_slots[static_cast<size_t>(i)], positions[static_cast<size_t>(i)], k_.data() + i * kv_dim,
                  v_.data() + i * kv_dim);
    kernels::matmul(pool_, attention_.data(), b, layer.wo, projected_.data(), rows_only);
    add_into(x_.data(), projected_.data(), b * dim);
    mlp_block(layer, b, rows_only);
  }
  for (int64_t i = 0; i < b; ++i) cache.state(batch[static_cast<size_t>(i)].slot).length += 1;

  kernels::rmsnorm(x_.data(), w.final_norm, b, dim, c.norm_eps, normed_.data());
  kernels::matmul(pool_, normed_.data(), b, w.output, logits, rows_only);
}

}  // namespace snapstream
