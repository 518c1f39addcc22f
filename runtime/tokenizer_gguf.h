// The tokenizer a GGUF file describes in its tokenizer.ggml.* metadata, for model files and
// vocabulary-only files alike.
#pragma once

#include <string>

#include "runtime/gguf_file.h"
#include "runtime/tokenizer.h"

namespace snapstream::runtime {

// Throws ModelFileError naming the key for a missing or malformed entry, and for an
// unsupported tokenizer model (supported: llama, gpt2). An unknown pre-tokenizer loads with
// GPT-2's rules and a warning.
Tokenizer read_gguf_tokenizer(const GgufFile& gguf);

// A vocabulary-only (or any) GGUF file's tokenizer.
Tokenizer load_gguf_tokenizer(const std::string& path);

}  // namespace snapstream::runtime
