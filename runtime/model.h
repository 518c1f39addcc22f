// A loaded model: its shape, weight views (into the mapped file where possible) and tokenizer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/model_shape.h"
#include "kernels/weight_view.h"
#include "runtime/mapped_file.h"
#include "runtime/tokenizer.h"

namespace snapstream::runtime {

struct LayerWeights {
  const float* attention_norm = nullptr;  // [dim]
  kernels::WeightView wq, wk, wv, wo;     // [q_dim][dim], [kv_dim][dim] x2, [dim][q_dim]
  const float* bq = nullptr;              // [q_dim], [kv_dim], [kv_dim]: Qwen2's biases, else null
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;              // [dim], or null
  const float* mlp_norm = nullptr;        // [dim]
  kernels::WeightView w_gate, w_up;       // [hidden][dim]
  kernels::WeightView w_down;             // [dim][hidden]
};

struct ModelWeights {
  kernels::WeightView token_embedding;  // [vocab][dim]
  std::vector<LayerWeights> layers;
  const float* final_norm = nullptr;    // [dim]
  kernels::WeightView output;           // [vocab][dim]; the embedding when tied
  const float* rope_divisors = nullptr;  // [head_dim / 2] per-pair frequency divisors, or null

  // Bytes of the matrices a decode step reads once (all projections and the classifier).
  int64_t bytes_read_per_token() const;
  // Multiply-adds of those matrices for one token: the arithmetic a decode step does per sequence.
  int64_t multiply_adds_per_token() const;
  // The storage type of the layer matrices (the one graphs plan shard slices for).
  kernels::DType wq_dtype() const { return layers.empty() ? kernels::DType::F32 : layers.front().wq.dtype; }
};

class Model {
 public:
  graph::ModelShape shape;
  ModelWeights weights;
  Tokenizer tokenizer;
  std::string path;
  std::string format;  // "gguf" or "llama2.c"
  std::string chat_template;  // the file's tokenizer.chat_template (Jinja), empty when it has none

  // How the model rotates its queries and keys: the shape's base and pairing, the file's divisors.
  kernels::RopeSpec rope() const { return {shape.rope_theta, shape.rope_pairs, weights.rope_divisors}; }

  // Keeps the mapping and any converted (owned) tensors alive for the weight views.
  std::shared_ptr<const MappedFile> mapping;
  std::vector<std::vector<float>> owned_tensors;
};

// Loads a GGUF file or a llama2.c checkpoint (chosen by the file's magic). A llama2.c
// checkpoint needs its tokenizer file: `tokenizer_path`, else tok<vocab>.bin or tokenizer.bin
// beside it. Throws ModelFileError for any unusable file.
std::unique_ptr<Model> load_model(const std::string& path, const std::string& tokenizer_path = "");

}  // namespace snapstream::runtime
