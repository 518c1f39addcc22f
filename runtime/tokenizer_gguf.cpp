// tokenizer.ggml.* into a Vocabulary: pieces, kinds, scores or merges, special ids, flags with
// the defaults llama.cpp uses when a key is missing, and the end-of-generation tokens.
#include "runtime/tokenizer_gguf.h"

#include <spdlog/spdlog.h>

#include "runtime/errors.h"
#include "runtime/mapped_file.h"

namespace snapstream::runtime {
namespace {

// GGUF's SentencePiece vocabularies spell a space as U+2581 ("▁").
std::string piece_text(const std::string& stored) {
  static const std::string kSpaceMark = "\xE2\x96\x81";
  std::string text;
  for (size_t i = 0; i < stored.size();) {
    if (stored.compare(i, kSpaceMark.size(), kSpaceMark) == 0) {
      text += ' ';
      i += kSpaceMark.size();
    } else {
      text += stored[i++];
    }
  }
  return text;
}

TokenKind kind_of(int64_t type) {
  switch (type) {
    case 2: return TokenKind::Unknown;
    case 3: return TokenKind::Control;
    case 4: return TokenKind::UserDefined;
    case 5: return TokenKind::Unused;
    case 6: return TokenKind::Byte;
    default: return TokenKind::Normal;
  }
}

class Reader {
 public:
  explicit Reader(const GgufFile& gguf) : gguf_(gguf) {}

  [[noreturn]] void fail(const std::string& problem) const { throw ModelFileError(gguf_.path(), problem); }

  const GgufValue::Array& strings(const char* key) const {
    const GgufValue* value = gguf_.find(key);
    if (value == nullptr || value->as_array() == nullptr || value->element_type() != GgufValueType::String)
      fail(std::string("metadata key '") + key + "' must be an array of strings");
    return *value->as_array();
  }

  // An array with one entry per token, or null when the key is absent.
  const GgufValue::Array* per_token(const char* key, GgufValueType type, size_t n) const {
    const GgufValue* value = gguf_.find(key);
    if (value == nullptr) return nullptr;
    if (value->as_array() == nullptr || value->element_type() != type || value->as_array()->size() != n)
      fail(std::string("metadata key '") + key + "' must be an array of " + std::string(gguf_value_type_name(type)) +
           " with one entry per token (" + std::to_string(n) + ")");
    return value->as_array();
  }

  bool flag(const char* key, bool fallback) const {
    const GgufValue* value = gguf_.find(key);
    if (value == nullptr) return fallback;
    const auto truth = value->as_bool();
    if (!truth) fail(std::string("metadata key '") + key + "' must be a boolean, got " + value->to_display());
    return *truth;
  }

  // A token id from `key`, `fallback` when absent; -1 stays "none".
  int32_t token_id(const char* key, int64_t fallback, size_t n) const {
    const GgufValue* value = gguf_.find(key);
    int64_t id = fallback;
    if (value != nullptr) {
      const auto number = value->as_int();
      if (!number) fail(std::string("metadata key '") + key + "' must be an integer");
      id = *number;
    }
    if (id < -1 || id >= static_cast<int64_t>(n))
      fail(std::string("metadata key '") + key + "' = " + std::to_string(id) + " is outside the vocabulary");
    return static_cast<int32_t>(id);
  }

  std::string text(const char* key, const std::string& fallback) const {
    const GgufValue* value = gguf_.find(key);
    return value && value->as_string() ? *value->as_string() : fallback;
  }

 private:
  const GgufFile& gguf_;
};

}  // namespace

Tokenizer read_gguf_tokenizer(const GgufFile& gguf) {
  const Reader reader(gguf);
  const GgufValue* model_key = gguf.find("tokenizer.ggml.model");
  if (model_key == nullptr || model_key->as_string() == nullptr) reader.fail("missing metadata key 'tokenizer.ggml.model'");
  const std::string& model = *model_key->as_string();
  if (model != "llama" && model != "gpt2")
    reader.fail("tokenizer model '" + model + "' is not supported (supported: llama for SentencePiece, gpt2 for byte-level BPE)");
  const bool byte_pairs = model == "gpt2";

  const auto& tokens = reader.strings("tokenizer.ggml.tokens");
  const size_t n = tokens.size();
  if (n == 0) reader.fail("metadata key 'tokenizer.ggml.tokens' is empty");
  const auto* scores = reader.per_token("tokenizer.ggml.scores", GgufValueType::Float32, n);
  const auto* types = reader.per_token("tokenizer.ggml.token_type", GgufValueType::Int32, n);

  Vocabulary v;
  v.model = byte_pairs ? TokenizerModel::BytePairs : TokenizerModel::SentencePiece;
  v.pieces.reserve(n);
  v.kinds.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const TokenKind kind = types ? kind_of(*(*types)[i].as_int()) : TokenKind::Normal;
    // SentencePiece spells spaces as U+2581; byte-level pieces stay in their alphabet.
    v.pieces.push_back(byte_pairs ? *tokens[i].as_string() : piece_text(*tokens[i].as_string()));
    v.kinds.push_back(kind);
  }
  if (!byte_pairs || scores != nullptr) {
    v.scores.reserve(n);
    for (size_t i = 0; i < n; ++i) v.scores.push_back(scores ? static_cast<float>(*(*scores)[i].as_double()) : 0.0f);
  }
  if (byte_pairs) {
    for (const GgufValue& merge : reader.strings("tokenizer.ggml.merges")) v.merges.push_back(*merge.as_string());
    v.pre = reader.text("tokenizer.ggml.pre", "default");
    if (!PreTokenizer::is_known(v.pre))
      spdlog::warn("{}: pre-tokenizer '{}' is unknown; using GPT-2's rules (known: {})", gguf.path(), v.pre,
                   PreTokenizer::known_names());
    // Llama 3 takes a word that is already a token as is, and starts with BOS.
    v.ignore_merges = v.pre == "llama-bpe" || v.pre == "llama3";
  }

  // Defaults as llama.cpp's: SentencePiece adds BOS and a space prefix, byte-level BPE adds
  // BOS only for Llama 3; ids 1/2 are SentencePiece's BOS/EOS, 11 GPT-2 style files' both.
  v.bos_id = reader.token_id("tokenizer.ggml.bos_token_id", byte_pairs ? 11 : 1, n);
  v.eos_id = reader.token_id("tokenizer.ggml.eos_token_id", byte_pairs ? 11 : 2, n);
  v.unknown_id = reader.token_id("tokenizer.ggml.unknown_token_id", -1, n);
  if (v.bos_id < 0 || v.eos_id < 0) reader.fail("the vocabulary needs BOS and EOS token ids");
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
    if (const int32_t id = reader.token_id(key, -1, n); id >= 0) v.end_of_generation.push_back(id);
  v.add_bos = reader.flag("tokenizer.ggml.add_bos_token", !byte_pairs || v.ignore_merges);
  v.add_eos = reader.flag("tokenizer.ggml.add_eos_token", false);
  v.add_space_prefix = reader.flag("tokenizer.ggml.add_space_prefix", !byte_pairs);
  try {
    return Tokenizer(std::move(v));
  } catch (const Error& e) {
    reader.fail(e.what());
  }
}

Tokenizer load_gguf_tokenizer(const std::string& path) {
  const GgufFile gguf(std::make_shared<const MappedFile>(path));
  return read_gguf_tokenizer(gguf);
}

}  // namespace snapstream::runtime
