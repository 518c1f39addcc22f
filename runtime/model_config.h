// The shape and hyper-parameters of a Llama-family decoder.
#pragma once

#include <cstdint>
#include <string>

namespace snapstream {

struct ModelConfig {
  std::string name;
  int64_t dim = 0;           // embedding width
  int64_t hidden_dim = 0;    // MLP width
  int64_t n_layers = 0;
  int64_t n_heads = 0;       // query heads
  int64_t n_kv_heads = 0;    // key/value heads (GQA when fewer than n_heads)
  int64_t vocab_size = 0;
  int64_t context_length = 0;
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;
  bool tied_embeddings = true;  // output projection shares the token embedding

  int64_t head_dim() const { return n_heads > 0 ? dim / n_heads : 0; }
  int64_t kv_dim() const { return head_dim() * n_kv_heads; }

  // Throws ConfigError describing the first inconsistent or out-of-range field.
  void validate() const;
};

}  // namespace snapstream
