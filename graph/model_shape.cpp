// Checks of a model shape, whatever it was read from.
#include "graph/model_shape.h"

#include <cmath>

#include "graph/errors.h"

namespace snapstream::graph {
namespace {

// Messages name fields as configs/models spells them (n_layers, vocab_size, ...).

void check_range(const char* field, int64_t value, int64_t max) {
  if (value <= 0 || value > max)
    throw ShapeError(std::string(field) + " = " + std::to_string(value) + " is outside 1.." + std::to_string(max));
}

void check_latent(const ModelShape& s) {
  for (const int64_t width : {s.mla.q_lora_rank, s.mla.kv_lora_rank, s.mla.qk_nope_head_dim, s.mla.qk_rope_head_dim, s.mla.v_head_dim})
    check_range("a latent attention width", width, 1 << 16);
}

void check_experts(const ModelShape& s) {
  const ExpertShape& m = s.moe;
  check_range("expert_hidden_dim", m.expert_hidden_dim, 1 << 18);
  check_range("experts_per_token", m.experts_per_token, m.routed_experts);
  if (m.dense_layers < 0 || m.dense_layers > s.layers || m.shared_experts < 0 || m.routed_experts > (1 << 16))
    throw ShapeError("the moe section is inconsistent (dense layers, shared experts or experts per token)");
}

}  // namespace

void ModelShape::finalise() {
  check_range("dim", dim, 1 << 16);
  check_range("hidden_dim", hidden_dim, 1 << 18);
  check_range("n_layers", layers, 1024);
  check_range("n_heads", heads, 1024);
  check_range("vocab_size", vocab, 1 << 22);
  check_range("context_length", context_length, 1 << 22);
  if (!(rope_theta > 0.0f) || !std::isfinite(rope_theta)) throw ShapeError("rope_theta must be a positive number");
  if (!(norm_eps > 0.0f) || !std::isfinite(norm_eps)) throw ShapeError("norm_eps must be a positive number");
  if (moe.enabled()) check_experts(*this);
  if (attention == AttentionKind::Latent) {
    check_latent(*this);
    return;
  }
  check_range("n_kv_heads", kv_heads, 1024);
  if (head_dim == 0 && dim % heads != 0)
    throw ShapeError("dim " + std::to_string(dim) + " is not divisible by n_heads " + std::to_string(heads) + " (set head_dim)");
  if (heads % kv_heads != 0)
    throw ShapeError("n_heads " + std::to_string(heads) + " is not a multiple of n_kv_heads " + std::to_string(kv_heads));
  if (head_dim == 0) head_dim = dim / heads;
  check_range("the query width n_heads * head_dim", heads * head_dim, 1 << 16);
  check_range("head_dim", head_dim, 1 << 12);
  if (head_dim % 2 != 0) throw ShapeError("head_dim " + std::to_string(head_dim) + " must be even for RoPE");
}

}  // namespace snapstream::graph
