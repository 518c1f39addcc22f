// Random-weight Llama models written as GGUF, for benchmarks and tests where real weights of a
// given shape are not at hand. Their text is meaningless by construction.
#pragma once

#include <cstdint>
#include <string>

#include "graph/model_shape.h"
#include "kernels/dtype.h"
#include "runtime/tokenizer.h"

namespace snapstream::runtime {

struct SyntheticModelOptions {
  graph::ModelShape shape;
  kernels::DType dtype = kernels::DType::F32;  // of the 2-D weights; norms stay f32
  uint64_t seed = 0;
};

// A valid SentencePiece-style vocabulary of `size` tokens: <unk>, <s>, </s>, 256 byte tokens,
// then pieces that each extend a shorter piece by one character, so every piece is reachable
// by merges.
Tokenizer synthetic_tokenizer(int64_t size);

// Writes the model to `path`; throws Error on I/O failure or ConfigError for a bad shape.
void write_synthetic_model(const SyntheticModelOptions& options, const std::string& path);

}  // namespace snapstream::runtime
