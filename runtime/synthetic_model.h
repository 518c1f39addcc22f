// Random-weight Llama-family models (llama, qwen2) written as GGUF, for benchmarks and tests
// where real weights of a given shape are not at hand. Their text is meaningless by construction.
#pragma once

#include <cstdint>
#include <string>

#include "graph/model_shape.h"
#include "kernels/dtype.h"
#include "runtime/tokenizer.h"

namespace snapstream::runtime {

struct SyntheticModelOptions {
  graph::ModelShape shape;
  kernels::DType dtype = kernels::DType::F32;  // of the 2-D weights; norms and biases stay f32
  uint64_t seed = 0;
  // llama.cpp's Q4_K_M recipe instead of one dtype: Q6_K for the output (or tied embedding) and
  // for attn_v and ffn_down in the layers it favours, Q4_K elsewhere; rows that are not whole
  // 256-blocks fall back to Q5_0 (for Q4_K) and Q8_0 (for Q6_K), as that tool does.
  bool q4_k_m = false;
};

// A valid SentencePiece-style vocabulary of `size` tokens: <unk>, <s>, </s>, 256 byte tokens,
// then pieces that each extend a shorter piece by one character, so every piece is reachable
// by merges.
Tokenizer synthetic_tokenizer(int64_t size);

// Writes the model to `path`; throws Error on I/O failure or ConfigError for a bad shape.
void write_synthetic_model(const SyntheticModelOptions& options, const std::string& path);

}  // namespace snapstream::runtime
