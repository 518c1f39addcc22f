// Writes a loaded model as a GGUF file, e.g. a llama2.c checkpoint with its tokenizer, so one
// file carries the weights, the shape and the vocabulary.
#pragma once

#include <string>

#include "runtime/model.h"

namespace snapstream::runtime {

// Writes `model` to `path` with its tensors in their stored types and its SentencePiece
// vocabulary; loading the file gives the same weights and tokenizer. Throws ConfigError for
// what the layout does not hold (byte-level BPE vocabularies, per-pair rope divisors, weights
// that are not packed rows) and Error when the file cannot be written.
void write_model_gguf(const Model& model, const std::string& name, const std::string& path);

}  // namespace snapstream::runtime
