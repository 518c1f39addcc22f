// Small model shapes that tests build synthetic GGUF files from.
#pragma once

#include "graph/model_shape.h"

namespace snapstream::test {

// dim 64, two layers, GQA (4 query heads over 2 KV heads), untied output, vocabulary 300.
inline graph::ModelShape tiny_model_shape() {
  graph::ModelShape c;
  c.name = "tiny";
  c.dim = 64;
  c.hidden_dim = 96;
  c.layers = 2;
  c.heads = 4;
  c.kv_heads = 2;
  c.vocab = 300;
  c.context_length = 64;
  c.tied_embeddings = false;
  c.finalise();
  return c;
}

}  // namespace snapstream::test
