// Small model shapes that tests build synthetic GGUF files from.
#pragma once

#include "runtime/model_config.h"

namespace snapstream::test {

// dim 64, two layers, GQA (4 query heads over 2 KV heads), untied output, vocabulary 300.
inline ModelConfig tiny_model_config() {
  ModelConfig c;
  c.name = "tiny";
  c.dim = 64;
  c.hidden_dim = 96;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.vocab_size = 300;
  c.context_length = 64;
  c.tied_embeddings = false;
  return c;
}

}  // namespace snapstream::test
