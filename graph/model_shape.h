// The one shape of a decoder model, whatever it was read from (a config under configs/models,
// a GGUF or llama2.c header): the numbers its graphs are built from, and the ones its forward
// pass needs. No weights, so a graph can be built (and priced) for a model that exists only as
// a config. Llama-family models use grouped-query attention; DeepSeek-V3/R1 adds latent
// attention (MLA) and a mixture of experts (MoE).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/dtype.h"
#include "kernels/rope.h"

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

struct ModelShape {
  std::string name;
  // The GGUF architecture its files declare: llama (also Mistral, TinyLlama), qwen2 (llama with
  // q/k/v biases and half-split RoPE pairs) or deepseek.
  std::string architecture = "llama";
  int64_t dim = 0;             // embedding width
  int64_t hidden_dim = 0;      // the dense MLP's width
  int64_t layers = 0;
  int64_t heads = 0;           // query heads
  int64_t kv_heads = 0;        // key/value heads, fewer than heads for GQA (grouped attention only)
  int64_t head_dim = 0;        // grouped attention only; finalise() makes 0 into dim / heads
                               // (heads · head_dim may differ from dim)
  int64_t vocab = 0;
  int64_t context_length = 0;  // the longest sequence the model was trained for
  float rope_theta = 10000.0f;
  kernels::RopePairs rope_pairs = kernels::RopePairs::Adjacent;
  bool attention_bias = false;         // the q, k and v projections add a bias (Qwen2)
  bool attention_output_bias = false;  // the output projection adds one
  float norm_eps = 1e-5f;
  bool tied_embeddings = true;  // the output projection shares the token embedding
  kernels::DType weight_dtype = kernels::DType::F32;
  kernels::DType kv_dtype = kernels::DType::F32;
  AttentionKind attention = AttentionKind::Grouped;
  LatentAttentionShape mla;
  ExpertShape moe;
  // Cache entries per sequence, C, that graphs are built for: not the model's, so 0 until the
  // runtime or the simulation sets it.
  int64_t kv_capacity = 0;

  int64_t kv_dim() const { return kv_heads * head_dim; }
  bool expert_layer(int64_t layer) const { return moe.enabled() && layer >= moe.dense_layers; }
  // Llama-family: grouped attention and dense MLPs, what the CPU engine runs.
  bool runs_on_cpu() const { return attention == AttentionKind::Grouped && !moe.enabled(); }

  // Fills in what follows from the rest (head_dim = dim / heads when 0), then throws ShapeError
  // for the first field out of range or inconsistent with the others. The ranges keep every
  // size derived from the shape far from overflow, so a shape read from a file is safe to use.
  void finalise();
};

}  // namespace snapstream::graph
