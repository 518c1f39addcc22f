// Fuzz target: arbitrary bytes through both tokenizer kinds (SentencePiece: llama-spm; byte-level
// BPE: gpt-2 and qwen2-style rules) as text to encode, with and without special parsing, and as
// token ids to decode. Invalid UTF-8 must be handled, ids out of range refused as input errors.
#include <cstring>
#include <vector>

#include "runtime/errors.h"
#include "runtime/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

using namespace snapstream;

namespace {

const std::vector<runtime::Tokenizer>& tokenizers() {
  static const std::vector<runtime::Tokenizer> all = (fuzz::quiet_logs(), fuzz::load_vocabularies({"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-deepseek-coder.gguf"}));
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& tokenizer = tokenizers()[data[0] % tokenizers().size()];
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  const bool special = (data[0] / 4) % 2 == 1;
  const auto ids = tokenizer.encode(text, special, special);
  (void)tokenizer.decode(ids, special);
  // The same bytes as token ids, most in range.
  std::vector<int32_t> raw((size - 1) / 4);
  if (!raw.empty()) std::memcpy(raw.data(), data + 1, raw.size() * 4);
  for (auto& id : raw) id = static_cast<int32_t>(static_cast<uint32_t>(id) % static_cast<uint32_t>(tokenizer.vocab_size() + 8));
  try {
    tokenizer.check_ids(raw);
    (void)tokenizer.decode(raw, special);
  } catch (const runtime::InputError&) {
  }
  return 0;
}
