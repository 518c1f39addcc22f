// One pass over the decoder layers, written to be read top to bottom like llama2.c's forward():
// attention block, then MLP block, each with a residual connection; then the classifier.
#include "runtime/transformer.h"

#include "kernels/attention.h"
#include "kernels/dequantize.h"
#include "kernels/matmul.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/swiglu.h"
#include "runtime/errors.h"

namespace snapstream {

Transformer::Transformer(const Model& model, kernels::ThreadPool& pool) : model_(model), pool_(pool) {}

void Transformer::ensure_capacity(int64_t tokens) {
  if (tokens <= rows_) return;
  const ModelConfig& c = model_.config;
  const auto n = static_cast<size_t>(tokens);
  x_.resize(n * c.dim);
  normed_.resize(n * c.dim);
  q_.resize(n * c.dim);
  attention_.resize(n * c.dim);
  projected_.resize(n * c.dim);
  gate_.resize(n * c.hidden_dim);
  up_.resize(n * c.hidden_dim);
  rows_ = tokens;
}

void Transformer::forward(std::span<const int32_t> tokens, int64_t first_position, DenseKvCache& cache, float* logits) {
  const ModelConfig& c = model_.config;
  const ModelWeights& w = model_.weights;
  const auto m = static_cast<int64_t>(tokens.size());
  if (m == 0) throw InvalidRequestError("forward needs at least one token");
  if (first_position < 0 || first_position + m > cache.capacity())
    throw InvalidRequestError("positions " + std::to_string(first_position) + ".." + std::to_string(first_position + m - 1) +
                              " do not fit the KV cache of " + std::to_string(cache.capacity()) + " positions");
  model_.tokenizer.check_ids(tokens);
  ensure_capacity(m);
  const int64_t dim = c.dim, kv_dim = c.kv_dim(), hidden = c.hidden_dim;
  const kernels::AttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim()};

  for (int64_t i = 0; i < m; ++i)
    kernels::dequantize_row(w.token_embedding.dtype, w.token_embedding.row(tokens[static_cast<size_t>(i)]), dim,
                            x_.data() + i * dim);

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
    kernels::causal_attention(pool_, q_.data(), m, first_position, cache.keys(l), cache.values(l), shape, attention_.data());
    kernels::matmul(pool_, attention_.data(), m, layer.wo, projected_.data());
    for (int64_t i = 0; i < m * dim; ++i) x_[static_cast<size_t>(i)] += projected_[static_cast<size_t>(i)];

    kernels::rmsnorm(x_.data(), layer.mlp_norm, m, dim, c.norm_eps, normed_.data());
    kernels::matmul(pool_, normed_.data(), m, layer.w_gate, gate_.data());
    kernels::matmul(pool_, normed_.data(), m, layer.w_up, up_.data());
    kernels::swiglu(gate_.data(), up_.data(), m * hidden);
    kernels::matmul(pool_, gate_.data(), m, layer.w_down, projected_.data());
    for (int64_t i = 0; i < m * dim; ++i) x_[static_cast<size_t>(i)] += projected_[static_cast<size_t>(i)];
  }

  const float* last = x_.data() + (m - 1) * dim;
  kernels::rmsnorm(last, w.final_norm, 1, dim, c.norm_eps, normed_.data());
  kernels::matmul(pool_, normed_.data(), 1, w.output, logits);
}

}  // namespace snapstream
