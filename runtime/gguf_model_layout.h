// How a Llama-family model is laid out in a GGUF file: its shape's metadata keys, a SentencePiece
// vocabulary's keys, and its tensors under llama.cpp's names in llama.cpp's order. Shared by the
// writers of random-weight models and of converted ones, so both write the files the loader reads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "graph/model_shape.h"
#include "kernels/dtype.h"
#include "runtime/gguf_writer.h"
#include "runtime/tokenizer.h"

namespace snapstream::runtime {

// llama.cpp's general.file_type code of a model whose matrices are all `dtype`.
uint32_t gguf_file_type(kernels::DType dtype);

// The general.* and {arch}.* keys of `shape` (finalised), named `name`, with llama.cpp's
// general.file_type code.
void add_shape_metadata(GgufWriter& writer, const graph::ModelShape& shape, const std::string& name, uint32_t file_type);

// The tokenizer.ggml.* keys of a SentencePiece vocabulary (pieces with '▁' for spaces, scores,
// token types, special ids and flags). Throws ConfigError for a byte-level BPE vocabulary.
void add_sentence_piece_metadata(GgufWriter& writer, const Tokenizer& tokenizer);

enum class TensorRole : uint8_t {
  Embedding, AttentionNorm, Query, Key, Value, QueryBias, KeyBias, ValueBias, Output, OutputBias,
  MlpNorm, Gate, Up, Down, FinalNorm, Classifier
};

// One tensor of the layout: a matrix of rows x cols, or a vector of `cols` values (norms, biases).
struct TensorSlot {
  std::string name;       // "blk.3.attn_q.weight"
  TensorRole role = TensorRole::Embedding;
  int64_t layer = -1;     // -1 outside the layers
  int64_t rows = 1;
  int64_t cols = 0;
  bool matrix = false;
  // The matrices llama.cpp's Q4_K_M recipe gives more bits: attn_v and ffn_down in its favoured
  // layers, and the classifier (or the tied embedding).
  bool favoured = false;
};

// Calls `visit` with every tensor of `shape` (finalised) in file order: the embedding, each
// layer's norms, projections and biases, the final norm, and the classifier unless tied.
void for_each_tensor_slot(const graph::ModelShape& shape, const std::function<void(const TensorSlot&)>& visit);

}  // namespace snapstream::runtime
