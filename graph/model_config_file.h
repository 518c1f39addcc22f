// The one reader of model configs (configs/models/*.json): the served model, `make-model` and
// the simulator all read a config through it, into the one ModelShape, so the model the CPU
// runs and its emulated twin cannot drift apart.
#pragma once

#include <filesystem>

#include "graph/model_shape.h"

namespace snapstream::graph {

// Reads a Llama-family ("architecture": "llama", the default, or "qwen2": q/k/v biases and
// half-split RoPE pairs) or DeepSeek ("deepseek": latent attention and experts) config. Keys:
// name (default: the file's stem), dim, n_layers, n_heads, vocab_size, context_length; llama
// and qwen2: hidden_dim, n_kv_heads (default n_heads), head_dim (default dim / n_heads); deepseek: mla
// and moe sections; optional rope_theta, norm_eps, tied_embeddings (default true), weight_dtype
// and kv_dtype (default bf16). Unknown keys are allowed, for notes and sources. Throws
// ShapeError "FILE: problem" for a file that cannot be read, a missing or mistyped key, an
// unknown architecture or dtype, or a shape finalise() refuses.
ModelShape read_model_config(const std::filesystem::path& path);

}  // namespace snapstream::graph
