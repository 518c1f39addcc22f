// The numbers a decoder graph is built from; no weights, so a graph can be built (and priced)
// for a model that exists only as a config. Llama-family models use grouped-query attention;
// DeepSeek-V3/R1 adds latent attention (MLA) and a mixture of experts (MoE).
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace snapstream::graph {

enum class AttentionKind : uint8_t { Grouped, Latent };

// DeepSeek's multi-head latent attention: queries and keys/values pass through low-rank
// latents, and the cache holds only the KV latent plus one shared RoPE key per token.
struct LatentAttentionShape {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;

  int64_t query_head_width() const { return qk_nope_head_dim + qk_rope_head_dim; }
  int64_t cached_width() const { return kv_lora_rank + qk_rope_head_dim; }  // values per token and layer
};

// A mixture of experts after `dense_layers` ordinary MLP layers: each token goes to
// experts_per_token of the routed experts, and always through the shared ones.
struct ExpertShape {
  int64_t dense_layers = 0;
  int64_t expert_hidden_dim = 0;
  int64_t routed_experts = 0;
  int64_t shared_experts = 0;
  int64_t experts_per_token = 0;

  bool enabled() const { return routed_experts > 0; }
};

struct DecoderShape {
  int64_t dim = 0;
  int64_t hidden_dim = 0;   // the dense MLP's width
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;     // grouped attention only
  int64_t head_dim = 0;     // grouped attention only
  int64_t vocab = 0;
  int64_t kv_capacity = 0;  // cache slots per sequence, C
  kernels::DType weight_dtype = kernels::DType::F32;
  kernels::DType kv_dtype = kernels::DType::F32;
  AttentionKind attention = AttentionKind::Grouped;
  LatentAttentionShape mla;
  ExpertShape moe;

  int64_t kv_dim() const { return kv_heads * head_dim; }
  // Cached values per token and layer: a key and a value per KV head, or MLA's latent.
  int64_t kv_values_per_token() const {
    return attention == AttentionKind::Latent ? mla.cached_width() : 2 * kv_dim();
  }
  bool expert_layer(int64_t layer) const { return moe.enabled() && layer >= moe.dense_layers; }
};

}  // namespace snapstream::graph
